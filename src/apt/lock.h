/* lock.h — make a Lockfile: what "apt2ostree lock" does between reading
 * its arguments and writing the file. */
#pragma once

#include <gio/gio.h>

#include "apt/lockfile.h"
#include "apt/sources.h"

G_BEGIN_DECLS

/* A source of local .debs with no index of their own (lock --debs DIR;
 * the .debs a package list names): a Packages index made from the .debs'
 * control files (deb/localdebs.h), each Filename the .deb's path relative
 * to the lockfile's directory.  It competes with the archives by version
 * and pin priority as any source does. */
typedef struct {
  char *name;
  int pin_priority;
  char *dir;            /* the directory, relative to the lockfile's; NULL
                         * for the .debs a package list names */
  char *index_path;     /* the Packages index made for it */
  char *index_sha256;
} LockLocalSource;

void lock_local_source_free (LockLocalSource *source);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LockLocalSource, lock_local_source_free)

/* What lock_resolve() takes besides the archives. */
typedef struct {
  GPtrArray *sources;        /* LockLocalSource*, after the archives */
  char **resolve_packages;   /* the request's packages as the resolver is
                              * asked for them (a .deb path as NAME=VERSION),
                              * or NULL: the request's own */
} LockLocal;

void lock_local_clear (LockLocal *local);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (LockLocal, lock_local_clear)

/* Fetch and verify the Release and Packages indices of every source in
 * SOURCES (in that order: the order is the request's), resolve REQUEST with
 * them and describe the result as a Lockfile whose request is REQUEST with
 * the sources' names.  Indices are kept in CACHE_DIR.
 *
 * PREVIOUS (or NULL) is the lockfile being updated: a source whose Release
 * is dated before the one PREVIOUS was made from is refused, as apt refuses
 * to go back to an older Release (a stale mirror, or a replayed file).
 *
 * LOCAL (or NULL): sources of local .debs, resolved with the archives. */
Lockfile *lock_resolve (const LockRequest *request, SourcesList *sources, const LockLocal *local,
                        const char *cache_dir, Lockfile *previous, GCancellable *cancellable,
                        GError **error);

/* The package list PATH: one package a line ("name", "name=version",
 * "name:arch", or a local .deb's path: a line with a "/" that ends in
 * ".deb", relative to the list's directory), "#" comments and blank
 * lines.  Errors name the file and line. */
char **lock_read_package_list (const char *path, GError **error);

/* The lockfile of a package list: "dir/foo.txt" -> "dir/foo.lock.json". */
char *lock_default_output (const char *packages_path);

/* The host's dpkg architecture (dpkg --print-architecture). */
char *lock_host_architecture (GError **error);

/* The sources to lock from SOURCES_PATH (NULL: the host's): the archives
 * PREVIOUS (the lockfile being updated) names, else every source of ARCH;
 * moved to SUITE (or NULL), with COMPONENTS (or NULL: their own), MIRRORS
 * ("NAME=URI", NAME one of them) applied. */
SourcesList *lock_load_sources (const char *sources_path, const char *suite,
                                const char *const *components, Lockfile *previous,
                                const char *arch, char **mirrors, GError **error);

/* The variants --variant accepts (the resolver's), NULL-terminated. */
const char *const *lock_variants (void);

G_END_DECLS
