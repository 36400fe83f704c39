/* lock.h — make a Lockfile: what "apt2ostree lock" does between reading
 * its arguments and writing the file. */
#pragma once

#include <gio/gio.h>

#include "apt/lockfile.h"
#include "apt/sources.h"

G_BEGIN_DECLS

/* Fetch and verify the Release and Packages indices of every source in
 * SOURCES (in that order: the order is the request's), resolve REQUEST with
 * them and describe the result as a Lockfile whose request is REQUEST with
 * the sources' names.  Indices are kept in CACHE_DIR.
 *
 * PREVIOUS (or NULL) is the lockfile being updated: a source whose Release
 * is dated before the one PREVIOUS was made from is refused, as apt refuses
 * to go back to an older Release (a stale mirror, or a replayed file). */
Lockfile *lock_resolve (const LockRequest *request, SourcesList *sources, const char *cache_dir,
                        Lockfile *previous, GCancellable *cancellable, GError **error);

/* The variants --variant accepts (the resolver's), NULL-terminated. */
const char *const *lock_variants (void);

G_END_DECLS
