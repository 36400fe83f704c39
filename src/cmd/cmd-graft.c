/* apt2ostree graft — place a tree at a path inside another tree. */
#include "config.h"

#include "cmd/cmd.h"
#include "store/tree.h"

gboolean
cmd_graft (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
           GError **error)
{
  g_autofree char *out_ref = NULL;
  const GOptionEntry entries[] = {
    { "ref", 0, 0, G_OPTION_ARG_STRING, &out_ref, "Write the result to this ref", "OUT" },
    { NULL }
  };
  if (!cmd_parse (inv, "--ref OUT IN PATH FROM",
                  "Place the tree FROM at PATH inside the tree IN.  PATH must not exist; its\n"
                  "parent must.  FROM's root directory metadata becomes PATH's.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 4)
    return cmd_usage_error (inv, error, "expected IN, PATH and FROM");

  g_auto(CmdEdit) edit = { NULL };
  if (!cmd_edit_begin (inv, out_ref, argv[1], &edit, cancellable, error))
    return FALSE;
  g_autoptr(RepoRev) from = repo_resolve (edit.repo, argv[3], error);
  if (from == NULL)
    return FALSE;
  if (!tree_graft (edit.tree, argv[2], edit.repo, from, error))
    {
      g_prefix_error (error, "%s: ", edit.in->name);
      return FALSE;
    }
  return cmd_edit_finish (inv, &edit, out_ref, NULL, cancellable, error);
}
