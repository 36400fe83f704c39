/* resolve.h — from Packages indices and a request to the exact packages
 * apt (as mmdebstrap drives it) would install, solved by libsolv. */
#pragma once

#include "packages.h"

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
 * arch: the dpkg architecture of the image (required). */
typedef struct {
  char **packages;
  const char *variant;
  const char *arch;
  gboolean recommends;
} ResolveRequest;

/* The known variant names, NULL-terminated, for --help and messages. */
const char *const *resolve_variants (void);

/* The packages to install (DebPackage *, owned by the array), in install
 * order: libsolv's transaction order, dependencies (Pre-Depends above all)
 * before the packages that need them, as dpkg would unpack them.
 *
 * Errors are one line: an unknown variant or architecture, a package that no
 * source has, a virtual package several packages provide, or an unsolvable
 * request (each problem in apt's words, joined by "; "). */
GPtrArray *resolve_request (GPtrArray *sources, const ResolveRequest *request, GError **error);

G_END_DECLS
