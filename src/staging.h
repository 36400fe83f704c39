/* staging.h — the staging directory of the open transaction, emptied into
 * objects/ without being deleted (see staging.c). */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

/* A new file descriptor for the staging directory of REPO's open
 * transaction, or -1 when it cannot be told (then commit the usual way). */
int staging_open (OstreeRepo *repo);

/* Rename every staged object into objects/XX/, leaving the XX directories
 * in place (empty) for the next transaction.  *OUT_KNOWN is FALSE when the
 * staging directory holds anything but XX directories (this code then
 * stops there, and what is left is for ostree_repo_commit_transaction()). */
gboolean staging_move_objects (OstreeRepo *repo, int stage_dfd, gboolean *out_known,
                               GError **error);

/* Writes regular-file objects straight into the staging directory: one
 * write of the whole content, no preallocation, no second look for the
 * object in the staging directory.  The objects are the ones libostree
 * would write (owner, mode, xattrs, mtime 0; for bare-user the
 * user.ostreemeta attribute).  NULL when the repository asks for something
 * it does not do (not bare or bare-user, fsync per object, fs-verity) or
 * the file system has no O_TMPFILE: then use libostree.  With fsync off
 * (core.fsync=false) every object goes straight into objects/ and nothing
 * waits. */
typedef struct StagingWriter StagingWriter;
StagingWriter *staging_writer_new (OstreeRepo *repo, int stage_dfd);
void staging_writer_free (StagingWriter *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StagingWriter, staging_writer_free)

/* Write the regular file DATA (SIZE bytes) as the object CHECKSUM, which the
 * caller computed, unless the repository or this transaction has it
 * already.  With fsync on, the object waits, as an open file not linked
 * anywhere, until staging_writer_publish(); when the process runs short of file
 * descriptors, the file system is synced and the waiting objects linked
 * in, or (with almost none to spare) each is linked into the staging
 * directory at once. */
gboolean staging_write_regular (StagingWriter *w, const char *checksum, guint32 uid, guint32 gid,
                                guint32 mode, GVariant *xattrs, const guint8 *data, gsize size,
                                GError **error);

/* The same for a symlink to TARGET (the object CHECKSUM): in a bare
 * repository the symlink itself, made in the staging directory and moved
 * into objects/ with the rest (at once with fsync off); in bare-user a
 * regular file holding TARGET, as a regular file waits. */
gboolean staging_write_symlink (StagingWriter *w, const char *checksum, guint32 uid, guint32 gid,
                                const char *target, GVariant *xattrs, GError **error);

/* Write the metadata object OBJECT (a dirmeta, dirtree or commit variant;
 * a floating reference is taken) as libostree writes it: its normal form, mode 0644; its checksum, which
 * is returned, is the SHA-256 of those bytes.  Nothing is written when the
 * repository or this transaction has it already. */
char *staging_write_metadata (StagingWriter *w, OstreeObjectType type, GVariant *object,
                              GError **error);

/* Write the dirtree objects of MTREE and of every directory under it that
 * has none yet (the same objects ostree_repo_write_mtree() writes), and set
 * their contents checksums, so that ostree_repo_write_mtree() then finds
 * nothing left to write. */
gboolean staging_write_mtree (StagingWriter *w, OstreeMutableTree *mtree, GError **error);

/* Link the waiting objects into objects/.  Call it only after a syncfs()
 * of the repository's file system, so that no object appears there before
 * its content is on disk. */
gboolean staging_writer_publish (StagingWriter *w, GError **error);

G_END_DECLS
