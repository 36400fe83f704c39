/* overlay.h — trees put over a base tree the way files are copied into a
 * root filesystem: what "build --before-configure/--after-configure" and
 * "apt2ostree overlay" do.  Metadata only.
 *
 * Unlike a plain union (combine), and unlike combine --later-wins:
 *   - a file or symlink of a later tree replaces the one at its path;
 *   - a directory the base has keeps the base's owner and mode: a hook
 *     directory made with mktemp -d (mode 0700, owned by the user) must not
 *     make the image's root, or its /etc, private;
 *   - a directory the base lacks comes with the metadata of the last tree
 *     that has it;
 *   - a directory of a later tree where the base has a file or a symlink
 *     (bin, a symlink to usr/bin in a merged-/usr image), or a file where
 *     the base has a directory, is an error naming the path: taken
 *     literally it would replace the base's entry and all below it. */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

/* REVS (RepoRev*): the base first, then the trees put over it, in order. */
OstreeMutableTree *overlay_trees (OstreeRepo *repo, GPtrArray *revs, GCancellable *cancellable,
                                  GError **error);

G_END_DECLS
