/* apt2ostree overlay — trees put over a base tree, as files are copied
 * into a root filesystem (metadata only). */
#include "config.h"

#include "cmd/cmd.h"
#include "store/overlay.h"

gboolean
cmd_overlay (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
             GError **error)
{
  g_autofree char *out_ref = NULL;
  const GOptionEntry entries[] = {
    { "ref", 0, 0, G_OPTION_ARG_STRING, &out_ref, "Write the result to this ref", "OUT" },
    { NULL }
  };
  if (!cmd_parse (inv, "--ref OUT BASE TREE...",
                  "Put the trees TREE over BASE, by metadata only: their files replace BASE's,\n"
                  "directories BASE has keep BASE's owner and mode, a directory against a file\n"
                  "or symlink (bin in a merged-/usr image) is an error.  OUT keeps BASE's commit\n"
                  "metadata.  \"build --before-configure\" and \"--after-configure\" use it.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc < 3)
    return cmd_usage_error (inv, error, "expected BASE and at least one TREE");

  g_auto(CmdEdit) edit = { NULL };
  g_autoptr(GPtrArray) revs = cmd_edit_begin_with_trees (inv, out_ref, (const char *const *) argv + 1,
                                                         argc - 1, &edit, cancellable, error);
  if (revs == NULL)
    return FALSE;

  g_autoptr(GVariant) commit = NULL;
  if (!ostree_repo_load_commit (edit.repo, ((RepoRev *) revs->pdata[0])->commit, &commit, NULL,
                                error))
    return FALSE;
  g_autoptr(GVariant) metadata = g_variant_get_child_value (commit, 0);

  edit.tree = overlay_trees (edit.repo, revs, cancellable, error);
  if (edit.tree == NULL)
    return FALSE;
  return cmd_edit_finish (inv, &edit, out_ref, metadata, cancellable, error);
}
