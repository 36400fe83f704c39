/* content.h — content objects written from memory (regular files and
 * symlinks), with the object checksum computed here (objects.c) instead
 * of by libostree. */
#pragma once

#include <ostree.h>

#include "store/writer.h"

G_BEGIN_DECLS

/* The OSTree checksum of a regular file with these properties and DATA, the
 * same as ostree_checksum_file_from_input() gives, as 64 hex digits. */
char *content_checksum (guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs,
                        const guint8 *data, gsize size, GError **error);

/* Store a regular file as a content object of REPO and return its
 * checksum.  In a bare or bare-user repository the checksum is computed
 * here; the object is written only when REPO does not hold it yet, and
 * libostree does not hash the data a second time (an archive repository
 * leaves both to libostree).  HEADERS (from objects_headers_new(), or
 * NULL) keeps the file headers of files without xattrs for the next call. */
char *content_write_regular (OstreeRepo *repo, GHashTable *headers, guint32 uid, guint32 gid,
                             guint32 mode, GVariant *xattrs, const guint8 *data, gsize size,
                             GCancellable *cancellable, GError **error);

/* The file info OSTree stores for a regular file of SIZE bytes (MODE: its
 * permission bits). */
GFileInfo *content_regular_info (guint32 uid, guint32 gid, guint32 mode, gsize size);

/* The file info OSTree stores for a symlink to TARGET. */
GFileInfo *content_symlink_info (guint32 uid, guint32 gid, const char *target);

/* Store a content object and return its checksum: a regular file (INFO,
 * and DATA to read its size from) or a symlink (INFO, DATA NULL), with
 * XATTRS (or NULL); through the transaction's writer when it has one,
 * else through libostree, which computes the checksum. */
char *content_write_stream (OstreeRepo *repo, GFileInfo *info, GVariant *xattrs,
                            GInputStream *data, GCancellable *cancellable, GError **error);

/* The same for a symlink to TARGET. */
char *content_write_symlink (OstreeRepo *repo, guint32 uid, guint32 gid, const char *target,
                             GVariant *xattrs, GCancellable *cancellable, GError **error);

/* A GInputStream that reads with READ (USER_DATA passed on): data taken as
 * it comes, so a large file never sits in memory. */
GInputStream *content_read_stream_new (ObjectWriterRead read, gpointer user_data);

/* Store a regular file of SIZE bytes read with READ through libostree (the
 * repositories the writer does not serve: archive mode, per-object fsync,
 * fs-verity) and return its checksum; fewer bytes than SIZE is an error. */
char *content_write_regular_read (OstreeRepo *repo, guint32 uid, guint32 gid, guint32 mode,
                                  GVariant *xattrs, guint64 size, ObjectWriterRead read,
                                  gpointer user_data, GError **error);

G_END_DECLS
