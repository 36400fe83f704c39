/* repo.c — opening the repository and committing trees to refs. */
#define _GNU_SOURCE  /* syncfs */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/content.h"
#include "store/objects.h"
#include "store/refs.h"
#include "store/repo.h"
#include "store/stagedir.h"
#include "store/staging.h"
#include "base/util.h"

OstreeRepo *
repo_open (const char *path, GCancellable *cancellable, GError **error)
{
  g_autofree char *config = g_build_filename (path, "config", NULL);
  if (!g_file_test (config, G_FILE_TEST_EXISTS))
    {
      util_fail (error, "%s: no OSTree repository here; create one with \"apt2ostree --repo %s init\"",
                 path, path);
      return NULL;
    }

  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(OstreeRepo) repo = ostree_repo_new (file);
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_open (repo, cancellable, &local_error))
    {
      util_fail (error, "%s: cannot open repository: %s", path, local_error->message);
      return NULL;
    }
  return g_steal_pointer (&repo);
}

OstreeRepo *
repo_ensure (const char *path, const char *mode_name, GCancellable *cancellable, GError **error)
{
  if (mode_name == NULL)
    mode_name = getuid () == 0 ? "bare" : "bare-user";

  OstreeRepoMode mode;
  if (!ostree_repo_mode_from_string (mode_name, &mode, NULL))
    {
      util_fail (error, "unknown repository mode \"%s\" (use bare, bare-user or archive)", mode_name);
      return NULL;
    }

  g_autofree char *config = g_build_filename (path, "config", NULL);
  if (g_file_test (config, G_FILE_TEST_EXISTS))
    {
      g_autoptr(OstreeRepo) existing = repo_open (path, cancellable, error);
      if (existing == NULL)
        return NULL;
      if (ostree_repo_get_mode (existing) != mode)
        {
          util_fail (error, "%s: repository exists with another mode than \"%s\"", path, mode_name);
          return NULL;
        }
      return g_steal_pointer (&existing);
    }

  if (g_mkdir_with_parents (path, 0755) < 0)
    {
      util_fail (error, "%s: cannot create directory: %s", path, g_strerror (errno));
      return NULL;
    }
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(OstreeRepo) repo = ostree_repo_new (file);
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_create (repo, mode, cancellable, &local_error))
    {
      util_fail (error, "%s: cannot create repository: %s", path, local_error->message);
      return NULL;
    }
  return g_steal_pointer (&repo);
}

void
repo_rev_free (RepoRev *rev)
{
  if (rev == NULL)
    return;
  g_free (rev->name);
  g_free (rev->commit);
  g_free (rev->root_contents);
  g_free (rev->root_meta);
  g_free (rev);
}

char *
repo_read_ref (OstreeRepo *repo, const char *name)
{
  g_autoptr(GHashTable) refs = NULL;
  if (!ostree_validate_rev (name, NULL)
      || !ostree_repo_list_refs_ext (repo, name, &refs, OSTREE_REPO_LIST_REFS_EXT_NONE, NULL, NULL))
    return NULL;
  return g_strdup (g_hash_table_lookup (refs, name));
}

/* A full checksum, else a ref of that exact name, else a unique checksum
 * prefix.  libostree tries prefixes first, which would make a ref named "a"
 * mean some commit whose checksum starts with "a". */
static gboolean
resolve_commit (OstreeRepo *repo, const char *name, char **out_commit)
{
  if (ostree_validate_checksum_string (name, NULL))
    {
      *out_commit = g_strdup (name);
      return TRUE;
    }
  *out_commit = repo_read_ref (repo, name);
  if (*out_commit != NULL)
    return TRUE;
  return ostree_repo_resolve_rev (repo, name, TRUE, out_commit, NULL);
}

/* How content objects' file names end in REPO. */
static const char *
content_suffix (OstreeRepo *repo)
{
  return ostree_repo_get_mode (repo) == OSTREE_REPO_MODE_ARCHIVE ? "filez" : "file";
}

/* The commit CHECKSUM is marked partial: is it one a run of ours left
 * marked, that turns out complete (and is unmarked now)?  A partial commit
 * is never used as complete. */
static gboolean
commit_unmarked (OstreeRepo *repo, const char *checksum)
{
  g_autofree char *path = g_file_get_path (ostree_repo_get_path (repo));
  return partial_resolve_leftovers (ostree_repo_get_dfd (repo), path, content_suffix (repo),
                                    !ostree_repo_get_disable_fsync (repo), NULL)
         && !partial_is_marked (ostree_repo_get_dfd (repo), checksum);
}

RepoRev *
repo_resolve (OstreeRepo *repo, const char *name, GError **error)
{
  g_autofree char *commit = NULL;
  if (!resolve_commit (repo, name, &commit) || commit == NULL)
    {
      util_fail (error, "\"%s\": no such ref or commit in the repository", name);
      return NULL;
    }

  g_autoptr(GVariant) commit_v = NULL;
  g_autoptr(GError) local_error = NULL;
  OstreeRepoCommitState state = 0;
  if (!ostree_repo_load_commit (repo, commit, &commit_v, &state, &local_error))
    {
      util_fail (error, "\"%s\": cannot load commit %s: %s", name, commit, local_error->message);
      return NULL;
    }
  if ((state & OSTREE_REPO_COMMIT_STATE_PARTIAL) != 0 && !commit_unmarked (repo, commit))
    {
      util_fail (error, "\"%s\": commit %s is partial (not every object it names is in the "
                 "repository: an interrupted write or pull); run again the command that wrote it",
                 name, commit);
      return NULL;
    }

  g_autoptr(GVariant) contents_v = NULL;
  g_autoptr(GVariant) meta_v = NULL;
  g_variant_get_child (commit_v, 6, "@ay", &contents_v);
  g_variant_get_child (commit_v, 7, "@ay", &meta_v);

  RepoRev *rev = g_new0 (RepoRev, 1);
  rev->name = g_strdup (name);
  rev->commit = g_steal_pointer (&commit);
  rev->root_contents = ostree_checksum_from_bytes_v (contents_v);
  rev->root_meta = ostree_checksum_from_bytes_v (meta_v);
  return rev;
}

GPtrArray *
repo_resolve_all (OstreeRepo *repo, const char *const *names, int n, GError **error)
{
  g_autoptr(GPtrArray) revs = g_ptr_array_new_with_free_func ((GDestroyNotify) repo_rev_free);
  for (int i = 0; i < n; i++)
    {
      RepoRev *rev = repo_resolve (repo, names[i], error);
      if (rev == NULL)
        return NULL;
      g_ptr_array_add (revs, rev);
    }
  return g_steal_pointer (&revs);
}

gboolean
repo_check_ref_name (const char *ref, GError **error)
{
  return refs_check_name (ref, error);
}

/* How a transaction reaches the disk.  OSTree's own way (core.fsync, the
 * default) writes the objects into a staging directory, syncs the file
 * system, renames them into objects/XX, then fsyncs every objects/XX
 * directory of the repository, whether the transaction touched it or not:
 * 257 fsyncs, each a journal commit on ext4, even for a single small .deb.
 * With OWN_COMMIT the commit runs with the same guarantees but two
 * syncfs() instead.  In a bare or bare-user repository the ObjectWriter
 * writes the objects (all but symlinks wait as open files not linked
 * anywhere, the symlinks in the transaction's own staging directory,
 * stagedir.c); one syncfs() before any object is linked or renamed into
 * objects/ (none appears there before its content is on disk), then one
 * after (no ref can name a commit whose objects are not on disk).  The
 * writer's objects go in with the commits last, so that a kill on the way
 * leaves no commit whose objects are not all there; against a power loss,
 * which may keep a later link and lose an earlier one, each new commit is
 * marked partial before the first syncfs and unmarked after the second
 * (partial.c).  Whatever libostree wrote itself in the transaction (in an
 * archive repository, everything) is committed by libostree, with its
 * fsync turned off for that only, between the two syncfs() and before the
 * writer's objects.  The refs' new files are written before the second
 * syncfs, which syncs them with the objects' links, and renamed into place
 * after it (OSTree would fdatasync each ref file on its own: one more wait
 * per ref); a ref whose place holds anything but a file (an alias, a
 * directory) is left to OSTree, with its fsync.  With core.fsync=false the
 * same, minus the syncs (the objects go straight into objects/, as OSTree
 * puts them then). */

struct RepoTxn {
  OstreeRepo *repo;
  gboolean open;
  gboolean own_commit;
  gboolean sync;    /* core.fsync: the two syncfs() of OWN_COMMIT are made */
  StageDir *stage;  /* the writer's staging directory, when it has one */
  GPtrArray *refs;  /* ref, commit, ref, commit, ...: written once the objects are in */
  PartialMarks *marks;  /* the new commits' commitpartial markers */
};

/* The transaction's commitpartial markers ride on the OstreeRepo, as its
 * writer does (staging.h). */
#define MARKS_KEY "apt2ostree-partial-marks"

/* Does the repository ask for durability the way OWN_COMMIT gives it (or for
 * none, core.fsync=false)?  Not with core.per-object-fsync=true (whoever
 * set it wants no whole-file-system sync). */
static gboolean
wants_own_commit (OstreeRepo *repo)
{
  GKeyFile *config = ostree_repo_get_config (repo);
  return !g_key_file_get_boolean (config, "core", "per-object-fsync", NULL);
}

/* Mark the commit CHECKSUM, just written through libostree, partial
 * until the transaction is on disk. */
static gboolean
mark_commit (OstreeRepo *repo, const char *checksum, GError **error)
{
  PartialMarks *marks = g_object_get_data (G_OBJECT (repo), MARKS_KEY);
  return marks == NULL || partial_marks_add (marks, checksum, error);
}

RepoTxn *
repo_txn_begin (OstreeRepo *repo, GCancellable *cancellable, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *path = g_file_get_path (ostree_repo_get_path (repo));
  if (!ostree_repo_prepare_transaction (repo, NULL, cancellable, &local_error))
    {
      util_fail (error, "%s: cannot write to the repository: %s", path, local_error->message);
      return NULL;
    }
  gboolean sync = !ostree_repo_get_disable_fsync (repo);
  if (!partial_resolve_leftovers (ostree_repo_get_dfd (repo), path, content_suffix (repo), sync,
                                  error))
    {
      (void) ostree_repo_abort_transaction (repo, NULL, NULL);
      return NULL;
    }
  RepoTxn *txn = g_new0 (RepoTxn, 1);
  txn->repo = g_object_ref (repo);
  txn->open = TRUE;
  txn->own_commit = wants_own_commit (repo);
  txn->sync = sync;
  txn->refs = g_ptr_array_new_with_free_func (g_free);
  txn->marks = partial_marks_new (ostree_repo_get_dfd (repo), path, sync);
  g_object_set_data (G_OBJECT (repo), MARKS_KEY, txn->marks);
  /* (No staging directory of its own, no writer: libostree writes.) */
  if (txn->own_commit && staging_writer_applies (repo))
    txn->stage = stage_dir_open (ostree_repo_get_dfd (repo), path, NULL);
  if (txn->stage != NULL)
    staging_writer_set (repo, staging_writer_new (repo, stage_dir_fd (txn->stage), txn->marks));
  return txn;
}

void
repo_txn_free (RepoTxn *txn)
{
  if (txn == NULL)
    return;
  staging_writer_set (txn->repo, NULL);
  g_object_set_data (G_OBJECT (txn->repo), MARKS_KEY, NULL);
  stage_dir_free (txn->stage);
  if (txn->open)
    (void) ostree_repo_abort_transaction (txn->repo, NULL, NULL);
  partial_marks_free (txn->marks);
  g_ptr_array_unref (txn->refs);
  g_object_unref (txn->repo);
  g_free (txn);
}

/* syncfs() on the repository's file system. */
static gboolean
sync_repo (OstreeRepo *repo, GError **error)
{
  if (syncfs (ostree_repo_get_dfd (repo)) < 0)
    {
      int errsv = errno;
      g_autofree char *path = g_file_get_path (ostree_repo_get_path (repo));
      return util_fail (error, "%s: syncing the file system: %s", path, g_strerror (errsv));
    }
  return TRUE;
}

void
repo_txn_set_ref (RepoTxn *txn, const char *ref, const char *commit)
{
  g_autofree char *current = repo_read_ref (txn->repo, ref);
  if (g_strcmp0 (current, commit) != 0)
    {
      g_ptr_array_add (txn->refs, g_strdup (ref));
      g_ptr_array_add (txn->refs, g_strdup (commit));
    }
}

gboolean
repo_txn_write_commit (RepoTxn *txn, OstreeMutableTree *mtree, const char *ref,
                       const char *subject, GVariant *metadata, char **out_commit,
                       GCancellable *cancellable, GError **error)
{
  OstreeRepo *repo = txn->repo;
  g_autoptr(GVariant) owned_metadata = metadata ? g_variant_ref_sink (metadata) : NULL;

  guint64 epoch;
  if (!util_source_date_epoch (&epoch, error))
    return FALSE;

  g_autofree char *commit = NULL;
  ObjectWriter *writer = staging_writer_get (repo);
  if (writer != NULL)
    {
      /* The dirtrees and the commit as ostree_repo_write_mtree() and
       * ostree_repo_write_commit_with_time() write them. */
      if (!staging_write_mtree (writer, mtree, error))
        return FALSE;
      GVariant *object = objects_commit_new (owned_metadata, subject, epoch,
                                             ostree_mutable_tree_get_contents_checksum (mtree),
                                             ostree_mutable_tree_get_metadata_checksum (mtree));
      commit = object_writer_metadata (writer, OBJECTS_COMMIT, object, error);
      if (commit == NULL)
        return FALSE;
    }
  else
    {
      g_autoptr(GFile) root = NULL;
      if (!ostree_repo_write_mtree (repo, mtree, &root, cancellable, error)
          || !ostree_repo_write_commit_with_time (repo, NULL, subject, NULL, owned_metadata,
                                                  OSTREE_REPO_FILE (root), epoch, &commit,
                                                  cancellable, error)
          || !mark_commit (repo, commit, error))
        return FALSE;
    }

  repo_txn_set_ref (txn, ref, commit);
  if (out_commit != NULL)
    *out_commit = g_steal_pointer (&commit);
  return TRUE;
}

gboolean
repo_txn_finish (RepoTxn *txn, GCancellable *cancellable, GError **error)
{
  OstreeRepo *repo = txn->repo;
  txn->open = FALSE;
  g_autofree gboolean *staged = g_new0 (gboolean, txn->refs->len / 2 + 1);
  g_autoptr(RefsBatch) batch = NULL;
  if (!txn->own_commit)
    {
      if (!ostree_repo_commit_transaction (repo, NULL, cancellable, error))
        return FALSE;
    }
  else
    {
      /* Everything written so far waits: as open files, in the writer's
       * staging directory or in libostree's. */
      if (txn->sync && !sync_repo (repo, error))
        {
          txn->open = TRUE;
          return FALSE;
        }
      /* Into objects/ in the order a commit needs: what libostree wrote
       * (content, and commits marked partial), then what the writer holds
       * (its commits last). */
      ostree_repo_set_disable_fsync (repo, TRUE);
      gboolean ok = ostree_repo_commit_transaction (repo, NULL, cancellable, error);
      ostree_repo_set_disable_fsync (repo, !txn->sync);
      ObjectWriter *writer = staging_writer_get (repo);
      if (!ok)
        txn->open = TRUE;  /* (libostree's abort then clears what it can) */
      if (!ok || (writer != NULL && !object_writer_publish (writer, error)))
        return FALSE;
      staging_writer_set (repo, NULL);
      /* The refs' new files, synced with the links (refs.c).  (With
       * core.auto-update-summary OSTree also regenerates the summary at
       * each ref it writes: it writes them all then.) */
      GKeyFile *config = ostree_repo_get_config (repo);
      if (txn->sync && !g_key_file_get_boolean (config, "core", "auto-update-summary", NULL))
        {
          g_autofree char *path = g_file_get_path (ostree_repo_get_path (repo));
          batch = refs_batch_new (ostree_repo_get_dfd (repo), path);
          for (guint i = 0; i + 1 < txn->refs->len; i += 2)
            staged[i / 2] = refs_batch_stage (batch, txn->refs->pdata[i], txn->refs->pdata[i + 1]);
        }
      if (txn->sync && !sync_repo (repo, error))
        return FALSE;
    }
  /* Every object is on disk: the commits are complete.  The refs last:
   * those staged above, then OSTree's, each synced as the repository's
   * settings say. */
  if (!partial_marks_remove (txn->marks, error))
    return FALSE;
  if (batch != NULL && !refs_batch_publish (batch, error))
    return FALSE;
  for (guint i = 0; i + 1 < txn->refs->len; i += 2)
    if (!staged[i / 2] && !ostree_repo_set_ref_immediate (repo, NULL, txn->refs->pdata[i],
                                                          txn->refs->pdata[i + 1], cancellable,
                                                          error))
      return FALSE;
  return TRUE;
}

gboolean
repo_txn_commit (RepoTxn *txn, OstreeMutableTree *mtree, const char *ref, const char *subject,
                 GVariant *metadata, char **out_commit, GCancellable *cancellable, GError **error)
{
  g_autofree char *commit = NULL;
  if (!repo_txn_write_commit (txn, mtree, ref, subject, metadata, &commit, cancellable, error)
      || !repo_txn_finish (txn, cancellable, error))
    return FALSE;
  if (out_commit != NULL)
    *out_commit = g_steal_pointer (&commit);
  return TRUE;
}

char *
repo_write_metadata (OstreeRepo *repo, OstreeObjectType type, GVariant *object,
                     GCancellable *cancellable, GError **error)
{
  g_autoptr(GVariant) owned = g_variant_ref_sink (object);
  ObjectWriter *writer = staging_writer_get (repo);
  if (writer != NULL)
    return object_writer_metadata (writer, (ObjectsType) type, owned, error);
  g_autofree guchar *csum = NULL;
  if (!ostree_repo_write_metadata (repo, type, NULL, owned, &csum, cancellable, error))
    return NULL;
  g_autofree char *checksum = ostree_checksum_from_bytes (csum);
  if (type == OSTREE_OBJECT_TYPE_COMMIT && !mark_commit (repo, checksum, error))
    return NULL;
  return g_steal_pointer (&checksum);
}

gboolean
repo_write_dirmeta (OstreeRepo *repo, guint32 uid, guint32 gid, guint32 mode, char **out_checksum,
                    GCancellable *cancellable, GError **error)
{
  GVariant *dirmeta = objects_dirmeta_new (uid, gid, mode, NULL);
  *out_checksum = repo_write_metadata (repo, OSTREE_OBJECT_TYPE_DIR_META, dirmeta, cancellable,
                                       error);
  return *out_checksum != NULL;
}

char *
repo_write_content (OstreeRepo *repo, GFileInfo *info, GVariant *xattrs, GInputStream *data,
                    GCancellable *cancellable, GError **error)
{
  return content_write_stream (repo, info, xattrs, data, cancellable, error);
}

gboolean
repo_write_symlink (OstreeRepo *repo, const char *target, guint32 uid, guint32 gid,
                    char **out_checksum, GCancellable *cancellable, GError **error)
{
  g_autoptr(GFileInfo) info = content_symlink_info (uid, gid, target);
  *out_checksum = repo_write_content (repo, info, NULL, NULL, cancellable, error);
  return *out_checksum != NULL;
}

gboolean
repo_write_regular_file (OstreeRepo *repo, GBytes *data, guint32 uid, guint32 gid, guint32 mode,
                         char **out_checksum, GCancellable *cancellable, GError **error)
{
  g_autoptr(GFileInfo) info = content_regular_info (uid, gid, mode, g_bytes_get_size (data));
  g_autoptr(GInputStream) content = g_memory_input_stream_new_from_bytes (data);
  *out_checksum = repo_write_content (repo, info, NULL, content, cancellable, error);
  return *out_checksum != NULL;
}

GBytes *
repo_read_file (OstreeRepo *repo, const char *checksum, GCancellable *cancellable, GError **error)
{
  g_autoptr(GInputStream) in = NULL;
  g_autoptr(GFileInfo) info = NULL;
  if (!ostree_repo_load_file (repo, checksum, &in, &info, NULL, cancellable, error))
    return NULL;
  if (in == NULL)
    {
      util_fail (error, "object %s is not a regular file", checksum);
      return NULL;
    }
  g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();
  if (g_output_stream_splice (out, in, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, cancellable, error) < 0)
    return NULL;
  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
}
