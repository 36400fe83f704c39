/* content.h — content objects (regular files and symlinks): their
 * checksum computed here (objects.c) instead of by libostree, a file
 * written through a transaction's sink, and the sink over libostree that
 * a RepoTxn hands out where the store's own transaction does not serve. */
#pragma once

#include <ostree.h>

#include "barestore/partial.h"
#include "barestore/sink.h"

G_BEGIN_DECLS

/* The OSTree checksum of a regular file with these properties and DATA, the
 * same as ostree_checksum_file_from_input() gives, as 64 hex digits. */
char *content_checksum (guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs,
                        const guint8 *data, gsize size, GError **error);

/* The file info OSTree stores for a regular file of SIZE bytes (MODE: its
 * permission bits). */
GFileInfo *content_regular_info (guint32 uid, guint32 gid, guint32 mode, gsize size);

/* The file info OSTree stores for a symlink to TARGET. */
GFileInfo *content_symlink_info (guint32 uid, guint32 gid, const char *target);

/* Store a content object through SINK and return its checksum: a regular
 * file (INFO, and DATA to read its size from) or a symlink (INFO, DATA
 * NULL), with XATTRS (or NULL). */
char *content_write_file (StoreSink *sink, GFileInfo *info, GVariant *xattrs, GInputStream *data,
                          GCancellable *cancellable, GError **error);

/* A GInputStream that reads with READ (USER_DATA passed on): data taken as
 * it comes, so a large file never sits in memory. */
GInputStream *content_read_stream_new (ObjectWriterRead read, gpointer user_data);

/* The sink over libostree's transaction on REPO (the repositories the
 * store's writer does not serve: archive mode, per-object fsync,
 * fs-verity), to free with g_free().  In a bare or bare-user repository
 * the checksum is computed here and libostree does not hash the data a
 * second time; an archive repository leaves both to libostree.  Each new
 * commit is added to MARKS (or NULL). */
StoreSink *content_ostree_sink_new (OstreeRepo *repo, PartialMarks *marks);

G_END_DECLS
