/* build.h — what "apt2ostree ninja" and "apt2ostree build" share: their
 * options and LOCKFILE[=REF] operands, and turning lockfiles plus sources
 * into the images' Ninja file. */
#pragma once

#include <gio/gio.h>

#include "apt/lockfile.h"
#include "apt/sources.h"
#include "base/cmdline.h"
#include "graph/buildcache.h"

G_BEGIN_DECLS

/* One image of the build, from a LOCKFILE[=REF] operand. */
typedef struct {
  char *lockfile;
  char *image;             /* REF; default: --ref, else the lockfile's name */
  Lockfile *lock;          /* once loaded (build_load_images) */
  SourcesList *sources;
} BuildImage;

typedef struct {
  GPtrArray *images;       /* BuildImage, in the order given */
  const char *repo;        /* global --repo, or NULL: BUILDDIR/ostree */
  char *image;             /* --ref NAME (one lockfile only) */
  char *builddir;          /* --builddir DIR; default: build */
  char *sources;           /* --sources FILE; default: the lockfile's, else the host's */
  char **mirrors;          /* --mirror NAME=URI */
  int download_jobs;       /* --download-jobs N; default 4 */
  char **before_configure; /* --before-configure DIR|REF */
  char **after_configure;  /* --after-configure DIR|REF */
  char **configure_hooks;  /* --configure-hook COMMAND */
  gboolean deployable;     /* --deployable */
  char *sbom;              /* --sbom FILE (one lockfile) or DIR/ (DIR/IMAGE.spdx.json) */
  gboolean apt_sources;    /* --apt-sources */
  BuildCache cache;        /* --cache-url, --cache-key */
  gboolean incremental;    /* --incremental: stage 2 from the previous image */
  char *timeout;           /* --timeout SECONDS for stage 2, or NULL */
  char *memory_limit;      /* --memory-limit SIZE */
  char *max_processes;     /* --max-processes N */
} BuildArgs;

/* download_jobs not given: told apart from a given 0, which is an error. */
#define BUILD_ARGS_INIT { .download_jobs = G_MININT }

void build_args_clear (BuildArgs *args);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (BuildArgs, build_args_clear)

#define BUILD_OPTION_ENTRIES(args)                                                           \
  { "ref", 0, 0, G_OPTION_ARG_STRING, &(args).image,                                        \
    "The image's ref, for one LOCKFILE (default: its name without .lock.json)", "NAME" },  \
  { "builddir", 0, 0, G_OPTION_ARG_FILENAME, &(args).builddir,                              \
    "Build directory: repository, caches, Ninja files (default: build)", "DIR" },          \
  { "sources", 0, 0, G_OPTION_ARG_FILENAME, &(args).sources,                                \
    "Where to fetch packages (default: the lockfile's sources, else the host's)", "FILE" }, \
  { "mirror", 0, 0, G_OPTION_ARG_STRING_ARRAY, &(args).mirrors,                             \
    "Fetch the packages of source NAME from URI instead", "NAME=URI" },                     \
  { "download-jobs", 0, 0, G_OPTION_ARG_INT, &(args).download_jobs,                         \
    "Downloads at once (default: 4)", "N" },                                                \
  { "before-configure", 0, 0, G_OPTION_ARG_STRING_ARRAY, &(args).before_configure,           \
    "Put a directory or tree over the image before dpkg --configure -a", "DIR|REF" },       \
  { "after-configure", 0, 0, G_OPTION_ARG_STRING_ARRAY, &(args).after_configure,             \
    "Put a directory or tree over the image after dpkg --configure -a", "DIR|REF" },        \
  { "configure-hook", 0, 0, G_OPTION_ARG_STRING_ARRAY, &(args).configure_hooks,              \
    "A shell command run in the image just before dpkg --configure -a", "COMMAND" },         \
  { "deployable", 0, 0, G_OPTION_ARG_NONE, &(args).deployable,                               \
    "Make each image an OSTree deployment (see \"apt2ostree deployable\")", NULL },       \
  { "sbom", 0, 0, G_OPTION_ARG_FILENAME, &(args).sbom,                                      \
    "Write the image's SPDX bill of materials to FILE (one LOCKFILE), or each image's to "    \
    "DIR/IMAGE.spdx.json", "FILE|DIR/" },             \
  { "apt-sources", 0, 0, G_OPTION_ARG_NONE, &(args).apt_sources,                             \
    "Write the sources and keys the image was built from into its /etc/apt", NULL },        \
  { "incremental", 0, 0, G_OPTION_ARG_NONE, &(args).incremental,                             \
    "Stage 2 from the previous image, as apt-get would: fast, not for releases", NULL },     \
  BUILDCACHE_OPTION_ENTRIES (&(args).cache),                                                 \
  CMDLINE_LIMIT_OPTION_ENTRIES ((args).timeout, (args).memory_limit, (args).max_processes)

/* The images of OPERANDS (LOCKFILE or LOCKFILE=REF, at least one), the
 * defaults (image names, build directory), and their checks.  Two images
 * with one ref, or --ref with several lockfiles, is a usage error of INV. */
gboolean build_args_complete (BuildArgs *args, CmdInvocation *inv, int n_operands,
                              char **operands, GError **error);

/* Load each image's lockfile and the sources its packages come from. */
gboolean build_load_images (BuildArgs *args, GError **error);

/* The Ninja file for ARGS (completed), written to OUTPUT_PATH, with its
 * download list beside it (ninja_downloads_path()); each file is left
 * alone when it holds that text already. */
gboolean build_write_ninja (BuildArgs *args, const char *output_path, gboolean subninja,
                            GError **error);

/* Where "build" keeps the Ninja file: BUILDDIR/NAME.ninja for one image,
 * BUILDDIR/images.ninja for several. */
char *build_ninja_path (BuildArgs *args);

/* The cache's name for IMAGE as ARGS build it (see buildcache.h):
 * cache/image/KEY, KEY over everything the image is made of (this
 * program's version, the packages' trees by .deb sha256, the install
 * order, path filters, architecture, merged /usr, the stage-2 date, hooks, trees put
 * over it by ref, --deployable).  NULL when the key cannot hold an input:
 * a directory put over the image, --apt-sources, --sbom. */
char *build_image_cache_ref (BuildArgs *args, BuildImage *image, OstreeRepo *repo);

/* The build's repository (--repo, else BUILDDIR/ostree), made when
 * missing, as the Ninja file's first step would. */
OstreeRepo *build_open_repo (BuildArgs *args, GCancellable *cancellable, GError **error);

/* --cache-url: each image the cache has whole, by its key (see
 * build_image_cache_ref), is taken from it and ninja does not build it;
 * one REPO took before (its key's ref holds it) is kept.  The others
 * (BuildImage*, borrowed) go into TODO.  KEYS gets each image's key, or
 * NULL. */
gboolean build_images_from_cache (BuildArgs *args, OstreeRepo *repo, GPtrArray *todo,
                                  GPtrArray *keys, GCancellable *cancellable, GError **error);

G_END_DECLS
