/* checkout.h — a tree of a bare repository checked out by hardlinks, fast:
 * one linkat() per file, straight from the dirtree objects. */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

/* Check out the tree CONTENTS + META of the bare repository REPO (as root)
 * into the new directory PATH by hardlinking every file to its object, the
 * way ostree_repo_checkout_at() does in mode NONE, without loading each
 * file object's metadata (a bare object already has the file's owner, mode
 * and xattrs).  A file whose object has too many links already is copied. */
gboolean checkout_bare_hardlinks (OstreeRepo *repo, const char *contents, const char *meta,
                                  const char *path, GCancellable *cancellable, GError **error);

G_END_DECLS
