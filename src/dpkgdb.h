/* dpkgdb.h — stage 1's dpkg database.
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

gboolean dpkgdb_assemble (OstreeRepo *repo, OstreeMutableTree *root, const DpkgdbOptions *options,
                          GCancellable *cancellable, GError **error);

G_END_DECLS
