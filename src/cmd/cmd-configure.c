/* apt2ostree configure — stage 2: dpkg --configure -a over a stage-1 tree. */
#include "config.h"

#include <stdio.h>

#include "cmd/cmd.h"
#include "store/repo.h"
#include "sandbox/stage2.h"

gboolean
cmd_configure (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
               GError **error)
{
  g_autofree char *out_ref = NULL;
  g_auto(GStrv) hooks = NULL;
  gboolean verbose = FALSE;
  const GOptionEntry entries[] = {
    { "ref", 0, 0, G_OPTION_ARG_STRING, &out_ref, "Write the configured image to this ref", "OUT" },
    { "configure-hook", 0, 0, G_OPTION_ARG_STRING_ARRAY, &hooks,
      "A shell command run in the image just before dpkg --configure -a", "COMMAND" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "Show dpkg's output as it runs", NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "--ref OUT IN",
                  "Configure the stage-1 tree IN (from \"apt2ostree stage1\") in a bubblewrap\n"
                  "sandbox: base-passwd's users, the preinst scripts, the trigger database,\n"
                  "dpkg --configure -a with no services started, then the build residue cleaned.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 2)
    return cmd_usage_error (inv, error, "expected one IN");
  if (out_ref == NULL)
    return cmd_usage_error (inv, error, "--ref OUT is required");
  if (!repo_check_ref_name (out_ref, error))
    return FALSE;

  g_autoptr(OstreeRepo) repo = cmd_open_repo (inv, cancellable, error);
  if (repo == NULL)
    return FALSE;
  g_autoptr(RepoRev) in = repo_resolve (repo, argv[1], error);
  if (in == NULL)
    return FALSE;

  Stage2Options options = {
    .in = argv[1],
    .out_ref = out_ref,
    .hooks = (const char *const *) hooks,
    .verbose = verbose,
  };
  g_autofree char *commit = NULL;
  if (!stage2_configure (repo, &options, &commit, cancellable, error))
    return FALSE;
  printf ("%s\n", commit);
  return TRUE;
}
