/* apt2ostree rm — remove paths from a tree, metadata only. */
#include "config.h"

#include "cmd/cmd.h"
#include "store/tree.h"

gboolean
cmd_rm (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
        GError **error)
{
  g_autofree char *out_ref = NULL;
  gboolean recursive = FALSE;
  gboolean force = FALSE;
  const GOptionEntry entries[] = {
    { "ref", 0, 0, G_OPTION_ARG_STRING, &out_ref, "Write the result to this ref", "OUT" },
    { "recursive", 'r', 0, G_OPTION_ARG_NONE, &recursive, "Remove directories and their contents", NULL },
    { "force", 'f', 0, G_OPTION_ARG_NONE, &force, "A missing PATH is not an error", NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "--ref OUT IN PATH...", "Remove paths from the tree IN.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc < 3)
    return cmd_usage_error (inv, error, "expected IN and at least one PATH");

  g_auto(CmdEdit) edit = { NULL };
  if (!cmd_edit_begin (inv, out_ref, argv[1], &edit, cancellable, error))
    return FALSE;
  for (int i = 2; i < argc; i++)
    if (!tree_remove (edit.tree, argv[i], recursive, force, error))
      {
        g_prefix_error (error, "%s: ", edit.in->name);
        return FALSE;
      }
  return cmd_edit_finish (inv, &edit, out_ref, NULL, cancellable, error);
}
