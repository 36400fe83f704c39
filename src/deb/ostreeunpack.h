/* ostreeunpack.h — the unpack-deb job (unpack.h) over a repository opened
 * with libostree: the commands module's path.  Its objects go through the
 * store's writer where the transaction has one (bare, bare-user), else
 * through libostree (archive mode, per-object fsync, fs-verity).  The lean
 * program's path, without libostree, is leanrepo.h. */
#pragma once

#include <ostree.h>

#include "deb/unpack.h"

G_BEGIN_DECLS

/* unpack_run() of ARGS into REPO, downloads through the download cache. */
gboolean ostreeunpack_run (OstreeRepo *repo, const UnpackArgs *args, GError **error);

G_END_DECLS
