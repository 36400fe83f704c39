/* build.h — what "apt2ostree ninja" and "apt2ostree build" share: their
 * options, and turning a lockfile plus sources into the image's Ninja file. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct {
  const char *lockfile;
  const char *repo;        /* global --repo, or NULL: BUILDDIR/ostree */
  char *image;             /* --ref NAME; default: the lockfile's name */
  char *builddir;          /* --builddir DIR; default: build */
  char *sources;           /* --sources FILE; default: the lockfile's, else the host's */
  char **mirrors;          /* --mirror NAME=URI */
  int download_jobs;       /* --download-jobs N; default 4 */
  char **before_configure; /* --before-configure DIR|REF */
  char **after_configure;  /* --after-configure DIR|REF */
  char **configure_hooks;  /* --configure-hook COMMAND */
} BuildArgs;

/* download_jobs not given: told apart from a given 0, which is an error. */
#define BUILD_ARGS_INIT { .download_jobs = G_MININT }

void build_args_clear (BuildArgs *args);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (BuildArgs, build_args_clear)

#define BUILD_OPTION_ENTRIES(args)                                                           \
  { "ref", 0, 0, G_OPTION_ARG_STRING, &(args).image,                                        \
    "The image's ref (default: the lockfile's name without .lock.json)", "NAME" },          \
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
    "A shell command run in the image just before dpkg --configure -a", "COMMAND" }

/* Fill in the defaults (image name, build directory) and check them. */
gboolean build_args_complete (BuildArgs *args, GError **error);

/* The Ninja file's text for ARGS (completed), written to OUTPUT_PATH by the caller. */
char *build_generate_ninja (BuildArgs *args, const char *output_path, gboolean subninja,
                            GError **error);

/* Where "build" keeps an image's Ninja file: BUILDDIR/NAME.ninja. */
char *build_ninja_path (BuildArgs *args);

G_END_DECLS
