/* apt2ostree ln — add a symlink to a tree, metadata only. */
#include "config.h"

#include "cmd/cmd.h"
#include "store/tree.h"

gboolean
cmd_ln (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
        GError **error)
{
  g_autofree char *out_ref = NULL;
  const GOptionEntry entries[] = {
    { "ref", 0, 0, G_OPTION_ARG_STRING, &out_ref, "Write the result to this ref", "OUT" },
    { NULL }
  };
  if (!cmd_parse (inv, "--ref OUT IN TARGET LINKPATH",
                  "Add the symlink LINKPATH -> TARGET (owned by root) to the tree IN.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 4)
    return cmd_usage_error (inv, error, "expected IN, TARGET and LINKPATH");

  g_auto(CmdEdit) edit = { NULL };
  if (!cmd_edit_begin (inv, out_ref, argv[1], &edit, cancellable, error))
    return FALSE;
  if (!tree_symlink (repo_txn_sink (edit.txn), edit.tree, argv[2], argv[3], cancellable, error))
    {
      g_prefix_error (error, "%s: ", edit.in->name);
      return FALSE;
    }
  return cmd_edit_finish (inv, &edit, out_ref, NULL, cancellable, error);
}
