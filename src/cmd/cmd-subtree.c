/* apt2ostree subtree — a directory of a tree becomes the root of a new tree. */
#include "config.h"

#include "cmd/cmd.h"
#include "store/tree.h"
#include "base/util.h"

gboolean
cmd_subtree (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
             GError **error)
{
  g_autofree char *out_ref = NULL;
  const GOptionEntry entries[] = {
    { "ref", 0, 0, G_OPTION_ARG_STRING, &out_ref, "Write the result to this ref", "OUT" },
    { NULL }
  };
  if (!cmd_parse (inv, "--ref OUT IN PATH",
                  "The directory PATH of the tree IN becomes the root of OUT.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 3)
    return cmd_usage_error (inv, error, "expected IN and PATH");

  g_auto(CmdEdit) edit = { NULL };
  if (!cmd_edit_begin (inv, out_ref, argv[1], &edit, cancellable, error))
    return FALSE;

  g_autofree char *file = NULL, *contents = NULL, *meta = NULL;
  if (!tree_find (edit.repo, edit.in, argv[2], &file, &contents, &meta, error))
    {
      g_prefix_error (error, "%s: ", edit.in->name);
      return FALSE;
    }
  if (file != NULL)
    return util_fail (error, "%s: \"%s\" is not a directory", edit.in->name, argv[2]);

  g_object_unref (edit.tree);
  edit.tree = ostree_mutable_tree_new_from_checksum (edit.repo, contents, meta);
  return cmd_edit_finish (inv, &edit, out_ref, NULL, cancellable, error);
}
