/* apt2ostree mkdir — add directories to a tree, metadata only. */
#include "config.h"

#include "cmd/cmd.h"
#include "store/tree.h"
#include "base/util.h"

static gboolean
parse_owner (const char *text, guint32 *uid, guint32 *gid, GError **error)
{
  g_auto(GStrv) parts = g_strsplit (text, ":", -1);
  guint64 u, g;
  if (g_strv_length (parts) != 2
      || !g_ascii_string_to_unsigned (parts[0], 10, 0, G_MAXUINT32, &u, NULL)
      || !g_ascii_string_to_unsigned (parts[1], 10, 0, G_MAXUINT32, &g, NULL))
    return util_fail (error, "--owner \"%s\": expected numeric UID:GID, e.g. 0:0", text);
  *uid = u;
  *gid = g;
  return TRUE;
}

gboolean
cmd_mkdir (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
           GError **error)
{
  g_autofree char *out_ref = NULL;
  g_autofree char *mode_text = NULL;
  g_autofree char *owner_text = NULL;
  gboolean parents = FALSE;
  const GOptionEntry entries[] = {
    { "ref", 0, 0, G_OPTION_ARG_STRING, &out_ref, "Write the result to this ref", "OUT" },
    { "mode", 0, 0, G_OPTION_ARG_STRING, &mode_text, "Octal mode of the new directories (default 0755)", "MODE" },
    { "owner", 0, 0, G_OPTION_ARG_STRING, &owner_text, "Numeric owner (default 0:0)", "UID:GID" },
    { "parents", 'p', 0, G_OPTION_ARG_NONE, &parents,
      "Create missing parents (0755 root:root); an existing directory is fine", NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "--ref OUT IN PATH...", "Add directories to the tree IN, by metadata only.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc < 3)
    return cmd_usage_error (inv, error, "expected IN and at least one PATH");

  TreeMkdirOptions options = { 0, 0, 0755, parents };
  guint64 mode;
  if (mode_text != NULL
      && (!g_ascii_string_to_unsigned (mode_text, 8, 0, 07777, &mode, NULL)))
    return cmd_usage_error (inv, error, "--mode \"%s\": expected an octal mode such as 0755", mode_text);
  if (mode_text != NULL)
    options.mode = mode;
  if (owner_text != NULL && !parse_owner (owner_text, &options.uid, &options.gid, error))
    return FALSE;

  g_auto(CmdEdit) edit = { NULL };
  if (!cmd_edit_begin (inv, out_ref, argv[1], &edit, cancellable, error))
    return FALSE;
  for (int i = 2; i < argc; i++)
    if (!tree_mkdir (repo_txn_sink (edit.txn), edit.tree, argv[i], &options, cancellable, error))
      {
        g_prefix_error (error, "%s: ", edit.in->name);
        return FALSE;
      }
  return cmd_edit_finish (inv, &edit, out_ref, NULL, cancellable, error);
}
