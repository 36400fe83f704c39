/* imagedb.h — a configured image's dpkg database read back: the one reader
 * of an image's var/lib/dpkg/status for what works on whole images (sbom,
 * diff, deployable, build --incremental).  Stage 1 writes the database
 * (deb/dpkgdb.h); the image's own dpkg keeps it after that. */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

/* The stanzas of ROOT's var/lib/dpkg/status (a tree from
 * ostree_repo_read_commit()), as deb822.h tables.  NAME names the image in
 * errors. */
GPtrArray *imagedb_read_status (GFile *root, const char *name, GCancellable *cancellable,
                                GError **error);

/* The same from ROOT, a tree being edited in REPO. */
GPtrArray *imagedb_read_status_mtree (OstreeRepo *repo, OstreeMutableTree *root, const char *name,
                                      GCancellable *cancellable, GError **error);

typedef enum {
  IMAGEDB_INSTALLED,  /* Status "… installed" */
  IMAGEDB_PRESENT,    /* any but "not-installed" and "config-files" (unpacked, half-configured, …) */
} ImagedbState;

/* The stanzas of STANZAS whose package is in STATE (borrowed from
 * STANZAS), each with Package, Version and Architecture, else an error
 * naming the image NAME. */
GPtrArray *imagedb_packages (GPtrArray *stanzas, ImagedbState state, const char *name,
                             GError **error);

G_END_DECLS
