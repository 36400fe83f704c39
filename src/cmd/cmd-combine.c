/* apt2ostree combine — union of trees, metadata only. */
#include "config.h"

#include "cmd/cmd.h"
#include "store/tree.h"

gboolean
cmd_combine (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
             GError **error)
{
  g_autofree char *out_ref = NULL;
  gboolean later_wins = FALSE;
  const GOptionEntry entries[] = {
    { "ref", 0, 0, G_OPTION_ARG_STRING, &out_ref, "Write the result to this ref", "OUT" },
    { "later-wins", 0, 0, G_OPTION_ARG_NONE, &later_wins,
      "A later tree replaces a clashing path and its directory metadata", NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "--ref OUT IN...",
                  "Union of the trees IN (refs or commits), later trees on top, by metadata only.\n"
                  "Directories merge and keep the owner and mode of the first tree that has them;\n"
                  "two different files, or a file and a directory, at one path are an error.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc < 2)
    return cmd_usage_error (inv, error, "expected at least one IN");

  g_auto(CmdEdit) edit = { NULL };
  g_autoptr(GPtrArray) revs = cmd_edit_begin_with_trees (inv, out_ref, (const char *const *) argv + 1,
                                                         argc - 1, &edit, cancellable, error);
  if (revs == NULL)
    return FALSE;

  edit.tree = tree_combine (edit.repo, revs, later_wins ? TREE_COMBINE_LATER_WINS : TREE_COMBINE_NONE,
                            NULL, cancellable, error);
  if (edit.tree == NULL)
    return FALSE;
  return cmd_edit_finish (inv, &edit, out_ref, NULL, cancellable, error);
}
