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

G_END_DECLS
