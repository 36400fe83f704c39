/* apt2ostree run — a shell or a command inside an image, in the sandbox
 * stage 2 uses; nothing is committed unless --commit. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "sandbox/mod.h"

/* --bind SRC:DST as the SRC, DST pairs mod_run takes, NULL-terminated. */
static gboolean
split_binds (CmdInvocation *inv, char **binds, GPtrArray *pairs, GError **error)
{
  for (char **b = binds; b != NULL && *b != NULL; b++)
    {
      const char *colon = strrchr (*b, ':');
      if (colon == NULL || colon == *b || colon[1] != '/')
        return cmd_usage_error (inv, error, "--bind %s: expected SRC:DST, DST an absolute path "
                                "in the image", *b);
      g_ptr_array_add (pairs, g_strndup (*b, colon - *b));
      g_ptr_array_add (pairs, g_strdup (colon + 1));
    }
  g_ptr_array_add (pairs, NULL);
  return TRUE;
}

gboolean
cmd_run (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable, GError **error)
{
  /* Everything after "--" is the command, options included. */
  int opt_argc = 0;
  g_autofree char **opt_argv = NULL;
  int cmd_start = cmd_split_at_command (argc, argv, &opt_argc, &opt_argv);
  if (cmd_start < 0)
    cmd_start = argc;

  g_autofree char *commit_ref = NULL;
  g_auto(GStrv) binds = NULL;
  gboolean network = FALSE, keep = FALSE;
  const GOptionEntry entries[] = {
    { "commit", 0, 0, G_OPTION_ARG_STRING, &commit_ref,
      "When the command exits with status 0, commit the image it leaves to REF", "REF" },
    { "bind", 0, 0, G_OPTION_ARG_STRING_ARRAY, &binds,
      "Bind the host's SRC on DST in the image (never committed)", "SRC:DST" },
    { "network", 0, 0, G_OPTION_ARG_NONE, &network, "Share the host's network", NULL },
    { "keep-on-failure", 0, 0, G_OPTION_ARG_NONE, &keep,
      "Keep the scratch directory when the command fails", NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "IMAGE [OPTION...] [-- COMMAND [ARG...]]",
                  "Run COMMAND (default: /bin/sh) inside IMAGE, a ref or commit, in the sandbox\n"
                  "stage 2 uses: the image is / under an overlay (checked out by hardlinks,\n"
                  "never written through), with /dev, /proc, /tmp and /run from the sandbox,\n"
                  "and no network unless --network.  The command has this terminal.  What it\n"
                  "changes is thrown away unless --commit REF.",
                  entries, &opt_argc, &opt_argv, error))
    return FALSE;
  if (opt_argc != 2)
    return cmd_usage_error (inv, error, opt_argc < 2 ? "expected IMAGE" : "expected one IMAGE "
                            "(put the command after --)");
  if (cmd_start < argc && cmd_start + 1 >= argc)
    return cmd_usage_error (inv, error, "expected COMMAND after --");
  g_autoptr(GPtrArray) pairs = g_ptr_array_new_with_free_func (g_free);
  if (!split_binds (inv, binds, pairs, error))
    return FALSE;

  char *shell[] = { (char *) "/bin/sh", NULL };
  ModOptions options = {
    .in = opt_argv[1],
    .out_ref = commit_ref,
    .chroot = TRUE,
    .binds = (const char *const *) pairs->pdata,
    .network = network,
    .keep_on_failure = keep,
    .terminal = TRUE,
    .argv = cmd_start < argc ? argv + cmd_start + 1 : shell,
  };
  g_autoptr(OstreeRepo) repo = cmd_open_repo (inv, cancellable, error);
  if (repo == NULL)
    return FALSE;
  g_autofree char *commit = NULL;
  if (!mod_run (repo, &options, &commit, cancellable, error))
    return FALSE;
  if (commit != NULL)
    fprintf (stderr, "apt2ostree run: %s: commit %s\n", commit_ref, commit);
  return TRUE;
}
