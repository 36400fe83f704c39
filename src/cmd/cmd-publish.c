/* apt2ostree publish — a build repository's refs into an archive repository
 * that a web server can serve (see store/publish.h). */
#include "config.h"

#include <stdio.h>

#include "cmd/cmd.h"
#include "store/publish.h"

gboolean
cmd_publish (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
             GError **error)
{
  g_autofree char *to = NULL;
  g_autofree char *key_id = NULL;
  g_autofree char *homedir = NULL;
  const GOptionEntry entries[] = {
    { "to", 0, 0, G_OPTION_ARG_FILENAME, &to,
      "The archive repository to write (made when missing); serve it with any web server", "DIR" },
    { "gpg-sign", 0, 0, G_OPTION_ARG_STRING, &key_id,
      "Sign the published commits and the summary with this GPG key", "KEY-ID" },
    { "gpg-homedir", 0, 0, G_OPTION_ARG_FILENAME, &homedir,
      "GnuPG home directory holding the key (default: gpg's)", "DIR" },
    { NULL }
  };
  if (!cmd_parse (inv, "--to DIR [REF...]",
                  "Copy REFs (default: every ref) of the repository into the archive repository\n"
                  "DIR, objects before refs, and write its summary, so that other machines pull\n"
                  "them with \"ostree pull\" from a web server serving DIR.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (to == NULL)
    return cmd_usage_error (inv, error, "--to DIR is required");
  if (homedir != NULL && key_id == NULL)
    return cmd_usage_error (inv, error, "--gpg-homedir goes with --gpg-sign");

  g_autoptr(OstreeRepo) repo = cmd_open_repo (inv, cancellable, error);
  if (repo == NULL)
    return FALSE;
  PublishOptions opts = { key_id, homedir };
  guint count = 0;
  if (!publish_refs (repo, (const char *const *) argv + 1, to, &opts, &count, cancellable, error))
    return FALSE;
  printf ("%s: %u ref%s published%s\n", to, count, count == 1 ? "" : "s",
          key_id != NULL ? ", signed" : "");
  return TRUE;
}
