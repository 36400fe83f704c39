/* lockfile.h — the lockfile: what an image is made of, pinned by name,
 * version, architecture and SHA256, and the request it was made from.
 *
 * The file is JSON in a fixed layout so that it diffs cleanly in git: one
 * source and one package per line, packages sorted by name then
 * architecture, the install order one name per line.  Writing the same
 * Lockfile gives the same bytes.  It never holds a mirror's URI: packages
 * name their source, and the source's URI comes from the sources
 * configuration (or --mirror NAME=URI) when the packages are fetched.
 *
 * Local .debs (lock --debs DIR, a .deb path in the package list) come from
 * a "local" source, which has no URI at all: each of its packages records
 * its file's path relative to the lockfile's directory ("path"), never an
 * absolute one; build takes the file from there, by its sha256. */
#pragma once

#include <gio/gio.h>

#include "apt/sources.h"

G_BEGIN_DECLS

#define LOCKFILE_FORMAT 1

typedef struct {
  char *name;
  char *suite;
  char *codename;
  char *origin;          /* Origin: of the Release, or NULL */
  char *version;         /* Version: of the Release, or NULL */
  char **components;
  char **architectures;  /* the architectures whose indices were read */
  int pin_priority;
  char *fingerprint;     /* primary key that signed the InRelease, or NULL */
  gboolean trusted;      /* trusted=yes: no signature was checked (written
                          * only when true) */
  char *inrelease_sha256;
  char *date;            /* Date: of the Release */
  char *uri;             /* only with --record-uris, else NULL (and not written) */
  gboolean local;        /* local .debs, not an archive (written only when
                          * true): no signature, no Release; the
                          * inrelease-sha256 is that of the index lock made
                          * from the .debs */
  char *dir;             /* a local source's directory (lock --debs),
                          * relative to the lockfile's, or NULL (the .debs a
                          * package list names) */
} LockSource;

typedef struct {
  char *name;
  char *version;
  char *architecture;
  char *source;          /* the LockSource's name */
  char *filename;        /* pool path, relative to the source's URI */
  gint64 size;
  char *sha256;
  gboolean essential;
  char *priority;        /* or NULL */
  char *multi_arch;      /* "same", "foreign", "allowed", or NULL */
  char *path;            /* a local source's .deb, relative to the lockfile's
                          * directory (may lead out of it: "../bsp/x.deb"),
                          * else NULL (and not written) */
} LockPackage;

typedef struct {
  char **packages;       /* as listed: "name", "name=version", "name:arch", or a
                          * local .deb's path (lockfile_is_local_deb()),
                          * relative to the lockfile's directory */
  char *variant;
  char *architecture;
  gboolean recommends;
  char **sources;        /* source names, in priority order */
  char *sources_file;    /* relative to the lockfile's directory, or NULL: the host's */
  char *merged_usr;      /* "auto", "yes" or "no" */
  char *suite;           /* --suite: the release the sources were moved to, or NULL */
  char **components;     /* --components: every source's, or NULL (the sources' own);
                          * written only when set */
  gboolean record_uris;  /* write each source's URI (off by default) */
  char **path_filters;   /* dpkg's "path-exclude=GLOB" / "path-include=GLOB", in
                          * order (lock --path-exclude/--path-include), or NULL;
                          * written only when there are some */
} LockRequest;

typedef struct {
  int format;
  LockRequest request;
  gboolean merged_usr;
  GPtrArray *sources;        /* LockSource* */
  GPtrArray *packages;       /* LockPackage*, sorted by name then architecture */
  GPtrArray *install_order;  /* char*: "name", or "name:arch" when a name has several */
} Lockfile;

Lockfile *lockfile_new (void);
void lockfile_free (Lockfile *lock);
void lock_source_free (LockSource *source);
void lock_package_free (LockPackage *package);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Lockfile, lockfile_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LockSource, lock_source_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LockPackage, lock_package_free)

/* Sort the packages by name, then architecture. */
void lockfile_sort (Lockfile *lock);

/* The file's text (the fixed layout described above). */
char *lockfile_to_string (Lockfile *lock);

/* Write PATH atomically (a temporary file in the same directory, renamed
 * over PATH): on any error PATH is left as it was.  When PATH already holds
 * exactly these bytes it is not touched (its mtime stays). */
gboolean lockfile_write (Lockfile *lock, const char *path, GError **error);

/* Read and check a lockfile.  Errors name PATH and the entry at fault. */
Lockfile *lockfile_load (const char *path, GError **error);

LockSource *lockfile_lookup_source (Lockfile *lock, const char *name);
LockPackage *lockfile_lookup_package (Lockfile *lock, const char *name, const char *arch);

/* Where to download PACKAGE: its source's URIs in SOURCES (the sources
 * configuration, with any --mirror overrides applied; SOURCES may be NULL),
 * in the order to try them, else the URI the lockfile recorded
 * (--record-uris), each joined with its pool filename.  An error names the
 * source and says how to supply it. */
char **lockfile_package_urls (Lockfile *lock, LockPackage *package, SourcesList *sources,
                            GError **error);

/* A package list's or a request's ENTRY names a local .deb file, not a
 * package: it holds a "/" and ends in ".deb" ("./out/x_1.0_arm64.deb"). */
gboolean lockfile_is_local_deb (const char *entry);

/* NULL when PATH may be recorded as a local .deb's or directory's path
 * (relative, "../" allowed, no control character), else what is wrong. */
const char *lockfile_local_path_problem (const char *path);

/* Where to take a local PACKAGE (one with a path) from, LOCK_PATH being
 * the lockfile's path: the file:// URL of its path from the lockfile's
 * directory. */
char **lockfile_local_package_urls (const char *lock_path, LockPackage *package);

/* The sources file of LOCK's request as a path usable from the current
 * directory (it is stored relative to the lockfile at LOCK_PATH), or NULL
 * when the request used the host's configuration. */
char *lockfile_request_sources_path (Lockfile *lock, const char *lock_path);

/* PATH (relative to the current directory) made relative to the directory
 * of LOCK_PATH, for storing in the request. */
char *lockfile_relative_path (const char *path, const char *lock_path);

G_END_DECLS
