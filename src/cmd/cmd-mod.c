/* apt2ostree mod — run a command over a tree in a sandbox, commit what it
 * changed. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "sandbox/mod.h"

/* Options that take two arguments (GOption takes one): --bind SRC DEST,
 * --ro-bind SRC DEST, --setenv VAR VALUE.  Taken out of ARGV before the rest
 * is parsed. */
typedef struct {
  const char *name;
  GPtrArray *values;
} PairOption;

static gboolean
take_pairs (CmdInvocation *inv, int *argc, char **argv, PairOption *pairs, guint n_pairs,
            GError **error)
{
  int out = 0;
  for (int i = 0; i < *argc; i++)
    {
      PairOption *match = NULL;
      for (guint p = 0; p < n_pairs; p++)
        if (g_str_equal (argv[i], pairs[p].name))
          match = &pairs[p];
      if (match == NULL)
        {
          argv[out++] = argv[i];
          continue;
        }
      if (i + 2 >= *argc)
        return cmd_usage_error (inv, error, "%s takes two arguments", match->name);
      g_ptr_array_add (match->values, argv[i + 1]);
      g_ptr_array_add (match->values, argv[i + 2]);
      i += 2;
    }
  argv[out] = NULL;
  *argc = out;
  return TRUE;
}

static gboolean
pair_in_help (const char *option_name, const char *value, gpointer data, GError **error)
{
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
               "%s takes two arguments, separated by a space", option_name);
  return FALSE;
}

gboolean
cmd_mod (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
         GError **error)
{
  /* Everything after "--" is the command. */
  int cmd_start = -1;
  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--"))
      {
        cmd_start = i;
        break;
      }
  int opt_argc = cmd_start >= 0 ? cmd_start : argc;
  g_autofree char **opt_argv = g_new0 (char *, opt_argc + 1);
  memcpy (opt_argv, argv, opt_argc * sizeof (char *));

  g_autoptr(GPtrArray) binds = g_ptr_array_new ();
  g_autoptr(GPtrArray) ro_binds = g_ptr_array_new ();
  g_autoptr(GPtrArray) setenv = g_ptr_array_new ();
  PairOption pairs[] = { { "--bind", binds }, { "--ro-bind", ro_binds },
                         { "--setenv", setenv } };
  if (!take_pairs (inv, &opt_argc, opt_argv, pairs, G_N_ELEMENTS (pairs), error))
    return FALSE;

  g_autofree char *out_ref = NULL;
  g_autofree char *capture = NULL;
  g_autofree char *workdir = NULL;
  gboolean chroot = FALSE, network = FALSE, keep = FALSE, verbose = FALSE;
  const GOptionEntry entries[] = {
    { "ref", 0, 0, G_OPTION_ARG_STRING, &out_ref, "Write the result to this ref", "OUT" },
    { "chroot", 0, 0, G_OPTION_ARG_NONE, &chroot,
      "The tree is / (with /dev, /proc, /tmp, /run from the sandbox); else it is /work "
      "over the host's /usr, read-only", NULL },
    { "capture-subdir", 0, 0, G_OPTION_ARG_STRING, &capture,
      "OUT is this directory of the tree after the command", "PATH" },
    { "workdir", 0, 0, G_OPTION_ARG_FILENAME, &workdir,
      "Scratch directory, on the repository's filesystem (default: REPO/tmp)", "DIR" },
    { "bind", 0, 0, G_OPTION_ARG_CALLBACK, pair_in_help,
      "Bind the host's SRC on DEST in the sandbox (not committed)", "SRC DEST" },
    { "ro-bind", 0, 0, G_OPTION_ARG_CALLBACK, pair_in_help, "The same, read-only",
      "SRC DEST" },
    { "setenv", 0, 0, G_OPTION_ARG_CALLBACK, pair_in_help,
      "Set an environment variable for the command", "VAR VALUE" },
    { "network", 0, 0, G_OPTION_ARG_NONE, &network, "Share the host's network", NULL },
    { "keep-on-failure", 0, 0, G_OPTION_ARG_NONE, &keep,
      "Keep the scratch directory when the command fails", NULL },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose,
      "Show the command's output as it runs (it is kept quiet otherwise), and the time "
      "each step took", NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "--ref OUT IN [OPTION...] -- COMMAND [ARG...]",
                  "Run COMMAND over the tree IN in a bubblewrap sandbox and commit the tree\n"
                  "it leaves to OUT.  IN is checked out by hardlinks under an overlay, so the\n"
                  "repository is never written through; only what the command changed is read\n"
                  "back.  The environment holds only PATH, LC_ALL=C.UTF-8, SOURCE_DATE_EPOCH\n"
                  "and what --setenv adds; there is no network unless --network.",
                  entries, &opt_argc, &opt_argv, error))
    return FALSE;
  if (out_ref == NULL)
    return cmd_usage_error (inv, error, "--ref OUT is required");
  if (opt_argc != 2)
    return cmd_usage_error (inv, error, opt_argc < 2 ? "expected IN" : "expected one IN");
  if (cmd_start < 0 || cmd_start + 1 >= argc)
    return cmd_usage_error (inv, error, "expected -- COMMAND after IN");

  g_ptr_array_add (binds, NULL);
  g_ptr_array_add (ro_binds, NULL);
  g_ptr_array_add (setenv, NULL);
  ModOptions options = {
    .in = opt_argv[1],
    .out_ref = out_ref,
    .chroot = chroot,
    .capture_subdir = capture,
    .workdir = workdir,
    .binds = (const char *const *) binds->pdata,
    .ro_binds = (const char *const *) ro_binds->pdata,
    .setenv = (const char *const *) setenv->pdata,
    .network = network,
    .keep_on_failure = keep,
    .verbose = verbose,
    .argv = argv + cmd_start + 1,
  };
  ModTimings timings = { 0, };
  if (verbose)
    options.timings = &timings;

  g_autoptr(OstreeRepo) repo = cmd_open_repo (inv, cancellable, error);
  if (repo == NULL)
    return FALSE;
  g_autofree char *commit = NULL;
  if (!mod_run (repo, &options, &commit, cancellable, error))
    return FALSE;
  if (verbose)
    fprintf (stderr, "apt2ostree mod: checkout %.3f s, command %.3f s, commit %.3f s, "
             "cleanup %.3f s\n", timings.checkout, timings.command, timings.commit,
             timings.cleanup);
  printf ("%s\n", commit);
  return TRUE;
}
