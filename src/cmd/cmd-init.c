/* apt2ostree init — create the repository. */
#include "config.h"

#include "cmd/cmd.h"
#include "store/repo.h"

gboolean
cmd_init (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
          GError **error)
{
  g_autofree char *mode = NULL;
  const GOptionEntry entries[] = {
    { "mode", 0, 0, G_OPTION_ARG_STRING, &mode,
      "bare, bare-user or archive (default: bare as root, bare-user otherwise)", "MODE" },
    { NULL }
  };
  if (!cmd_parse (inv, "", "Create an OSTree repository (nothing happens when it exists).",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 1)
    return cmd_usage_error (inv, error, "unexpected argument \"%s\"", argv[1]);

  g_autoptr(OstreeRepo) repo = repo_ensure (cmd_repo_path (inv), mode,
                                            cancellable, error);
  return repo != NULL;
}
