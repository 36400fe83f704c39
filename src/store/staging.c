/* staging.c — the object writer (writer.c) for a transaction on an
 * OstreeRepo: made from the repository's settings, its objects waiting in
 * the transaction's own staging directory (stagedir.c), and the dirtrees
 * of a mutable tree written through it.  Nothing here looks into
 * libostree's own staging directory or depends on what its transactions
 * leave behind. */
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
  g_object_set_data_full (G_OBJECT (repo), WRITER_KEY, w, (GDestroyNotify) object_writer_free);
}

/* Does REPO ask for anything the writer does not do (fs-verity, objects
 * synced one by one, another repository mode)? */
gboolean
staging_writer_applies (OstreeRepo *repo)
{
  OstreeRepoMode mode = ostree_repo_get_mode (repo);
  if (mode != OSTREE_REPO_MODE_BARE && mode != OSTREE_REPO_MODE_BARE_USER)
    return FALSE;
  GKeyFile *config = ostree_repo_get_config (repo);
  if (g_key_file_get_boolean (config, "core", "per-object-fsync", NULL))
    return FALSE;
  g_auto(GStrv) groups = g_key_file_get_groups (config, NULL);
  for (char **g = groups; *g != NULL; g++)
    if (g_str_has_prefix (*g, "ex-fsverity") || g_str_has_prefix (*g, "ex-integrity"))
      return FALSE;
  return TRUE;
}

ObjectWriter *
staging_writer_new (OstreeRepo *repo, int stage_dfd, PartialMarks *marks)
{
  guint64 reserved = 0;
  if (!staging_writer_applies (repo) || !ostree_repo_get_min_free_space_bytes (repo, &reserved, NULL))
    return NULL;
  g_autofree char *path = g_file_get_path (ostree_repo_get_path (repo));
  ObjectWriterConfig config = {
    .repo_dfd = ostree_repo_get_dfd (repo),
    .stage_dfd = stage_dfd,
    .bare_user = ostree_repo_get_mode (repo) == OSTREE_REPO_MODE_BARE_USER,
    .sync = !ostree_repo_get_disable_fsync (repo),
    .min_free_bytes = reserved,
    .repo_path = path,
    .marks = marks,
  };
  return object_writer_new (&config);
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
