/* apt2ostree mod — run a command over a tree in a sandbox, commit what it
 * changed. */
#include "config.h"

#include <stdio.h>

#include "cmd/cmd.h"
#include "sandbox/mod.h"

/* The command line: the options before "--" (PAIRS taken out), the
 * command after it. */
typedef struct {
  int opt_argc;
  char **opt_argv;       /* argv[0] and the options, NULL-terminated */
  int cmd_start;         /* the index of "--" in argv, or -1 */
  GPtrArray *binds, *ro_binds, *setenv;   /* SRC, DEST, SRC, DEST, … */
  char *out_ref, *capture, *workdir;
  gboolean chroot, network, keep, verbose;
  char *timeout, *memory_limit, *max_processes;
  RunLimits limits;
} ModArgs;

static void
mod_args_clear (ModArgs *a)
{
  g_free (a->opt_argv);
  g_clear_pointer (&a->binds, g_ptr_array_unref);
  g_clear_pointer (&a->ro_binds, g_ptr_array_unref);
  g_clear_pointer (&a->setenv, g_ptr_array_unref);
  g_free (a->out_ref);
  g_free (a->capture);
  g_free (a->workdir);
  g_free (a->timeout);
  g_free (a->memory_limit);
  g_free (a->max_processes);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ModArgs, mod_args_clear)

/* Everything after "--" is the command; the pairs go before GOption sees
 * the rest. */
static gboolean
split_at_command (CmdInvocation *inv, int argc, char **argv, ModArgs *a, GError **error)
{
  a->cmd_start = cmd_split_at_command (argc, argv, &a->opt_argc, &a->opt_argv);
  a->binds = g_ptr_array_new ();
  a->ro_binds = g_ptr_array_new ();
  a->setenv = g_ptr_array_new ();
  CmdPairOption pairs[] = { { "--bind", a->binds }, { "--ro-bind", a->ro_binds },
                            { "--setenv", a->setenv } };
  return cmd_take_pairs (inv, &a->opt_argc, a->opt_argv, pairs, G_N_ELEMENTS (pairs), error);
}

static gboolean
parse_options (CmdInvocation *inv, int argc, ModArgs *a, GError **error)
{
  const GOptionEntry entries[] = {
    { "ref", 0, 0, G_OPTION_ARG_STRING, &a->out_ref, "Write the result to this ref", "OUT" },
    { "chroot", 0, 0, G_OPTION_ARG_NONE, &a->chroot,
      "The tree is / (with /dev, /proc, /tmp, /run from the sandbox); else it is /work "
      "over the host's /usr, read-only", NULL },
    { "capture-subdir", 0, 0, G_OPTION_ARG_STRING, &a->capture,
      "OUT is this directory of the tree after the command", "PATH" },
    { "workdir", 0, 0, G_OPTION_ARG_FILENAME, &a->workdir,
      "Scratch directory, on the repository's filesystem (default: REPO/tmp)", "DIR" },
    { "bind", 0, 0, G_OPTION_ARG_CALLBACK, cmd_pair_option_callback,
      "Bind the host's SRC on DEST in the sandbox (not committed)", "SRC DEST" },
    { "ro-bind", 0, 0, G_OPTION_ARG_CALLBACK, cmd_pair_option_callback, "The same, read-only",
      "SRC DEST" },
    { "setenv", 0, 0, G_OPTION_ARG_CALLBACK, cmd_pair_option_callback,
      "Set an environment variable for the command", "VAR VALUE" },
    { "network", 0, 0, G_OPTION_ARG_NONE, &a->network, "Share the host's network", NULL },
    { "keep-on-failure", 0, 0, G_OPTION_ARG_NONE, &a->keep,
      "Keep the scratch directory when the command fails", NULL },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &a->verbose,
      "Show the command's output as it runs (it is kept quiet otherwise), and the time "
      "each step took", NULL },
    CMDLINE_LIMIT_OPTION_ENTRIES (a->timeout, a->memory_limit, a->max_processes),
    { NULL }
  };
  if (!cmd_parse (inv, "--ref OUT IN [OPTION...] -- COMMAND [ARG...]",
                  "Run COMMAND over the tree IN in a bubblewrap sandbox and commit the tree\n"
                  "it leaves to OUT.  IN is checked out by hardlinks under an overlay, so the\n"
                  "repository is never written through; only what the command changed is read\n"
                  "back.  The environment holds only PATH, LC_ALL=C.UTF-8, SOURCE_DATE_EPOCH\n"
                  "and what --setenv adds; there is no network unless --network.",
                  entries, &a->opt_argc, &a->opt_argv, error))
    return FALSE;
  if (a->out_ref == NULL)
    return cmd_usage_error (inv, error, "--ref OUT is required");
  if (a->opt_argc != 2)
    return cmd_usage_error (inv, error, a->opt_argc < 2 ? "expected IN" : "expected one IN");
  if (a->cmd_start < 0 || a->cmd_start + 1 >= argc)
    return cmd_usage_error (inv, error, "expected -- COMMAND after IN");
  return runlimits_init (&a->limits, a->timeout, a->memory_limit, a->max_processes, error);
}

/* The parsed command line as mod_run takes it (borrowing from A and
 * ARGV); the pair lists get their NULL ends here. */
static ModOptions
mod_options_from (ModArgs *a, char **argv)
{
  g_ptr_array_add (a->binds, NULL);
  g_ptr_array_add (a->ro_binds, NULL);
  g_ptr_array_add (a->setenv, NULL);
  return (ModOptions) {
    .in = a->opt_argv[1],
    .out_ref = a->out_ref,
    .chroot = a->chroot,
    .capture_subdir = a->capture,
    .workdir = a->workdir,
    .binds = (const char *const *) a->binds->pdata,
    .ro_binds = (const char *const *) a->ro_binds->pdata,
    .setenv = (const char *const *) a->setenv->pdata,
    .network = a->network,
    .keep_on_failure = a->keep,
    .verbose = a->verbose,
    .argv = argv + a->cmd_start + 1,
    .limits = &a->limits,
    .keep_same_tree = TRUE,
  };
}

gboolean
cmd_mod (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
         GError **error)
{
  g_auto(ModArgs) a = { 0 };
  if (!split_at_command (inv, argc, argv, &a, error) || !parse_options (inv, argc, &a, error))
    return FALSE;
  ModOptions options = mod_options_from (&a, argv);
  ModTimings timings = { 0, };
  g_autofree char *limits_held = NULL;
  if (a.verbose)
    {
      options.timings = &timings;
      options.limits_held = &limits_held;
    }

  g_autoptr(OstreeRepo) repo = cmd_open_repo (inv, cancellable, error);
  if (repo == NULL)
    return FALSE;
  g_autofree char *commit = NULL;
  gboolean ok = mod_run (repo, &options, &commit, cancellable, error);
  if (limits_held != NULL)
    fprintf (stderr, "apt2ostree mod: sandbox limits: %s\n", limits_held);
  if (!ok)
    return FALSE;
  if (a.verbose)
    fprintf (stderr, "apt2ostree mod: checkout %.3f s, command %.3f s, commit %.3f s, "
             "cleanup %.3f s\n", timings.checkout, timings.command, timings.commit,
             timings.cleanup);
  printf ("%s\n", commit);
  return TRUE;
}
