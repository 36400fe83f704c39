/* resolve.h — from Packages indices and a request to the exact packages
 * apt (as mmdebstrap drives it) would install, solved by libsolv. */
#pragma once

#include "apt/packages.h"

G_BEGIN_DECLS

/* A configured source: its name (for the lockfile), its apt pin priority
 * (500 is apt's default; a higher priority wins over a higher version, a
 * negative one is never used) and its Packages indices (paths of plain or
 * compressed files, one per component and architecture). */
typedef struct {
  char *name;
  int pin_priority;
  GPtrArray *index_paths;   /* char * */
} ResolveSource;

ResolveSource *resolve_source_new (const char *name, int pin_priority);
void resolve_source_free (ResolveSource *source);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ResolveSource, resolve_source_free)

/* packages: NULL-terminated; each "name", "name=version" or "name:arch".
 * variant: essential, apt, minbase, required, buildd, important, standard,
 * custom; NULL means essential plus the listed packages.
 * arch: the dpkg architecture of the image (required).
 * cache_dir: where parsed indices are kept between runs (NULL: nowhere);
 * see packages_store_load(). */
typedef struct {
  char **packages;
  const char *variant;
  const char *arch;
  gboolean recommends;
  const char *cache_dir;
} ResolveRequest;

/* The known variant names, NULL-terminated, for --help and messages. */
const char *const *resolve_variants (void);

/* The packages to install (DebPackage *, owned by the array), in install
 * order: dependencies before the packages that need them, as dpkg would
 * unpack them; inside a dependency cycle Pre-Depends still come first; where
 * dependencies leave a choice, by name.  The order depends on the packages
 * only (not on caching or load order), so a lockfile's order is stable.
 *
 * Errors are one line: an unknown variant or architecture, a package that no
 * source has, a virtual package several packages provide, or an unsolvable
 * request (each problem in apt's words, joined by "; "). */
GPtrArray *resolve_request (GPtrArray *sources, const ResolveRequest *request, GError **error);

G_END_DECLS
