/* build.c — lockfile + sources -> the image's Ninja file. */
#include "config.h"

#include "build.h"
#include "lockfile.h"
#include "ninja.h"
#include "repo.h"
#include "sources.h"
#include "util.h"

#define DEFAULT_BUILDDIR "build"
#define DEFAULT_DOWNLOAD_JOBS 4

void
build_args_clear (BuildArgs *args)
{
  g_clear_pointer (&args->image, g_free);
  g_clear_pointer (&args->builddir, g_free);
  g_clear_pointer (&args->sources, g_free);
  g_clear_pointer (&args->mirrors, g_strfreev);
  g_clear_pointer (&args->before_configure, g_strfreev);
  g_clear_pointer (&args->after_configure, g_strfreev);
  g_clear_pointer (&args->configure_hooks, g_strfreev);
}

gboolean
build_args_complete (BuildArgs *args, GError **error)
{
  if (args->image == NULL)
    args->image = ninja_default_image (args->lockfile);
  if (!repo_check_ref_name (args->image, error))
    return FALSE;
  if (args->builddir == NULL)
    args->builddir = g_strdup (DEFAULT_BUILDDIR);
  if (args->download_jobs == 0)
    args->download_jobs = DEFAULT_DOWNLOAD_JOBS;
  if (args->download_jobs < 0)
    return util_fail (error, "--download-jobs must be at least 1");
  return TRUE;
}

char *
build_ninja_path (BuildArgs *args)
{
  g_autofree char *name = g_strdelimit (g_strdup (args->image), "/", '_');
  g_autofree char *file = g_strconcat (name, ".ninja", NULL);
  return g_build_filename (args->builddir, file, NULL);
}

/* The sources packages are fetched from: --sources, else the file the lock
 * was made from, else the host's apt configuration; then --mirror. */
static SourcesList *
load_sources (BuildArgs *args, Lockfile *lock, GError **error)
{
  g_autofree char *recorded = lockfile_request_sources_path (lock, args->lockfile);
  g_autoptr(SourcesList) sources = sources_load (args->sources != NULL ? args->sources : recorded,
                                                 error);
  if (sources == NULL)
    return NULL;
  if (lock->request.suite != NULL && !sources_list_set_suite (sources, lock->request.suite, error))
    return NULL;
  if (!sources_list_apply_mirrors (sources, (const char *const *) args->mirrors, error))
    return NULL;
  return g_steal_pointer (&sources);
}

char *
build_generate_ninja (BuildArgs *args, const char *output_path, gboolean subninja, GError **error)
{
  g_autoptr(Lockfile) lock = lockfile_load (args->lockfile, error);
  if (lock == NULL)
    return NULL;
  g_autoptr(SourcesList) sources = load_sources (args, lock, error);
  if (sources == NULL)
    return NULL;

  /* The rules run `apt2ostree` as the user ran it: the lean front
   * (front.c) when it handed this command to the full binary. */
  const char *front = g_getenv ("APT2OSTREE_SELF");
  g_autofree char *self = front != NULL && *front == '/' ? g_strdup (front)
                                                         : g_file_read_link ("/proc/self/exe", error);
  if (self == NULL)
    return NULL;

  NinjaOptions options = {
    .apt2ostree = self,
    .lockfile_path = args->lockfile,
    .output_path = output_path,
    .image = args->image,
    .builddir = args->builddir,
    .repo = args->repo,
    .sources_path = args->sources,
    .mirrors = (const char *const *) args->mirrors,
    .subninja = subninja,
    .download_jobs = args->download_jobs,
    .before_configure = (const char *const *) args->before_configure,
    .after_configure = (const char *const *) args->after_configure,
    .configure_hooks = (const char *const *) args->configure_hooks,
  };
  return ninja_generate (lock, sources, &options, error);
}
