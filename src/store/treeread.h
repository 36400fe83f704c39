/* treeread.h — a file of a commit read in place (no checkout), with the
 * tree's own symbolic links followed inside the tree, as a chroot would:
 * a package's doc directory is often a link to another package's. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* The text of PATH (relative to the root) in the tree ROOT (from
 * ostree_repo_read_commit()); NULL without an error when there is no such
 * file (or it is a directory, or links loop). */
char *treeread_text (GFile *root, const char *path, GCancellable *cancellable, GError **error);

G_END_DECLS
