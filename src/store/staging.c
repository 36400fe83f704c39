/* staging.c — the writer of a transaction on an OstreeRepo, kept on the
 * OstreeRepo for the modules that write through it (content.c, repo.c),
 * and the dirtrees of a mutable tree written through it.  Nothing here
 * looks into libostree's own staging directory or depends on what its
 * transactions leave behind. */
#include "config.h"

#include "store/staging.h"
#include "base/util.h"

#define WRITER_KEY "apt2ostree-staging-writer"

ObjectWriter *
staging_writer_get (OstreeRepo *repo)
{
  return g_object_get_data (G_OBJECT (repo), WRITER_KEY);
}

void
staging_writer_set (OstreeRepo *repo, ObjectWriter *w)
{
  g_object_set_data (G_OBJECT (repo), WRITER_KEY, w);
}

gboolean
staging_write_mtree (ObjectWriter *w, OstreeMutableTree *mtree, GError **error)
{
  if (ostree_mutable_tree_get_contents_checksum (mtree) != NULL)
    return TRUE;
  if (ostree_mutable_tree_get_metadata_checksum (mtree) == NULL)
    return util_fail (error, "a directory without metadata cannot be committed");

  GHashTable *subdirs = ostree_mutable_tree_get_subdirs (mtree);
  g_autoptr(GHashTable) contents = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) meta = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter iter;
  gpointer name, child;
  g_hash_table_iter_init (&iter, subdirs);
  while (g_hash_table_iter_next (&iter, &name, &child))
    {
      if (!staging_write_mtree (w, child, error))
        return FALSE;
      g_hash_table_insert (contents, name,
                           (gpointer) ostree_mutable_tree_get_contents_checksum (child));
      g_hash_table_insert (meta, name, (gpointer) ostree_mutable_tree_get_metadata_checksum (child));
    }
  g_autofree char *checksum = object_writer_metadata (
      w, OBJECTS_DIR_TREE,
      objects_dirtree_new (ostree_mutable_tree_get_files (mtree), contents, meta), error);
  if (checksum == NULL)
    return FALSE;
  ostree_mutable_tree_set_contents_checksum (mtree, checksum);
  return TRUE;
}
