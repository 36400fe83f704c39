/* packages.h — Debian Packages indices: reading the stanzas into a libsolv
 * repository, and keeping the fields libsolv does not (Essential, Priority,
 * Size, SHA256, Filename, Multi-Arch, Source). */
#pragma once

#include <gio/gio.h>
#include <solv/pool.h>
#include <solv/repo.h>

G_BEGIN_DECLS

/* One binary package as the lockfile records it. */
typedef struct {
  char *name, *version, *architecture;
  char *multi_arch;              /* "no" when absent, else same|foreign|allowed */
  char *priority;                /* NULL when absent */
  gboolean essential;
  char *filename;                /* pool path, relative to the mirror's root */
  guint64 size;
  char *sha256;
  char *source_name;             /* the configured source it came from */
  char *source_package;          /* Source: field (without version) or the name */
  char *depends, *pre_depends;   /* raw fields, NULL when absent */
} DebPackage;

void deb_package_free (DebPackage *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DebPackage, deb_package_free)

/* The fields of one stanza that libsolv does not keep.  The strings point
 * into the index text the store owns; absent fields are NULL. */
typedef struct {
  const char *filename, *sha256, *priority, *multi_arch, *source;
  const char *depends, *pre_depends, *breaks, *recommends;
  guint64 size;
  gboolean essential;
  gboolean important;            /* Important: yes or Protected: yes */
} PackagesFields;

/* Every index loaded into one libsolv pool, with each solvable's extra
 * fields, looked up by solvable id. */
typedef struct PackagesStore PackagesStore;

PackagesStore *packages_store_new (Pool *pool);
void packages_store_free (PackagesStore *store);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PackagesStore, packages_store_free)

/* Read the Packages index at PATH (plain, gzip, xz, zstd or bzip2: the
 * content decides, not the file name) and add one solvable per stanza to
 * REPO, which must be the last repository created in the store's pool.
 *
 * CACHE_DIR (may be NULL): where the parsed index is kept (libsolv's .solv
 * plus our fields, named from the index's path, size, inode and mtime), so
 * the next load of the same file skips decompressing and parsing it. */
gboolean packages_store_load (PackagesStore *store, Repo *repo, const char *path,
                              const char *cache_dir, GError **error);

/* Where apt would number the package called NAME (a string id) among all
 * it has met in the indices loaded so far: 1 for the first name met, 0 for
 * one never met.  apt prefers the higher number when nothing else tells two
 * providers apart. */
guint packages_store_mention_rank (PackagesStore *store, Id name);

/* The extra fields of solvable P, or NULL when P was not loaded here. */
const PackagesFields *packages_store_lookup (PackagesStore *store, Id p);

/* The lockfile's view of solvable P; source_name is the source it came
 * from. */
DebPackage *packages_store_describe (PackagesStore *store, Id p, const char *source_name);

G_END_DECLS
