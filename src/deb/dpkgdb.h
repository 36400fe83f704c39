/* dpkgdb.h — the dpkg database stage 1 assembles (a built image's is read
 * back by image/imagedb.h).
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

#include "barestore/sink.h"

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
gboolean dpkgdb_set_aside (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root,
                           GPtrArray *conflicts,
                           GPtrArray *dpkg_names, GCancellable *cancellable, GError **error);

gboolean dpkgdb_assemble (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root,
                          const DpkgdbOptions *options,
                          GCancellable *cancellable, GError **error);

/* dpkg's path filters (pathfilter.h's RULES; nothing when NULL or empty)
 * over ROOT, a combined and assembled stage-1 tree: every path a
 * package's info/PKG.list names and dpkg would not unpack for that package
 * leaves the tree, unless another package unpacks it.  The dpkg database
 * stays as dpkg writes it with the same rules (every path in the .list
 * files, md5sums as shipped), and the rules go to DPKGDB_PATH_FILTERS_CFG
 * for the dpkg in the image.  An excluded directory that still holds
 * something dpkg would unpack is an error (dpkg fails there too).
 * MERGED_USR: paths were rewritten into usr/ (deb.h). */
#define DPKGDB_PATH_FILTERS_CFG "etc/dpkg/dpkg.cfg.d/apt2ostree-path-filters"
gboolean dpkgdb_filter_paths (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root,
                              const char *const *rules,
                              gboolean merged_usr, GCancellable *cancellable, GError **error);

/* Drop from CONFLICTS (TreeConflict*, before dpkgdb_set_aside()) the files
 * RULES exclude: dpkg does not unpack the later package's file either. */
gboolean dpkgdb_filter_conflicts (OstreeRepo *repo, GPtrArray *conflicts, const char *const *rules,
                                  GCancellable *cancellable, GError **error);

G_END_DECLS
