/* sbom.h — a software bill of materials of an image: every package with
 * its version, architecture, source package, purl, the .deb's SHA256 and
 * the licenses its machine-readable copyright file declares, written as
 * SPDX 2.3 or CycloneDX 1.5 JSON.
 *
 * From a ref: the packages of the image's dpkg database, its copyright
 * files, and each .deb's SHA256 from the package tree (deb/NAME/VERSION/
 * ARCH/SHA256) the build left in the repository; the image commit is the
 * artifact described, dated by its timestamp.  With the lockfile it was
 * built from, each package also names its source and file there, and a
 * local .deb is told from an archive's.  From a lockfile: the locked
 * packages, each read from its package tree, so the lockfile must have been
 * built into the repository; dated by the newest Release among its sources.
 * Each package's Pre-Depends and Depends become relationships to the
 * packages of the image that meet them (the first alternative that one
 * does, by name or Provides).  No host is ever written: where a .deb comes
 * from is its source's name and its file's path.
 * Nothing depends on the wall clock and everything is sorted: the same input
 * gives the same bytes. */
#pragma once

#include <ostree.h>

#include "apt/lockfile.h"

G_BEGIN_DECLS

typedef struct {
  char *name, *version, *architecture;
  char *source, *source_version;  /* the source package and its version */
  char *sha256;                   /* of the .deb, or NULL when not known */
  char *license;                  /* an SPDX expression, or NULL (no machine-readable copyright) */
  char *distro;                   /* purl namespace: "debian" or "ubuntu" */
  gboolean local;                 /* a local .deb (the lockfile's "local" source): its
                                   * purl claims no archive (pkg:generic) */
  char *apt_source;               /* the lockfile's source name, or NULL (not known) */
  char *filename;                 /* the .deb's file: its pool path in the source, or a
                                   * local .deb's path from the lockfile; NULL: not known */
  char *depends;                  /* Pre-Depends and Depends, as the package says them */
  char *provides;                 /* its Provides, or NULL */
  GPtrArray *depends_on;          /* indices (GUINT_TO_POINTER) of the packages of the
                                   * document its dependencies are met by, sorted */
} SbomPackage;

typedef struct {
  char *name;                     /* the ref, or the lockfile's name */
  char *commit;                   /* the image commit, or NULL */
  char *lockfile_sha256;          /* for a lockfile: its SHA256, else NULL */
  gint64 created;                 /* seconds since 1970 */
  GPtrArray *packages;            /* SbomPackage*, by name then architecture */
  GHashTable *license_texts;      /* "LicenseRef-…" -> its text, for SPDX */
} Sbom;

void sbom_free (Sbom *sbom);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Sbom, sbom_free)

/* LOCK (or NULL) is the lockfile the image was built from. */
Sbom *sbom_from_ref (OstreeRepo *repo, const char *ref, Lockfile *lock,
                     GCancellable *cancellable, GError **error);
Sbom *sbom_from_lockfile (OstreeRepo *repo, Lockfile *lock, const char *lock_path,
                          GCancellable *cancellable, GError **error);

/* The document's text: FORMAT is "spdx" or "cyclonedx". */
char *sbom_to_json (Sbom *sbom, const char *format);

/* A Debian copyright file's licenses (DEP-5) as one SPDX expression, or
 * NULL when the file is not machine-readable.  Names SPDX does not know
 * become "LicenseRef-NAME"; their texts (the stand-alone License: stanzas)
 * are added to TEXTS when it is not NULL. */
char *sbom_copyright_license (const char *copyright, GHashTable *texts);

G_END_DECLS
