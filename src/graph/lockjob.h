/* lockjob.h — the lock as one job, for "lock" and "build --include": the
 * option values checked, the request read, the sources' network settings
 * checked, the local .debs read, the request resolved, the lockfile
 * written and what changed said. */
#pragma once

#include <gio/gio.h>

#include "apt/lockinput.h"
#include "base/cmdline.h"

G_BEGIN_DECLS

/* Lock PATH (a package list; with ARGS->update, the lockfile to update)
 * as ARGS (the option values of "lock"; path_filters NULL: none) ask.
 * A bad option value is a usage error of INV (whose name also starts the
 * lines VERBOSE writes, saying each source's proxy and CA file).  On
 * stdout: the lockfile's name and size, and the packages that changed from
 * the lockfile it replaces, one a line, as "diff" prints them. */
gboolean lockjob_run (CmdInvocation *inv, LockArgs *args, const char *path, gboolean verbose,
                      GCancellable *cancellable, GError **error);

G_END_DECLS
