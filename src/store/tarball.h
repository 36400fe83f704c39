/* tarball.h — tar archives in and out of OSTree trees, with libarchive.
 *
 * Reading keeps what a tar records about each entry (owner, mode with
 * setuid/setgid/sticky bits, symlink target, extended attributes, hardlinks)
 * and refuses entries that would land outside the tree.  Writing produces
 * the same bytes for the same tree, so an exported tar can be checksummed. */
#pragma once

#include <ostree.h>

#include "barestore/sink.h"

G_BEGIN_DECLS

/* Read the tar FILE (any compression libarchive reads) into MTREE, writing
 * its objects through SINK (an open transaction's).
 *
 * Directories the tar does not list get 0755 root:root; the root directory
 * gets the metadata of the tar's "./" entry, else 0755 root:root.  Entries
 * OSTree cannot store (device nodes, fifos, sockets) are left out and named
 * in OUT_SKIPPED ("PATH (fifo)"), for the caller to report.  An absolute
 * path, a ".." component or a hardlink to nothing before it is an error
 * naming the entry. */
gboolean tarball_read_to_mtree (StoreSink *sink, const char *file, OstreeMutableTree *mtree,
                                GPtrArray **out_skipped, GCancellable *cancellable,
                                GError **error);

/* Write the tree of COMMIT as a tar to FILE ("-" is standard output).  The
 * compression follows FILE's suffix: .tar, .tar.gz/.tgz, .tar.xz/.txz,
 * .tar.zst/.tzst, .tar.bz2; standard output gets a plain tar.
 *
 * Entries come depth-first in byte order of their names, each directory
 * before its contents, with the exact owner, mode, symlink target and
 * extended attributes (pax SCHILY.xattr), the commit's timestamp as mtime and
 * no user or group names.  Files with the same content are written as
 * separate files (OSTree keeps no link identity), but for the paths the
 * commit's metadata says are linked (barestore/linkgroups.h): each of those
 * that still has its group's content and owner is a hard link to the first
 * one written.  A file is written under a temporary
 * name and renamed into place, so a failure leaves no partial FILE. */
gboolean tarball_write_commit (OstreeRepo *repo, const char *commit, const char *file,
                               GCancellable *cancellable, GError **error);

/* Which layer a file, symlink or hard link of a tree goes to: PATH is its
 * path in the tree ("/usr/bin/a"), CHECKSUM its content object's. */
typedef guint (*TarballLayerFunc) (const char *path, const char *checksum, gpointer user_data);

typedef struct {
  const char *file;  /* a plain tar, created or truncated */
  gint64 mtime;      /* of every entry */
} TarballLayer;

/* The tree of COMMIT split into N_LAYERS plain tars (an OCI image's
 * layers), in one walk, each entry as tarball_write_commit() writes it:
 * each file in the layer LAYER_OF says (a number past the last means the
 * last); each layer has the directories above its entries, with the
 * tree's metadata, and the last layer has every directory.  A hard link
 * only ever names an entry of its own layer.  Unpacked in order, the
 * layers give the tree. */
gboolean tarball_write_layers (OstreeRepo *repo, const char *commit, const TarballLayer *layers,
                               guint n_layers, TarballLayerFunc layer_of, gpointer user_data,
                               GCancellable *cancellable, GError **error);

G_END_DECLS
