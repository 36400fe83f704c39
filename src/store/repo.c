/* repo.c — opening the repository and committing trees to refs. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/content.h"
#include "barestore/objects.h"
#include "barestore/refs.h"
#include "store/repo.h"
#include "barestore/txn.h"
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

  /* libostree calls a repository existing when it has "objects"; one
   * without (a creation killed part-way leaves "config" alone) is finished
   * by ostree_repo_create, as its documentation promises. */
  g_autofree char *objects = g_build_filename (path, "objects", NULL);
  if (g_file_test (objects, G_FILE_TEST_IS_DIR))
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

/* A transaction.  In a bare or bare-user repository whose config it
 * serves, the store's own (txn.c), and no libostree transaction at all:
 * every object goes through its sink (repo_txn_sink(): the store's
 * writer); libostree only takes the repository's shared lock, which
 * waits as OSTree's own transactions do.  Anywhere else (archive,
 * core.per-object-fsync, fs-verity, a file system the writer does not
 * know) libostree's transaction, behind the same sink (content.c),
 * finished by the same sequence (txn.c's store_txn_finish_run(), unless
 * core.per-object-fsync asks for OSTree's own fsyncs): a syncfs,
 * libostree's commit with its fsync turned off for that only, each new
 * commit marked partial meanwhile, the refs' new files, a second syncfs,
 * the markers removed, the refs renamed into place.  Either way a ref whose place holds anything but a file (an
 * alias, a directory), or every ref with core.auto-update-summary, is
 * left to OSTree, with its fsync, after the rest. */

struct RepoTxn {
  OstreeRepo *repo;
  StoreTxn *own;              /* the store's transaction; NULL: libostree's */
  OstreeRepoAutoLock *lock;   /* the shared lock OWN runs under */
  gboolean open;              /* libostree's transaction is open */
  gboolean own_commit;        /* libostree's, committed between two syncfs() */
  gboolean sync;              /* core.fsync */
  GPtrArray *refs;            /* ref, commit, ...: those OSTree writes, at the end */
  PartialMarks *marks;        /* libostree's: the new commits' commitpartial markers */
  StoreSink *sink;            /* where the objects go: OWN's, else over libostree (owned) */
  gboolean keep_same_tree;    /* repo_txn_keep_same_tree() */
};

/* Does the repository ask for durability the way OWN_COMMIT gives it (or for
 * none, core.fsync=false)?  Not with core.per-object-fsync=true (whoever
 * set it wants no whole-file-system sync). */
static gboolean
wants_own_commit (OstreeRepo *repo)
{
  GKeyFile *config = ostree_repo_get_config (repo);
  return !g_key_file_get_boolean (config, "core", "per-object-fsync", NULL);
}

/* With core.auto-update-summary OSTree regenerates the summary at each
 * ref it writes: it writes them all then. */
static gboolean
ostree_writes_refs (OstreeRepo *repo)
{
  return g_key_file_get_boolean (ostree_repo_get_config (repo), "core", "auto-update-summary",
                                 NULL);
}

/* Begin the store's transaction when the repository is one it serves
 * (TXN->own stays NULL when not). */
static gboolean
begin_own (RepoTxn *txn, const char *path, GCancellable *cancellable, GError **error)
{
  StoreTxnSettings settings;
  if (!store_txn_settings_read (ostree_repo_get_config (txn->repo), &settings, NULL))
    return TRUE;
  g_autoptr(GError) local_error = NULL;
  txn->lock = ostree_repo_auto_lock_push (txn->repo, OSTREE_REPO_LOCK_SHARED, cancellable,
                                          &local_error);
  if (txn->lock == NULL)
    return util_fail (error, "%s: cannot write to the repository: %s", path, local_error->message);
  txn->own = store_txn_begin (ostree_repo_get_dfd (txn->repo), path, &settings,
                              STORE_TXN_LOCK_HELD, &local_error);
  if (txn->own != NULL)
    {
      txn->sink = store_txn_sink (txn->own);
      return TRUE;
    }
  g_clear_pointer (&txn->lock, ostree_repo_auto_lock_cleanup);
  if (g_error_matches (local_error, STORE_TXN_ERROR, STORE_TXN_ERROR_NOT_HERE))
    return TRUE;
  g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}

/* Begin libostree's transaction. */
static gboolean
begin_ostree (RepoTxn *txn, const char *path, GCancellable *cancellable, GError **error)
{
  OstreeRepo *repo = txn->repo;
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_prepare_transaction (repo, NULL, cancellable, &local_error))
    return util_fail (error, "%s: cannot write to the repository: %s", path, local_error->message);
  txn->open = TRUE;
  txn->sync = !ostree_repo_get_disable_fsync (repo);
  if (!partial_resolve_leftovers (ostree_repo_get_dfd (repo), path, content_suffix (repo),
                                  txn->sync, error))
    return FALSE;
  txn->own_commit = wants_own_commit (repo);
  txn->marks = partial_marks_new (ostree_repo_get_dfd (repo), path, txn->sync);
  txn->sink = content_ostree_sink_new (repo, txn->marks);
  return TRUE;
}

RepoTxn *
repo_txn_begin (OstreeRepo *repo, GCancellable *cancellable, GError **error)
{
  g_autofree char *path = g_file_get_path (ostree_repo_get_path (repo));
  g_autoptr(RepoTxn) txn = g_new0 (RepoTxn, 1);
  txn->repo = g_object_ref (repo);
  txn->refs = g_ptr_array_new_with_free_func (g_free);
  if (!begin_own (txn, path, cancellable, error)
      || (txn->own == NULL && !begin_ostree (txn, path, cancellable, error)))
    return NULL;
  return g_steal_pointer (&txn);
}

void
repo_txn_free (RepoTxn *txn)
{
  if (txn == NULL)
    return;
  if (txn->own == NULL)
    g_free (txn->sink);
  store_txn_free (txn->own);
  g_clear_pointer (&txn->lock, ostree_repo_auto_lock_cleanup);
  if (txn->open)
    (void) ostree_repo_abort_transaction (txn->repo, NULL, NULL);
  partial_marks_free (txn->marks);
  g_ptr_array_unref (txn->refs);
  g_object_unref (txn->repo);
  g_free (txn);
}

StoreSink *
repo_txn_sink (RepoTxn *txn)
{
  return txn->sink;
}

ObjectWriter *
repo_txn_writer (RepoTxn *txn)
{
  return txn->own != NULL ? store_txn_writer (txn->own) : NULL;
}

/* Write the dirtree objects of MTREE and of every directory under it that
 * has none yet (the same objects ostree_repo_write_mtree() writes), and set
 * their contents checksums. */
static gboolean
write_mtree (StoreSink *sink, OstreeMutableTree *mtree, GError **error)
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
      if (!write_mtree (sink, child, error))
        return FALSE;
      g_hash_table_insert (contents, name,
                           (gpointer) ostree_mutable_tree_get_contents_checksum (child));
      g_hash_table_insert (meta, name,
                           (gpointer) ostree_mutable_tree_get_metadata_checksum (child));
    }
  g_autofree char *checksum = sink->metadata (
      sink, OBJECTS_DIR_TREE,
      objects_dirtree_new (ostree_mutable_tree_get_files (mtree), contents, meta), error);
  if (checksum == NULL)
    return FALSE;
  ostree_mutable_tree_set_contents_checksum (mtree, checksum);
  return TRUE;
}

void
repo_txn_set_ref (RepoTxn *txn, const char *ref, const char *commit)
{
  if (commit == NULL && strchr (ref, ':') != NULL)
    {
      /* A remote's ref (libostree's pull wrote it): only OSTree writes
       * refs/remotes/, after the rest. */
      g_ptr_array_add (txn->refs, g_strdup (ref));
      g_ptr_array_add (txn->refs, NULL);
      return;
    }
  g_autofree char *current = repo_read_ref (txn->repo, ref);
  if (g_strcmp0 (current, commit) == 0)
    return;
  if (txn->own != NULL && !ostree_writes_refs (txn->repo))
    store_txn_set_ref (txn->own, ref, commit);
  else
    {
      g_ptr_array_add (txn->refs, g_strdup (ref));
      g_ptr_array_add (txn->refs, g_strdup (commit));
    }
}

/* Does the commit REF holds have the root CONTENTS and META?  Then that
 * commit goes into OUT_COMMIT. */
static gboolean
ref_holds_tree (OstreeRepo *repo, const char *ref, const char *contents, const char *meta,
                char **out_commit)
{
  g_autofree char *current = repo_read_ref (repo, ref);
  g_autoptr(GVariant) commit = NULL;
  if (current == NULL || !ostree_repo_load_commit (repo, current, &commit, NULL, NULL))
    return FALSE;
  g_autoptr(GVariant) held_contents = g_variant_get_child_value (commit, 6);
  g_autoptr(GVariant) held_meta = g_variant_get_child_value (commit, 7);
  g_autofree char *c = ostree_checksum_from_bytes_v (held_contents);
  g_autofree char *m = ostree_checksum_from_bytes_v (held_meta);
  if (!g_str_equal (c, contents) || !g_str_equal (m, meta))
    return FALSE;
  *out_commit = g_steal_pointer (&current);
  return TRUE;
}

gboolean
repo_txn_write_commit (RepoTxn *txn, OstreeMutableTree *mtree, const char *ref,
                       const char *subject, GVariant *metadata, char **out_commit,
                       GCancellable *cancellable, GError **error)
{
  g_autoptr(GVariant) owned_metadata = metadata ? g_variant_ref_sink (metadata) : NULL;

  guint64 epoch;
  if (!util_source_date_epoch (&epoch, error))
    return FALSE;

  /* The dirtrees and the commit as ostree_repo_write_mtree() and
   * ostree_repo_write_commit_with_time() write them, through the sink. */
  if (!write_mtree (txn->sink, mtree, error))
    return FALSE;
  g_autofree char *held = NULL;
  if (txn->keep_same_tree
      && ref_holds_tree (txn->repo, ref, ostree_mutable_tree_get_contents_checksum (mtree),
                         ostree_mutable_tree_get_metadata_checksum (mtree), &held))
    {
      if (out_commit != NULL)
        *out_commit = g_steal_pointer (&held);
      return TRUE;
    }
  GVariant *object = objects_commit_new (owned_metadata, subject, epoch,
                                         ostree_mutable_tree_get_contents_checksum (mtree),
                                         ostree_mutable_tree_get_metadata_checksum (mtree));
  g_autofree char *commit = txn->sink->metadata (txn->sink, OBJECTS_COMMIT, object, error);
  if (commit == NULL)
    return FALSE;

  repo_txn_set_ref (txn, ref, commit);
  if (out_commit != NULL)
    *out_commit = g_steal_pointer (&commit);
  return TRUE;
}

void
repo_txn_keep_same_tree (RepoTxn *txn)
{
  txn->keep_same_tree = TRUE;
}

/* libostree's commit, its fsync turned off for that only (the finish
 * sequence syncs the file system around it). */
static gboolean
commit_ostree (gpointer user_data, GError **error)
{
  RepoTxn *txn = user_data;
  ostree_repo_set_disable_fsync (txn->repo, TRUE);
  gboolean ok = ostree_repo_commit_transaction (txn->repo, NULL, NULL, error);
  ostree_repo_set_disable_fsync (txn->repo, !txn->sync);
  if (ok)
    txn->open = FALSE;  /* (else libostree's abort clears what it can) */
  return ok;
}

/* Commit libostree's transaction: with OWN_COMMIT in the store's finish
 * sequence (txn.c), the refs that refs.c writes staged with the objects
 * (with core.fsync, unless OSTree writes them all); those left to OSTree
 * stay in TXN->refs. */
static gboolean
finish_ostree (RepoTxn *txn, GCancellable *cancellable, GError **error)
{
  OstreeRepo *repo = txn->repo;
  if (!txn->own_commit)
    {
      txn->open = FALSE;
      return ostree_repo_commit_transaction (repo, NULL, cancellable, error)
             && partial_marks_remove (txn->marks, error);
    }
  gboolean stage = txn->sync && !ostree_writes_refs (repo);
  g_autofree char *path = g_file_get_path (ostree_repo_get_path (repo));
  StoreTxnFinish finish = {
    ostree_repo_get_dfd (repo), path, txn->sync, commit_ostree, txn, txn->marks,
    stage ? txn->refs : NULL,
  };
  g_autoptr(GPtrArray) left = g_ptr_array_new_with_free_func (g_free);
  if (!store_txn_finish_run (&finish, left, error))
    return FALSE;
  if (stage)
    {
      g_ptr_array_unref (txn->refs);
      txn->refs = g_steal_pointer (&left);
    }
  return TRUE;
}

gboolean
repo_txn_finish (RepoTxn *txn, GCancellable *cancellable, GError **error)
{
  if (txn->own != NULL)
    {
      if (!store_txn_finish (txn->own, txn->refs, error))
        return FALSE;
    }
  else if (!finish_ostree (txn, cancellable, error))
    return FALSE;
  /* The refs left to OSTree, each synced as the repository's settings say. */
  for (guint i = 0; i + 1 < txn->refs->len; i += 2)
    {
      g_autofree char *remote = NULL, *ref = NULL;
      if (!ostree_parse_refspec (txn->refs->pdata[i], &remote, &ref, error)
          || !ostree_repo_set_ref_immediate (txn->repo, remote, ref, txn->refs->pdata[i + 1],
                                             cancellable, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
repo_commit_timestamp (OstreeRepo *repo, const char *commit, gint64 *out_timestamp,
                       GError **error)
{
  g_autoptr(GVariant) commit_v = NULL;
  if (!ostree_repo_load_commit (repo, commit, &commit_v, NULL, error))
    return FALSE;
  *out_timestamp = (gint64) ostree_commit_get_timestamp (commit_v);
  return TRUE;
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
