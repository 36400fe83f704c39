/* dirimport.h — a directory on disk into a tree ("import DIR"), beside
 * the tar reader (tarball.h): the files with their owners, modes and
 * extended attributes as they are on disk.  (libostree's
 * ostree_repo_write_directory_to_mtree() fails on the first fifo or device
 * node, with no way to leave them out.) */
#pragma once

#include <ostree.h>

#include "barestore/sink.h"

G_BEGIN_DECLS

/* Write the files of DIR into MTREE through SINK (an open transaction's);
 * what OSTree cannot store (device nodes, fifos, sockets) is left out and
 * named in SKIPPED ("PATH (fifo)"). */
gboolean dirimport_to_mtree (StoreSink *sink, const char *dir, OstreeMutableTree *mtree,
                             GPtrArray *skipped, GCancellable *cancellable, GError **error);

G_END_DECLS
