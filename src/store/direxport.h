/* direxport.h — a tree out of the repository as a directory ("export
 * --dir"), beside the tar writer (tarball.h).
 *
 * A copy, never hardlinks into the repository: the user may change the
 * files.  As root the files keep their real owners and every extended
 * attribute; otherwise they belong to the caller, setuid/setgid bits are
 * dropped (libostree's user mode) and only user.* attributes are set.  The
 * directory must be new or empty; a failed export removes what it wrote. */
#pragma once

#include <ostree.h>

#include "store/repo.h"

G_BEGIN_DECLS

/* Copy REV's tree into DIR.  *OUT_DROPPED: the extended attributes left
 * out (not user.*, or on symlinks) because only root can set them. */
gboolean direxport_write (OstreeRepo *repo, RepoRev *rev, const char *dir, guint *out_dropped,
                          GCancellable *cancellable, GError **error);

G_END_DECLS
