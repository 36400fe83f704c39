/* sink.c — the object sink over the store's own writer; see sink.h. */
#include "config.h"

#include "barestore/sink.h"
#include "barestore/writer.h"

typedef struct {
  StoreSink sink;
  ObjectWriter *writer;
} WriterSink;

static char *
writer_regular (StoreSink *sink, GHashTable *headers, guint32 uid, guint32 gid, guint32 mode,
                GVariant *xattrs, const guint8 *data, gsize size, GError **error)
{
  return object_writer_regular (((WriterSink *) sink)->writer, headers, uid, gid, mode, xattrs,
                                data, size, error);
}

static char *
writer_regular_stream (StoreSink *sink, guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs,
                       guint64 size, ObjectWriterRead read, gpointer user_data, GError **error)
{
  return object_writer_regular_stream (((WriterSink *) sink)->writer, uid, gid, mode, xattrs,
                                       size, read, user_data, error);
}

static char *
writer_symlink (StoreSink *sink, guint32 uid, guint32 gid, const char *target, GVariant *xattrs,
                GError **error)
{
  return object_writer_symlink (((WriterSink *) sink)->writer, uid, gid, target, xattrs, error);
}

static char *
writer_metadata (StoreSink *sink, ObjectsType type, GVariant *object, GError **error)
{
  return object_writer_metadata (((WriterSink *) sink)->writer, type, object, NULL, error);
}

StoreSink *
store_sink_for_writer (ObjectWriter *w)
{
  WriterSink *ws = g_new0 (WriterSink, 1);
  ws->sink = (StoreSink) { writer_regular, writer_regular_stream, writer_symlink,
                           writer_metadata };
  ws->writer = w;
  return &ws->sink;
}
