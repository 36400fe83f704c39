/* sink.h — where a transaction's objects go: the one object sink every
 * writer of the program is handed by its transaction (barestore/txn.h, or
 * store/repo.h's RepoTxn over libostree).  Each function returns the
 * object's checksum.  GLib alone. */
#pragma once

#include <glib.h>

#include "barestore/objects.h"

G_BEGIN_DECLS

/* Gives a file's content a piece at a time: how many bytes it put in BUF
 * (at most LEN), 0 at the end, -1 with ERROR set. */
typedef gssize (*ObjectWriterRead) (gpointer user_data, guint8 *buf, gsize len, GError **error);

/* The store's own object writer (writer.h, private to store/). */
typedef struct ObjectWriter ObjectWriter;

typedef struct StoreSink StoreSink;
struct StoreSink {
  /* A regular file (MODE: permission bits) of SIZE bytes at DATA; HEADERS
   * is an objects_headers_new() cache, or NULL. */
  char *(*regular) (StoreSink *sink, GHashTable *headers, guint32 uid, guint32 gid, guint32 mode,
                    GVariant *xattrs, const guint8 *data, gsize size, GError **error);
  /* The same, too large to hold in memory: READ gives it. */
  char *(*regular_stream) (StoreSink *sink, guint32 uid, guint32 gid, guint32 mode,
                           GVariant *xattrs, guint64 size, ObjectWriterRead read,
                           gpointer user_data, GError **error);
  char *(*symlink) (StoreSink *sink, guint32 uid, guint32 gid, const char *target,
                    GVariant *xattrs, GError **error);
  /* A dirmeta, dirtree or commit (floating references are taken). */
  char *(*metadata) (StoreSink *sink, ObjectsType type, GVariant *object, GError **error);
};

/* The sink of the store's own writer W (the transaction's: txn.c), to
 * free with g_free(). */
StoreSink *store_sink_for_writer (ObjectWriter *w);

G_END_DECLS
