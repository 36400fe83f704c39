/* txn.c — the project's own transaction on a bare or bare-user repository.
 *
 * How it reaches the disk.  OSTree's own way (core.fsync, the default)
 * writes the objects into a staging directory, syncs the file system,
 * renames them into objects/XX, then fsyncs every objects/XX directory of
 * the repository, whether the transaction touched it or not: 257 fsyncs,
 * each a journal commit on ext4, even for a single small .deb.  Here the
 * same guarantees cost two syncfs().  The writer (writer.c) makes the
 * objects: all but symlinks wait as open files linked nowhere, the
 * symlinks in the transaction's own staging directory (stagedir.c).  One
 * syncfs() comes before any object is linked or renamed into objects/
 * (none appears there before its content is on disk), one after (no ref
 * can name a commit whose objects are not on disk).  The objects go in
 * with the commits last, so that a kill on the way leaves no commit whose
 * objects are not all there; against a power loss, which may keep a later
 * link and lose an earlier one, each new commit is marked partial before
 * the first syncfs and unmarked after the second (partial.c).  The refs'
 * new files are written before the second syncfs, which syncs them with
 * the objects' links, and renamed into place after it (OSTree would
 * fdatasync each ref file on its own: one more wait per ref).  With
 * core.fsync=false the same, minus the syncs and the markers (the objects
 * go straight into objects/, as OSTree puts them then); and so within a
 * build that syncs once, at its end (unsynced.h). */
#define _GNU_SOURCE  /* syncfs */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/util.h"
#include "barestore/partial.h"
#include "barestore/refs.h"
#include "barestore/stagedir.h"
#include "barestore/txn.h"
#include "barestore/unsynced.h"
#include "barestore/writer.h"

G_DEFINE_QUARK (apt2ostree-store-txn-error-quark, store_txn_error)

#define not_here(error, ...) \
  util_fail_code ((error), STORE_TXN_ERROR, STORE_TXN_ERROR_NOT_HERE, __VA_ARGS__)

/* --- the config ------------------------------------------------------- */

/* core.min-free-space-size as libostree takes it: digits, then MB, GB or
 * TB (binary units), in MiB; FALSE for anything else or too large. */
static gboolean
parse_min_free_size (const char *value, guint64 *out_mb)
{
  gsize digits = strspn (value, "0123456789");
  if (digits == 0 || strlen (value + digits) != 2 || value[digits + 1] != 'B')
    return FALSE;
  guint shift = value[digits] == 'M' ? 0 : value[digits] == 'G' ? 10
                : value[digits] == 'T' ? 20 : 64;
  if (shift == 64)
    return FALSE;
  guint64 mb = g_ascii_strtoull (value, NULL, 10);
  if ((shift > 0 && g_bit_nth_lsf (mb, 63 - shift) != -1) || (mb << shift) > (G_MAXUINT64 >> 20))
    return FALSE;
  *out_mb = mb << shift;
  return TRUE;
}

/* core.min-free-space-*: the size wins when both are set; 3 percent when
 * neither is. */
static gboolean
read_min_free_space (GKeyFile *config, StoreTxnSettings *out, GError **error)
{
  g_autofree char *size = g_key_file_get_value (config, "core", "min-free-space-size", NULL);
  g_autofree char *percent = g_key_file_get_value (config, "core", "min-free-space-percent", NULL);
  out->min_free_mb = 0;
  out->min_free_percent = size == NULL ? 3 : 0;
  if (size != NULL && !parse_min_free_size (size, &out->min_free_mb))
    return not_here (error, "core.min-free-space-size=%s", size);
  if (percent != NULL)
    {
      guint64 value = 0;
      if (strspn (percent, "0123456789") != strlen (percent)
          || (*percent != '\0' && !g_ascii_string_to_unsigned (percent, 10, 0, 99, &value, NULL)))
        return not_here (error, "core.min-free-space-percent=%s", percent);
      out->min_free_percent = value;
    }
  if (out->min_free_mb > 0)
    out->min_free_percent = 0;
  return TRUE;
}

gboolean
store_txn_settings_read (GKeyFile *config, StoreTxnSettings *out, GError **error)
{
  g_autofree char *version = g_key_file_get_value (config, "core", "repo_version", NULL);
  g_autofree char *mode = g_key_file_get_value (config, "core", "mode", NULL);
  if (g_strcmp0 (version, "1") != 0 || mode == NULL
      || !(g_str_equal (mode, "bare") || g_str_equal (mode, "bare-user")))
    return not_here (error, "repository version %s, mode %s", version, mode);
  out->bare_user = g_str_equal (mode, "bare-user");

  g_autoptr(GError) local_error = NULL;
  out->sync = TRUE;
  if (g_key_file_has_key (config, "core", "fsync", NULL))
    {
      out->sync = g_key_file_get_boolean (config, "core", "fsync", &local_error);
      if (local_error != NULL)
        return not_here (error, "core.fsync: %s", local_error->message);
    }
  /* (Whoever asks for objects synced one by one wants no whole-file-system
   * sync; fs-verity is libostree's to set up.) */
  if (g_key_file_has_key (config, "core", "per-object-fsync", NULL)
      && (g_key_file_get_boolean (config, "core", "per-object-fsync", &local_error)
          || local_error != NULL))
    return not_here (error, "core.per-object-fsync");
  g_auto(GStrv) groups = g_key_file_get_groups (config, NULL);
  for (char **g = groups; *g != NULL; g++)
    if (g_str_has_prefix (*g, "ex-fsverity") || g_str_has_prefix (*g, "ex-integrity"))
      return not_here (error, "config group [%s]", *g);
  return read_min_free_space (config, out, error);
}

/* The reserve min-free-space-* keeps, in bytes, as libostree reckons it. */
static guint64
reserved_bytes (int repo_dfd, const StoreTxnSettings *settings)
{
  if (settings->min_free_mb > 0)
    return settings->min_free_mb << 20;
  struct statvfs vfs;
  if (settings->min_free_percent == 0 || fstatvfs (repo_dfd, &vfs) < 0)
    return 0;
  guint64 total = (guint64) vfs.f_frsize * vfs.f_blocks;
  return (guint64) ((double) total * (settings->min_free_percent / 100.0));
}

/* --- the transaction -------------------------------------------------- */

struct StoreTxn {
  int repo_dfd;               /* not owned */
  char *repo_path;
  gboolean sync;              /* core.fsync */
  int lock_fd;                /* the shared lock, when taken here */
  StageDir *stage;            /* the staging directory */
  PartialMarks *marks;        /* the new commits' commitpartial markers */
  ObjectWriter *writer;       /* NULL once its objects are in */
  StoreSink *sink;            /* over WRITER */
  GPtrArray *refs;            /* ref, commit, ...: written at the end */
};

void
store_txn_free (StoreTxn *txn)
{
  if (txn == NULL)
    return;
  /* (The writer first: it drops what waits in the staging directory.) */
  object_writer_free (txn->writer);
  g_free (txn->sink);
  partial_marks_free (txn->marks);
  stage_dir_free (txn->stage);
  util_fd_close (&txn->lock_fd);
  g_ptr_array_unref (txn->refs);
  g_free (txn->repo_path);
  g_free (txn);
}

/* The shared lock every libostree transaction takes on .lock (an open
 * file description lock, or flock() where those are missing), without
 * waiting. */
static gboolean
lock_shared (StoreTxn *txn, GError **error)
{
  txn->lock_fd = openat (txn->repo_dfd, ".lock", O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (txn->lock_fd < 0)
    return not_here (error, "%s/.lock: %s", txn->repo_path, g_strerror (errno));
  struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
  if (fcntl (txn->lock_fd, F_OFD_SETLK, &fl) == 0)
    return TRUE;
  if (errno == EINVAL && flock (txn->lock_fd, LOCK_SH | LOCK_NB) == 0)
    return TRUE;
  return not_here (error, "%s/.lock: %s", txn->repo_path, g_strerror (errno));
}

StoreTxn *
store_txn_begin (int repo_dfd, const char *repo_path, const StoreTxnSettings *settings,
                 StoreTxnLock lock, GError **error)
{
  g_autoptr(StoreTxn) txn = g_new0 (StoreTxn, 1);
  txn->repo_dfd = repo_dfd;
  txn->repo_path = g_strdup (repo_path);
  txn->lock_fd = -1;
  txn->refs = g_ptr_array_new_with_free_func (g_free);
  if (lock == STORE_TXN_LOCK_TRY && !lock_shared (txn, error))
    return NULL;
  if (!unsynced_check (repo_dfd, repo_path, error))
    return NULL;
  /* A step of a build that syncs once at its end (unsynced.h): asked only
   * of a transaction that will write, since the first makes the marker. */
  txn->sync = settings->sync && !unsynced_deferred (repo_dfd);
  g_autoptr(GError) local_error = NULL;
  txn->stage = stage_dir_open (repo_dfd, repo_path, &local_error);
  if (txn->stage == NULL)
    return not_here (error, "%s", local_error->message), NULL;
  txn->marks = partial_marks_new (repo_dfd, repo_path, txn->sync);
  ObjectWriterConfig config = {
    .repo_dfd = repo_dfd,
    .stage_dfd = stage_dir_fd (txn->stage),
    .bare_user = settings->bare_user,
    .sync = txn->sync,
    .min_free_bytes = reserved_bytes (repo_dfd, settings),
    .repo_path = repo_path,
    .marks = txn->marks,
  };
  txn->writer = object_writer_new (&config);
  if (txn->writer == NULL)
    return not_here (error, "%s: no object writer for this file system", repo_path), NULL;
  txn->sink = store_sink_for_writer (txn->writer);
  if (!partial_resolve_leftovers (repo_dfd, repo_path, "file", settings->sync, error))
    return NULL;
  return g_steal_pointer (&txn);
}

StoreSink *
store_txn_sink (StoreTxn *txn)
{
  return txn->sink;
}

ObjectWriter *
store_txn_writer (StoreTxn *txn)
{
  return txn->writer;
}

void
store_txn_set_ref (StoreTxn *txn, const char *ref, const char *commit)
{
  g_ptr_array_add (txn->refs, g_strdup (ref));
  g_ptr_array_add (txn->refs, g_strdup (commit));
}

/* syncfs() on the repository's file system, with SYNC. */
static gboolean
sync_dfd (int repo_dfd, const char *repo_path, gboolean sync, GError **error)
{
  if (sync && syncfs (repo_dfd) < 0)
    return util_fail (error, "%s: syncing the file system: %s", repo_path, g_strerror (errno));
  return TRUE;
}

gboolean
store_txn_finish_run (const StoreTxnFinish *finish, GPtrArray *unstaged, GError **error)
{
  if (!sync_dfd (finish->repo_dfd, finish->repo_path, finish->sync, error)
      || !finish->publish (finish->user_data, error))
    return FALSE;
  g_autoptr(RefsBatch) batch = refs_batch_new (finish->repo_dfd, finish->repo_path);
  for (guint i = 0; finish->refs != NULL && i + 1 < finish->refs->len; i += 2)
    {
      const char *ref = finish->refs->pdata[i], *commit = finish->refs->pdata[i + 1];
      if (refs_batch_stage (batch, ref, commit))
        continue;
      if (unstaged == NULL)
        return not_here (error, "ref %s: not staged", ref);
      g_ptr_array_add (unstaged, g_strdup (ref));
      g_ptr_array_add (unstaged, g_strdup (commit));
    }
  /* Every object is on disk: the commits are complete.  The refs last. */
  return sync_dfd (finish->repo_dfd, finish->repo_path, finish->sync, error)
         && partial_marks_remove (finish->marks, error) && refs_batch_publish (batch, error);
}

/* The writer's objects into objects/; the writer is done with. */
static gboolean
publish_writer (gpointer user_data, GError **error)
{
  StoreTxn *txn = user_data;
  if (!object_writer_publish (txn->writer, error))
    return FALSE;
  g_clear_pointer (&txn->writer, object_writer_free);
  return TRUE;
}

gboolean
store_txn_finish (StoreTxn *txn, GPtrArray *unstaged, GError **error)
{
  StoreTxnFinish finish = {
    txn->repo_dfd, txn->repo_path, txn->sync, publish_writer, txn, txn->marks, txn->refs,
  };
  return store_txn_finish_run (&finish, unstaged, error);
}
