/* txn.h — the project's own transaction on a bare or bare-user
 * repository: what the repository's config asks of it, the shared lock,
 * its staging directory (stagedir.h), the writer that makes its objects
 * (writer.h), its commits' partial markers (partial.h) and its refs
 * (refs.h).  Finished, every object is on disk before a commit naming it
 * is in objects/, and every commit before a ref names it; freed
 * unfinished, it leaves nothing visible.  GLib alone: the commands module
 * (repo.c) and the lean unpack-deb path (deb/leanrepo.c) both run it. */
#pragma once

#include <glib.h>

#include "barestore/partial.h"
#include "barestore/sink.h"

G_BEGIN_DECLS

/* A repository, file system or lock this transaction does not serve: the
 * caller leaves the work to libostree (or, in the lean path, to the
 * commands module). */
#define STORE_TXN_ERROR (store_txn_error_quark ())
GQuark store_txn_error_quark (void);
#define STORE_TXN_ERROR_NOT_HERE 1

/* What a repository's config asks of a transaction. */
typedef struct {
  gboolean bare_user;       /* core.mode=bare-user; else bare */
  gboolean sync;            /* core.fsync (true when unset) */
  guint min_free_percent;   /* core.min-free-space-percent (3 when unset) */
  guint64 min_free_mb;      /* core.min-free-space-size in MiB, which wins; 0: unset */
} StoreTxnSettings;

/* Read CONFIG (a repository's config file, loaded) as libostree reads
 * those keys.  A NOT_HERE error when it asks for what this transaction
 * does not do (another repository version or mode, objects synced one by
 * one, fs-verity) or holds a value libostree would refuse. */
gboolean store_txn_settings_read (GKeyFile *config, StoreTxnSettings *out, GError **error);

typedef struct StoreTxn StoreTxn;

/* The repository's shared lock, the one every libostree transaction
 * takes (and `ostree prune` takes exclusively). */
typedef enum {
  STORE_TXN_LOCK_TRY,   /* taken by begin, without waiting: held elsewhere is NOT_HERE */
  STORE_TXN_LOCK_HELD,  /* the caller holds it (libostree's lock, which waits) */
} StoreTxnLock;

/* Begin a transaction on the repository REPO_DFD (REPO_PATH for messages;
 * both outlive it).  NOT_HERE when the lock is taken (LOCK_TRY), no
 * staging directory can be had or the file system is not one the writer
 * knows; then nothing was written. */
StoreTxn *store_txn_begin (int repo_dfd, const char *repo_path, const StoreTxnSettings *settings,
                           StoreTxnLock lock, GError **error);

/* The sink its objects go to (owned by TXN; used until it finishes), and
 * the writer behind it, for what makes objects on other threads
 * (cachefetch.c). */
StoreSink *store_txn_sink (StoreTxn *txn);
ObjectWriter *store_txn_writer (StoreTxn *txn);

/* Point REF at COMMIT when the transaction finishes.  (The caller leaves
 * out a ref that holds COMMIT already, so that its file keeps its mtime.) */
void store_txn_set_ref (StoreTxn *txn, const char *ref, const char *commit);

/* Finish: the file system synced, the objects into objects/ (each commit
 * after its objects), the refs' new files written, synced again, the
 * commits unmarked, the refs renamed into place (without core.fsync the
 * same, minus the syncs and the markers).  A ref whose place this code
 * does not write (an alias, a directory) or beyond what the file limit
 * spares is added to UNSTAGED (ref, commit, ...; strings the array
 * frees) for the caller to write once this returns; with UNSTAGED NULL it
 * is a NOT_HERE error, after the objects are in. */
gboolean store_txn_finish (StoreTxn *txn, GPtrArray *unstaged, GError **error);

/* The finish sequence itself, for store_txn_finish() and for libostree's
 * transaction behind the same seam (repo.c): the file system synced
 * (with SYNC), PUBLISH puts the objects into objects/, the new files of
 * REFS (ref, commit, ...; NULL for none) written, synced again, the
 * commits of MARKS unmarked, the refs renamed into place.  UNSTAGED as
 * for store_txn_finish(). */
typedef struct {
  int repo_dfd;
  const char *repo_path;
  gboolean sync;
  gboolean (*publish) (gpointer user_data, GError **error);
  gpointer user_data;
  PartialMarks *marks;
  GPtrArray *refs;
} StoreTxnFinish;
gboolean store_txn_finish_run (const StoreTxnFinish *finish, GPtrArray *unstaged, GError **error);

/* Release the transaction; unfinished, what it wrote is dropped. */
void store_txn_free (StoreTxn *txn);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StoreTxn, store_txn_free)

G_END_DECLS
