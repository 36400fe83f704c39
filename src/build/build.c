/* build.c — lockfile + sources -> the image's Ninja file. */
#include "config.h"

#include "build/build.h"
#include "base/debpolicy.h"
#include "apt/lockfile.h"
#include "build/ninja.h"
#include "store/repo.h"
#include "apt/sources.h"
#include "base/util.h"

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

/* OPTION's VALUE (NULL: not given) by debpolicy's CHECK. */
static gboolean
check_option (const char *option, const char *value, const char *problem, GError **error)
{
  if (value == NULL || problem == NULL)
    return TRUE;
  g_autofree char *shown = g_strescape (value, NULL);
  return util_fail (error, "%s \"%s\" %s", option, shown, problem);
}

/* Everything given here is written into the Ninja file (ninja.c refuses
 * what it cannot write; this says which option it came from). */
static gboolean
check_options (BuildArgs *args, GError **error)
{
  if (!check_option ("LOCKFILE", args->lockfile, debpolicy_text_problem (args->lockfile), error)
      || !check_option ("--builddir", args->builddir, debpolicy_text_problem (args->builddir), error)
      || !check_option ("--repo", args->repo, debpolicy_text_problem (args->repo), error)
      || !check_option ("--sources", args->sources, debpolicy_text_problem (args->sources), error))
    return FALSE;
  for (char **m = args->mirrors; m != NULL && *m != NULL; m++)
    if (!check_option ("--mirror", *m, debpolicy_text_problem (*m), error))
      return FALSE;
  /* A hook is a shell command by design, but one line: Ninja cannot hold two. */
  for (char **h = args->configure_hooks; h != NULL && *h != NULL; h++)
    if (!check_option ("--configure-hook", *h,
                       debpolicy_text_problem (*h) != NULL
                       ? "contains a newline or another control character, which a Ninja file "
                         "cannot hold; join the commands with \";\" or put them into a script"
                       : NULL, error))
      return FALSE;
  /* A tree over the image is a directory, else a ref of the repository. */
  char **const lists[] = { args->before_configure, args->after_configure };
  const char *const options[] = { "--before-configure", "--after-configure" };
  for (guint i = 0; i < G_N_ELEMENTS (lists); i++)
    for (char **t = lists[i]; t != NULL && *t != NULL; t++)
      {
        if (!check_option (options[i], *t, debpolicy_text_problem (*t), error))
          return FALSE;
        g_autoptr(GError) ref_error = NULL;
        if (!g_file_test (*t, G_FILE_TEST_IS_DIR) && !repo_check_ref_name (*t, &ref_error))
          return util_fail (error, "%s \"%s\" is neither a directory nor a ref name (%s)", options[i],
                            *t, ref_error->message);
      }
  return TRUE;
}

gboolean
build_args_complete (BuildArgs *args, GError **error)
{
  if (args->image == NULL)
    args->image = ninja_default_image (args->lockfile);
  if (!check_option ("--ref", args->image, debpolicy_text_problem (args->image), error)
      || !repo_check_ref_name (args->image, error))
    return FALSE;
  if (args->builddir == NULL)
    args->builddir = g_strdup (DEFAULT_BUILDDIR);
  if (args->download_jobs == G_MININT)
    args->download_jobs = DEFAULT_DOWNLOAD_JOBS;
  if (args->download_jobs < 1)
    return util_fail (error, "--download-jobs %d: expected a number of downloads at once, 1 or more",
                      args->download_jobs);
  return check_options (args, error);
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
  /* A --mirror for a source the lockfile does not name would be ignored
   * (its packages then come from elsewhere): a typo, said at once. */
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  for (guint i = 0; i < lock->sources->len; i++)
    g_strv_builder_add (b, ((LockSource *) lock->sources->pdata[i])->name);
  g_auto(GStrv) names = g_strv_builder_end (b);
  g_autofree char *where = g_strdup_printf ("the lockfile %s", args->lockfile);
  if (!sources_list_apply_mirrors (sources, (const char *const *) args->mirrors,
                                   (const char *const *) names, where, error))
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
