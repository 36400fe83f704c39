/* apt2ostree publish — a build repository's refs into an archive repository
 * that a web server can serve (see store/publish.h). */
#include "config.h"

#include <stdio.h>

#include "graph/buildcache.h"
#include "cmd/cmd.h"
#include "store/publish.h"

gboolean
cmd_publish (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
             GError **error)
{
  g_autofree char *to = NULL;
  g_autofree char *key_id = NULL;
  g_autofree char *homedir = NULL;
  gboolean history = FALSE;
  g_autofree char *version = NULL;
  g_auto(GStrv) delta_from = NULL;
  gboolean no_deltas = FALSE;
  const GOptionEntry entries[] = {
    { "to", 0, 0, G_OPTION_ARG_FILENAME, &to,
      "The archive repository to write (made when missing); serve it with any web server", "DIR" },
    { "gpg-sign", 0, 0, G_OPTION_ARG_STRING, &key_id,
      "Sign the published commits and the summary with this GPG key", "KEY-ID" },
    { "gpg-homedir", 0, 0, G_OPTION_ARG_FILENAME, &homedir,
      "GnuPG home directory holding the key (default: gpg's)", "DIR" },
    { "history", 0, 0, G_OPTION_ARG_NONE, &history,
      "Publish each image ref as a new commit of the built tree whose parent is the one "
      "published before, with a version and a static delta from it (build refs stay as built)",
      NULL },
    { "version", 0, 0, G_OPTION_ARG_STRING, &version,
      "With --history: the version the new commits record (default: the previous version + 1, "
      "1 the first time)", "STRING" },
    { "delta-from", 0, 0, G_OPTION_ARG_STRING_ARRAY, &delta_from,
      "With --history: also write a static delta from REV (a ref or commit of DIR); repeatable",
      "REV" },
    { "no-deltas", 0, 0, G_OPTION_ARG_NONE, &no_deltas,
      "With --history: write no static delta", NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "--to DIR [--history] [REF...]",
                  "Copy REFs (default: every ref) of the repository into the archive repository\n"
                  "DIR, objects before refs, and write its summary, so that other machines pull\n"
                  "them with \"ostree pull\" from a web server serving DIR.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (to == NULL)
    return cmd_usage_error (inv, error, "--to DIR is required");
  if (homedir != NULL && key_id == NULL)
    return cmd_usage_error (inv, error, "--gpg-homedir goes with --gpg-sign");
  if (!history && (version != NULL || delta_from != NULL || no_deltas))
    return cmd_usage_error (inv, error, "--version, --delta-from and --no-deltas go with --history");
  if (no_deltas && delta_from != NULL)
    return cmd_usage_error (inv, error, "--delta-from and --no-deltas exclude each other");

  g_autoptr(OstreeRepo) repo = cmd_open_repo (inv, cancellable, error);
  if (repo == NULL)
    return FALSE;
  PublishOptions opts = { key_id, homedir, history, buildcache_is_build_ref, version,
                          (const char *const *) delta_from, no_deltas };
  guint count = 0, unchanged = 0;
  if (!publish_refs (repo, (const char *const *) argv + 1, to, &opts, &count, &unchanged,
                     cancellable, error))
    return FALSE;
  g_autofree char *already = unchanged > 0 ? g_strdup_printf (", %u already there", unchanged)
                                           : g_strdup ("");
  printf ("%s: %u ref%s published%s%s\n", to, count, count == 1 ? "" : "s", already,
          key_id != NULL ? ", signed" : "");
  return TRUE;
}
