/* cachefetch.h — one commit of an OSTree archive repository (a build
 * cache, see publish.h) fetched over HTTP or from a file:// URL with
 * libcurl and written by the store's own object writer (writer.h): every
 * object checked against its checksum before it is written, and so before
 * anything that names it is; the objects the repository holds already are
 * not fetched.  GLib, libcurl and libdeflate alone.
 *
 * What is read is OSTree's documented archive layout, nothing else: the
 * ref's file refs/heads/REF (no summary, which a static server may serve
 * stale), objects/XX/REST.{commit,commitmeta,dirtree,dirmeta,filez}.  A
 * .filez is a big-endian guint32 size, four zero bytes, a (tuuuusa(ayay))
 * header (content size, owner, group, mode, rdev, symlink target, xattrs;
 * numbers big-endian) and the content as raw deflate; its checksum is
 * that of the content object it stands for (objects.h).
 *
 * The cache is untrusted: a ref's file is at most a checksum line, a
 * metadata object at most 16 MiB, a .filez 512 MiB (its content 4 GiB),
 * content over 16 MiB is inflated a piece at a time and refused once past
 * its header's size, a dirtree's entries are checked as ostree fsck
 * checks them, and the deadlines below hold; the fetch's memory stays
 * bounded whatever the server sends (the man page gives the sum). */
#pragma once

#include <glib.h>

#include "barestore/writer.h"

G_BEGIN_DECLS

/* A ref the cache does not have (a 404, or no such file): a miss. */
#define CACHEFETCH_ERROR (cachefetch_error_quark ())
GQuark cachefetch_error_quark (void);
#define CACHEFETCH_ERROR_NO_REF 1
/* A transfer or the whole fetch ran past its deadline
 * ($APT2OSTREE_CACHE_OBJECT_TIMEOUT, $APT2OSTREE_CACHE_TIMEOUT): a cache
 * too slow or too far to be worth asking again soon. */
#define CACHEFETCH_ERROR_TIMED_OUT 2
/* The commit is not signed by the key the cache's commits must carry
 * (cachepull.h): every other commit of that cache will be refused alike. */
#define CACHEFETCH_ERROR_SIGNATURE 3

/* How many connections at most to one cache: $APT2OSTREE_CACHE_CONNECTIONS
 * (1 to 64), 32 when unset: a distant cache needs many requests in flight. */
guint cachefetch_connections (void);

/* Deadlines, in seconds: each object's transfer ends within
 * $APT2OSTREE_CACHE_OBJECT_TIMEOUT (default 300; the time a transfer waits
 * paused for memory is not counted), the whole fetch of one commit within
 * $APT2OSTREE_CACHE_TIMEOUT (default 3600); each 1 to 86400.  Past one,
 * the fetch fails in one line naming the URL at fault. */
guint cachefetch_object_timeout (void);
guint cachefetch_timeout (void);

/* A check of the commit object COMMIT (fetched from URL, its checksum
 * checked) and its detached metadata COMMITMETA (an a{sv}, or NULL: the
 * cache has none), run before anything under the commit is fetched:
 * FALSE, with ERROR set, refuses it. */
typedef gboolean (*CacheFetchVerify) (GVariant *commit, GVariant *commitmeta, const char *url,
                                      gpointer user_data, GError **error);

/* Fetch the commit REF names in the archive repository at URL into W, the
 * writer of a transaction on the repository REPO_DFD, with CONNECTIONS
 * transfers at a time (metadata before content, so that the directory
 * tree is not walked one round trip at a time), after VERIFY (when not
 * NULL) accepted the commit.  The commit object is written last, with
 * its detached metadata when the cache has one; a commit the repository
 * holds in full is not fetched again.  Returns the commit's checksum.
 * Any failure is one line naming the URL at fault, and the caller drops
 * the transaction. */
char *cachefetch_commit (ObjectWriter *w, int repo_dfd, const char *url, const char *ref,
                         guint connections, CacheFetchVerify verify, gpointer verify_data,
                         GError **error);

G_END_DECLS
