/* ninja.h — the Ninja file for one or more images, from their lockfiles.
 *
 * One edge per package tree (unpack-deb from the lockfile's URL, SHA256 and
 * size; output: that package's ref file), written once however many images
 * use the package; then, for each image, a stage-1 edge (its package trees,
 * in install order, into stage1/NAME) and a stage-2 edge (configure, into
 * NAME; with --incremental, a2o_configure_incremental, which starts from
 * what its own output ref holds and also reads the lockfile).  Every edge
 * has restat = 1, so an unchanged ref stops the work below
 * it.  Paths are written as given, relative to the directory ninja runs in
 * (as ninja reads subninja files too).  The same inputs give the same bytes.
 *
 * Refs: deb/NAME/VERSION/ARCH/SHA256 (deb_ref_name) for package trees,
 * stage1/NAME for stage 1, NAME for the image; with hooks also
 * before-configure/NAME, configured/NAME and hooks/NAME/WHICH-N. */
#pragma once

#include "apt/lockfile.h"
#include "apt/sources.h"

G_BEGIN_DECLS

/* One image: its lockfile, loaded, and where its packages come from. */
typedef struct {
  const char *lockfile_path;
  const char *image;           /* the image's ref */
  Lockfile *lock;
  SourcesList *sources;        /* NULL: the URIs the lockfile records */
  const char *apt_sources_dir; /* --apt-sources: a directory put over the
                                * configured image after the --after-configure
                                * ones, or NULL */
} NinjaImage;

typedef struct {
  const char *apt2ostree;      /* the binary the edges run */
  const char *output_path;     /* the Ninja file itself (its regeneration edge) */
  const char *builddir;
  const char *repo;            /* default: BUILDDIR/ostree */
  const char *sources_path;    /* --sources as given, or NULL */
  const char *const *mirrors;  /* --mirror NAME=URI as given, or NULL */
  gboolean subninja;           /* leave out names global to a Ninja build */
  int download_jobs;           /* depth of the download pool */
  const char *const *before_configure;  /* --before-configure DIR|REF, or NULL */
  const char *const *after_configure;   /* --after-configure DIR|REF, or NULL */
  const char *const *configure_hooks;   /* --configure-hook COMMAND, or NULL */
  gboolean deployable;                  /* --deployable: "deployable" after stage 2 */
  const char *sbom;                     /* --sbom FILE (one image) or DIR/ (any number):
                                         * see ninja_sbom_path(); or NULL */
  gboolean apt_sources;                 /* --apt-sources (for the regeneration command) */
  const char *cache_url;                /* --cache-url: trees pulled from there first, or NULL */
  const char *cache_key;                /* --cache-key FILE, or NULL */
  gboolean incremental;                 /* --incremental: stage 2 starts from the image
                                         * its edge's ref holds before it runs */
  const char *timeout;                  /* stage 2's --timeout, --memory-limit and
                                         * --max-processes as given, or NULL */
  const char *memory_limit;
  const char *max_processes;
} NinjaOptions;

/* The text of the Ninja file for IMAGES (N_IMAGES of them, at least one,
 * with different names), and in *OUT_DOWNLOADS (unless NULL) the text of
 * its download list, for the fetch service (apt/fetchclient.h). */
char *ninja_generate (const NinjaImage *images, guint n_images, const NinjaOptions *options,
                      char **out_downloads, GError **error);

/* The date stage 2 runs at for LOCK (unless $SOURCE_DATE_EPOCH says
 * otherwise): the newest Release date of its sources. */
gint64 ninja_lockfile_epoch (Lockfile *lock);

/* Where --sbom SBOM puts IMAGE's SPDX document: SBOM itself, or with a
 * trailing "/", SBOM/IMAGE.spdx.json (a ref's "/" making subdirectories).
 * NULL when SBOM is. */
char *ninja_sbom_path (const char *sbom, const char *image);

/* Write TEXT to PATH unless it already holds exactly that (so the file's
 * mtime, which ninja watches, moves only when its content does). */
gboolean ninja_write_if_changed (const char *path, const char *text, GError **error);

G_END_DECLS
