/* writer.h — the objects of a bare or bare-user repository written by
 * this process, with GLib alone: regular files, symlinks, dirmeta, dirtree
 * and commit objects, the same bytes, owner, mode, xattrs and mtime as
 * libostree writes (see writer.c for what is left out, and why). */
#pragma once

#include <glib.h>

#include "barestore/objects.h"
#include "barestore/partial.h"
#include "barestore/sink.h"

G_BEGIN_DECLS

typedef struct {
  int repo_dfd;               /* the repository (not owned) */
  int stage_dfd;              /* where objects are made before they go into objects/ */
  gboolean bare_user;         /* bare-user; else bare */
  gboolean sync;              /* core.fsync: objects wait for staging... publish */
  guint64 min_free_bytes;     /* the min-free-space reserve, 0 for none */
  const char *repo_path;      /* for messages */
  PartialMarks *marks;        /* the transaction's commitpartial markers (not owned) */
} ObjectWriterConfig;


/* The names of the files the writer keeps in the staging directory. */
#define OBJECT_WRITER_STAGE_PREFIX "apt2ostree-"

/* NULL when the file system of STAGE_DFD is not one known to support
 * O_TMPFILE, or the repository cannot be read: then let libostree write. */
ObjectWriter *object_writer_new (const ObjectWriterConfig *config);
void object_writer_free (ObjectWriter *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ObjectWriter, object_writer_free)

/* Each writes an object unless the repository or this writer has it
 * already, and returns its checksum.  With sync, a regular file (and a
 * bare-user symlink, a regular file there) waits as an open file linked
 * nowhere until object_writer_publish(); a bare symlink waits in the
 * staging directory.  Without, everything goes straight into objects/.
 *
 * A regular file: DATA, SIZE bytes; MODE its permission bits; HEADERS an
 * objects_headers_new() cache or NULL. */
char *object_writer_regular (ObjectWriter *w, GHashTable *headers, guint32 uid, guint32 gid,
                             guint32 mode, GVariant *xattrs, const guint8 *data, gsize size,
                             GError **error);

/* A regular file that must have the checksum EXPECTED (one fetched from
 * elsewhere), in two steps, so that the first can run on other threads:
 * object_writer_make_checked() hashes DATA (SIZE bytes) with its header,
 * and when the checksum is EXPECTED writes it into a new file linked
 * nowhere, owner, mode and xattrs set; it touches nothing of W's but what
 * object_writer_new() set, and may run on any thread, many at once.  With
 * another checksum nothing is written and the error says which.
 * object_writer_add_made(), on the thread that owns W, takes the file as
 * object_writer_regular() would have stored it (closed unused when the
 * repository has the object already) and returns its checksum.
 *
 * A made file is an open file until it is added: have at most
 * OBJECT_WRITER_MADE_MAX made and not added at once (they fit in the
 * descriptors the writer leaves free of the process's file limit). */
typedef struct ObjectWriterMade ObjectWriterMade;
#define OBJECT_WRITER_MADE_MAX 64
ObjectWriterMade *object_writer_make_checked (ObjectWriter *w, const char *expected, guint32 uid,
                                              guint32 gid, guint32 mode, GVariant *xattrs,
                                              const guint8 *data, gsize size, GError **error);
/* The same, the content (SIZE bytes) given by READ a piece at a time (it
 * is called until it has given SIZE bytes: it returns how many it put in
 * BUF, 0 at the end, -1 with ERROR set), so a large file is never whole
 * in memory: written into the new file as it is hashed, refused as soon
 * as READ gives more than SIZE, and dropped unless its checksum is
 * EXPECTED.  (ObjectWriterRead: sink.h.) */
ObjectWriterMade *object_writer_make_checked_stream (ObjectWriter *w, const char *expected,
                                                     guint32 uid, guint32 gid, guint32 mode,
                                                     GVariant *xattrs, guint64 size,
                                                     ObjectWriterRead read, gpointer user_data,
                                                     GError **error);
char *object_writer_add_made (ObjectWriter *w, ObjectWriterMade *made, GError **error);
void object_writer_made_free (ObjectWriterMade *made);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ObjectWriterMade, object_writer_made_free)

/* A regular file of SIZE bytes that READ (as above) streams, for files
 * too large to hold in memory. */
char *object_writer_regular_stream (ObjectWriter *w, guint32 uid, guint32 gid, guint32 mode,
                                    GVariant *xattrs, guint64 size, ObjectWriterRead read,
                                    gpointer user_data, GError **error);

/* A symlink to TARGET. */
char *object_writer_symlink (ObjectWriter *w, guint32 uid, guint32 gid, const char *target,
                             GVariant *xattrs, GError **error);

/* A dirmeta, dirtree or commit OBJECT (a floating reference is taken),
 * stored in its normal form; its checksum is the SHA-256 of those bytes.
 * A commit is marked partial first (partial.h).  DETACHED (a commit's
 * detached metadata, a{sv}, or NULL; a floating reference is taken) is
 * stored beside the commit as its .commitmeta, published before it (a
 * .commitmeta the repository has is kept). */
char *object_writer_metadata (ObjectWriter *w, ObjectsType type, GVariant *object,
                              GVariant *detached, GError **error);

/* Link the waiting objects into objects/ and move the staged symlinks
 * there, in the order they were written: content, dirmeta and dirtrees
 * before the commit that names them, so that a process killed on the way
 * never leaves a commit whose objects are not all there.  Call it only
 * after a syncfs() of the repository's file system, so that no object
 * appears there before its content is on disk. */
gboolean object_writer_publish (ObjectWriter *w, GError **error);

G_END_DECLS
