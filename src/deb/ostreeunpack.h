/* ostreeunpack.h — the unpack-deb job (unpack.h) in the commands module:
 * a bare or bare-user repository the store's own transaction serves goes
 * the lean front's one path (leanrepo.h); what that path defers (another
 * repository mode, a config key it does not know, an alias ref, the lock
 * held, ...) runs over the repository opened with libostree, its objects
 * through the sink of a RepoTxn (store/repo.h). */
#pragma once

#include <ostree.h>

#include "deb/unpack.h"

G_BEGIN_DECLS

/* unpack_run() of ARGS into REPO, downloads through the download cache. */
gboolean ostreeunpack_run (OstreeRepo *repo, const UnpackArgs *args, GError **error);

G_END_DECLS
