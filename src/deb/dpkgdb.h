/* dpkgdb.h — the dpkg database: stage 1 assembles it, and a built image's
 * is read back (dpkgdb_read_status, for sbom and diff).
 *
 * A union of package trees (see deb.h) holds every package's files, its
 * var/lib/dpkg/info files and its status stanza under DEB_STATUS_DIR.  This
 * turns that union into a tree dpkg accepts as "every package unpacked":
 * var/lib/dpkg/status assembled from the stanzas (sorted by name, as dpkg
 * writes it), the empty available, diversions and statoverride files, arch,
 * info/format, the directories dpkg expects, and, for merged-/usr images,
 * the links usrmerge makes: bin, sbin and lib -> usr/…, and lib32, lib64,
 * libx32 and libo32 when usr/ has them.  Only the small stanza files are
 * read. */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

typedef struct {
  const char *arch;        /* the image's (native) dpkg architecture */
  gboolean merged_usr;
} DpkgdbOptions;

/* Files two packages both ship, set aside by stage 1 (tree.h's
 * TREE_COMBINE_SET_ASIDE) for stage 2 to place once the preinst scripts have
 * made their diversions: the later package's file is kept at
 * DPKGDB_SET_ASIDE_DIR/PKG/PATH, and DPKGDB_SET_ASIDE_LIST has a line
 * "PATH EARLIER-PKG LATER-PKG" for each (dpkg names). */
#define DPKGDB_SET_ASIDE_DIR "var/lib/apt2ostree/set-aside"
#define DPKGDB_SET_ASIDE_LIST "var/lib/apt2ostree/set-aside.list"

/* CONFLICTS: TreeConflict*; DPKG_NAMES: the dpkg name of each tree. */
gboolean dpkgdb_set_aside (OstreeRepo *repo, OstreeMutableTree *root, GPtrArray *conflicts,
                           GPtrArray *dpkg_names, GCancellable *cancellable, GError **error);

gboolean dpkgdb_assemble (OstreeRepo *repo, OstreeMutableTree *root, const DpkgdbOptions *options,
                          GCancellable *cancellable, GError **error);

/* The stanzas of the dpkg database of a built image: ROOT's
 * var/lib/dpkg/status (a tree from ostree_repo_read_commit()), as deb822.h
 * tables.  NAME names the image in errors. */
GPtrArray *dpkgdb_read_status (GFile *root, const char *name, GCancellable *cancellable,
                               GError **error);

/* A stanza of a package the caller keeps must have Package, Version and
 * Architecture; else an error naming the image NAME. */
gboolean dpkgdb_check_stanza (GHashTable *stanza, const char *name, GError **error);

G_END_DECLS
