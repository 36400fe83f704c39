/* repo.h — opening the OSTree repository, resolving revisions, and
 * committing a tree to a ref the way a Ninja target needs it. */
#pragma once

#include <ostree.h>

#include "barestore/sink.h"

G_BEGIN_DECLS

/* Open an existing repository; a missing one is an error that says how to
 * create it. */
OstreeRepo *repo_open (const char *path, GCancellable *cancellable, GError **error);

/* Create a repository, or open it when it exists with the same mode.
 * mode NULL: bare as root, bare-user otherwise. */
OstreeRepo *repo_ensure (const char *path, const char *mode, GCancellable *cancellable,
                         GError **error);

/* A revision the user named (ref or commit checksum) resolved to its commit. */
typedef struct {
  char *name;              /* as the user wrote it, for messages */
  char *commit;            /* commit checksum */
  char *root_contents;     /* dirtree checksum of the root */
  char *root_meta;         /* dirmeta checksum of the root */
} RepoRev;

void repo_rev_free (RepoRev *rev);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RepoRev, repo_rev_free)

RepoRev *repo_resolve (OstreeRepo *repo, const char *name, GError **error);

/* The N revisions NAMES, each resolved (RepoRev*, in order). */
GPtrArray *repo_resolve_all (OstreeRepo *repo, const char *const *names, int n, GError **error);

/* The ref name must be valid before any work starts. */
gboolean repo_check_ref_name (const char *ref, GError **error);

/* A write transaction that is aborted unless repo_txn_finish() ran: the
 * store's own in a bare or bare-user repository (barestore/txn.h), with no
 * libostree transaction open; libostree's in any other.  One at a time on
 * an OstreeRepo. */
typedef struct RepoTxn RepoTxn;
RepoTxn *repo_txn_begin (OstreeRepo *repo, GCancellable *cancellable, GError **error);
void repo_txn_free (RepoTxn *txn);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RepoTxn, repo_txn_free)

/* The sink every object of the transaction goes to (owned by TXN, used
 * until it finishes): the store's own writer, or libostree's. */
StoreSink *repo_txn_sink (RepoTxn *txn);

/* The store's own writer behind the sink, or NULL under libostree's
 * transaction (for what makes objects on other threads: cachefetch.c). */
ObjectWriter *repo_txn_writer (RepoTxn *txn);

/* Write MTREE as a parentless commit with time $SOURCE_DATE_EPOCH and
 * point REF at it when the transaction finishes.  When REF already holds
 * that commit the ref file is left alone, so its mtime stays and Ninja's
 * restat prunes what depends on it.  METADATA may be NULL (floating
 * references are sunk).  Several commits may share one transaction. */
gboolean repo_txn_write_commit (RepoTxn *txn, OstreeMutableTree *mtree, const char *ref,
                                const char *subject, GVariant *metadata, char **out_commit,
                                GCancellable *cancellable, GError **error);

/* From now on, repo_txn_write_commit() leaves a REF that already holds a
 * commit of the very same tree (root contents and metadata) as it is,
 * whatever SUBJECT and METADATA say, and returns that commit.  For a
 * command whose commit records its inputs (mod) while what is built from
 * REF reads only its tree. */
void repo_txn_keep_same_tree (RepoTxn *txn);

/* Finish: the one sequence (barestore/txn.h's store_txn_finish_run()),
 * the objects on disk before the refs that name them. */
gboolean repo_txn_finish (RepoTxn *txn, GCancellable *cancellable, GError **error);

/* Point REF at COMMIT when the transaction finishes (unless it already
 * does, then its file is left alone); COMMIT NULL deletes REF, which may
 * then be a remote's, "REMOTE:REF" (what libostree's pull leaves). */
void repo_txn_set_ref (RepoTxn *txn, const char *ref, const char *commit);

/* The time of the commit COMMIT (seconds since the epoch) into
 * *OUT_TIMESTAMP. */
gboolean repo_commit_timestamp (OstreeRepo *repo, const char *commit, gint64 *out_timestamp,
                                GError **error);

/* The commit the ref NAME (exactly that ref, not a checksum prefix) points
 * at, or NULL. */
char *repo_read_ref (OstreeRepo *repo, const char *name);

/* The content of the regular file object CHECKSUM (small files: metadata
 * such as dpkg status stanzas). */
GBytes *repo_read_file (OstreeRepo *repo, const char *checksum, GCancellable *cancellable,
                        GError **error);

G_END_DECLS
