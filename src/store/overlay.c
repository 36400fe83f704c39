/* overlay.c — trees put over a base tree, as files are copied into it. */
#include "config.h"

#include <string.h>

#include "store/overlay.h"
#include "store/repo.h"
#include "store/tree.h"
#include "base/util.h"

/* The entry NAME of the dirtree DIRTREE (type a(say)a(sayay)): a file
 * (*out_is_dir FALSE) or a directory with its checksums; FALSE when absent. */
static gboolean
dirtree_entry (GVariant *dirtree, const char *name, gboolean *out_is_dir, char **out_contents,
               char **out_meta)
{
  g_autoptr(GVariant) files = g_variant_get_child_value (dirtree, 0);
  g_autoptr(GVariant) dirs = g_variant_get_child_value (dirtree, 1);
  GVariantIter iter;
  const char *entry;
  g_autoptr(GVariant) csum = NULL, meta = NULL;
  g_variant_iter_init (&iter, files);
  while (g_variant_iter_next (&iter, "(&s@ay)", &entry, NULL))
    if (g_str_equal (entry, name))
      {
        *out_is_dir = FALSE;
        return TRUE;
      }
  g_variant_iter_init (&iter, dirs);
  while (g_variant_iter_next (&iter, "(&s@ay@ay)", &entry, &csum, &meta))
    {
      if (g_str_equal (entry, name))
        {
          *out_is_dir = TRUE;
          *out_contents = ostree_checksum_from_bytes_v (csum);
          *out_meta = ostree_checksum_from_bytes_v (meta);
          return TRUE;
        }
      g_clear_pointer (&csum, g_variant_unref);
      g_clear_pointer (&meta, g_variant_unref);
    }
  return FALSE;
}

typedef struct {
  OstreeRepo *repo;
  const RepoRev *base;
  const RepoRev *over;
  GPtrArray *path;   /* components of the directory being walked */
} Walk;

static gboolean
clash (Walk *w, const char *name, const char *over_kind, const char *base_kind, GError **error)
{
  g_ptr_array_add (w->path, (char *) name);
  g_autofree char *path = util_join_tree_path (w->path, w->path->len);
  g_ptr_array_remove_index (w->path, w->path->len - 1);
  return util_fail (error, "\"%s\" is %s in \"%s\" but %s in \"%s\"; put files where the "
                    "image has them (in a merged-/usr image, usr/bin rather than bin)",
                    path, over_kind, w->over->name, base_kind, w->base->name);
}

/* Walk OVER_CONTENTS (a directory of W->over) beside BASE_CONTENTS (the
 * same directory in the base): give RESULT's subdirectories the base's
 * metadata where the base has them, refuse kinds that differ. */
static gboolean
keep_base_dirs (Walk *w, const char *base_contents, const char *over_contents,
                OstreeMutableTree *result, GError **error)
{
  g_autoptr(GVariant) base = NULL, over = NULL;
  if (!ostree_repo_load_variant (w->repo, OSTREE_OBJECT_TYPE_DIR_TREE, base_contents, &base, error)
      || !ostree_repo_load_variant (w->repo, OSTREE_OBJECT_TYPE_DIR_TREE, over_contents, &over,
                                    error))
    return FALSE;

  g_autoptr(GVariant) files = g_variant_get_child_value (over, 0);
  g_autoptr(GVariant) dirs = g_variant_get_child_value (over, 1);
  GVariantIter iter;
  const char *name;
  g_variant_iter_init (&iter, files);
  while (g_variant_iter_next (&iter, "(&s@ay)", &name, NULL))
    {
      gboolean is_dir;
      g_autofree char *c = NULL, *m = NULL;
      if (dirtree_entry (base, name, &is_dir, &c, &m) && is_dir)
        return clash (w, name, "a file", "a directory", error);
    }

  g_autoptr(GVariant) csum = NULL, meta = NULL;
  g_variant_iter_init (&iter, dirs);
  while (g_variant_iter_next (&iter, "(&s@ay@ay)", &name, &csum, &meta))
    {
      g_autofree char *over_sub = ostree_checksum_from_bytes_v (csum);
      g_clear_pointer (&csum, g_variant_unref);
      g_clear_pointer (&meta, g_variant_unref);
      gboolean is_dir;
      g_autofree char *base_sub = NULL, *base_meta = NULL;
      if (!dirtree_entry (base, name, &is_dir, &base_sub, &base_meta))
        continue;  /* new: the tree's own metadata */
      if (!is_dir)
        return clash (w, name, "a directory", "a file or symlink", error);

      g_autoptr(OstreeMutableTree) sub = NULL;
      if (!ostree_mutable_tree_lookup (result, name, NULL, &sub, error))
        return FALSE;
      ostree_mutable_tree_set_metadata_checksum (sub, base_meta);
      g_ptr_array_add (w->path, (char *) name);
      gboolean ok = keep_base_dirs (w, base_sub, over_sub, sub, error);
      g_ptr_array_remove_index (w->path, w->path->len - 1);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

OstreeMutableTree *
overlay_trees (OstreeRepo *repo, GPtrArray *revs, GCancellable *cancellable, GError **error)
{
  g_autoptr(OstreeMutableTree) result = tree_combine (repo, revs, TREE_COMBINE_LATER_WINS, NULL,
                                                      cancellable, error);
  if (result == NULL)
    return NULL;
  const RepoRev *base = revs->pdata[0];
  ostree_mutable_tree_set_metadata_checksum (result, base->root_meta);
  g_autoptr(GPtrArray) path = g_ptr_array_new ();
  for (guint i = 1; i < revs->len; i++)
    {
      Walk w = { repo, base, revs->pdata[i], path };
      if (!keep_base_dirs (&w, base->root_contents, w.over->root_contents, result, error))
        return NULL;
    }
  return g_steal_pointer (&result);
}
