/* checkout.h — a tree of a bare or bare-user repository checked out by
 * hardlinks, fast: one linkat() per file, straight from the dirtree objects,
 * on a few threads. */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

/* Check out the tree CONTENTS + META of REPO into the new directory PATH by
 * hardlinking every file to its object.
 *
 * A bare repository (as root): what ostree_repo_checkout_at() gives in mode
 * NONE, without loading each file object's metadata (a bare object already
 * has the file's owner, mode and xattrs); directories get their owner, mode
 * and xattrs.
 *
 * A bare-user repository (not root): what it gives in mode USER: files
 * hardlinked to their objects (which carry OSTree's metadata in the
 * user.ostreemeta xattr), symlinks made, empty files and files their owner
 * cannot read copied, directories owned by the caller with the stored mode
 * (plus read and search for their owner, which the caller needs and the
 * command does not see: fakeroot shows it the stored mode).
 *
 * Either way a file whose object has too many links already is copied, and
 * directories have the mtime 0, as ostree's checkout gives them. */
gboolean checkout_hardlinks (OstreeRepo *repo, const char *contents, const char *meta,
                             const char *path, GCancellable *cancellable, GError **error);

/* Bring the checkout at PATH (checkout_hardlinks() of the tree FROM_CONTENTS
 * + FROM_META of a bare repository, as root) to the tree TO_CONTENTS +
 * TO_META: what left is removed, what arrived or changed is hardlinked,
 * directories get their new owner and mode; the cost is what differs.
 * Afterwards PATH is what a checkout of the new tree gives (a change of a
 * directory's xattrs is an error: check it out again). */
gboolean checkout_update (OstreeRepo *repo, const char *path, const char *from_contents,
                          const char *from_meta, const char *to_contents, const char *to_meta,
                          GCancellable *cancellable, GError **error);

/* A checksum of the tree at PATH as it lies on disk: names, inode numbers,
 * types, modes, owners and sizes of every entry, and the change time of
 * every directory and of every file that is no object's hardlink.  Any
 * change to the tree (an entry made, removed, renamed or replaced, a
 * directory's metadata, a copied file's content) moves it.  What it cannot
 * see is a write into a hardlinked file: that changes the repository's
 * object itself, which every checkout of it would show. */
char *checkout_fingerprint (const char *path, GError **error);

G_END_DECLS
