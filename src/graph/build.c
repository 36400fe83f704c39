/* build.c — LOCKFILE[=REF] operands + sources -> the images' Ninja file. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "graph/aptsources.h"
#include "apt/fetchclient.h"
#include "graph/build.h"
#include "graph/buildcache.h"
#include "store/cachefetch.h"
#include "deb/deb.h"
#include "graph/imagespec.h"
#include "base/debpolicy.h"
#include "apt/lockfile.h"
#include "graph/ninja.h"
#include "store/repo.h"
#include "apt/sources.h"
#include "base/util.h"

#define DEFAULT_BUILDDIR "build"
#define DEFAULT_DOWNLOAD_JOBS 4

static void
build_image_free (gpointer data)
{
  BuildImage *image = data;
  g_free (image->lockfile);
  g_free (image->image);
  g_clear_pointer (&image->lock, lockfile_free);
  g_clear_pointer (&image->sources, sources_list_free);
  g_free (image);
}

void
build_args_clear (BuildArgs *args)
{
  g_clear_pointer (&args->images, g_ptr_array_unref);
  g_clear_pointer (&args->image, g_free);
  g_clear_pointer (&args->builddir, g_free);
  g_clear_pointer (&args->sources, g_free);
  g_clear_pointer (&args->mirrors, g_strfreev);
  g_clear_pointer (&args->before_configure, g_strfreev);
  g_clear_pointer (&args->sbom, g_free);
  g_clear_pointer (&args->after_configure, g_strfreev);
  g_clear_pointer (&args->configure_hooks, g_strfreev);
  g_clear_pointer (&args->timeout, g_free);
  g_clear_pointer (&args->memory_limit, g_free);
  g_clear_pointer (&args->max_processes, g_free);
  buildcache_clear (&args->cache);
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
  if (!check_option ("--builddir", args->builddir, debpolicy_text_problem (args->builddir), error)
      || !check_option ("--repo", args->repo, debpolicy_text_problem (args->repo), error)
      || !check_option ("--sources", args->sources, debpolicy_text_problem (args->sources), error)
      || !check_option ("--sbom", args->sbom, debpolicy_text_problem (args->sbom), error)
      || !check_option ("--cache-url", args->cache.url, debpolicy_text_problem (args->cache.url),
                        error)
      || !check_option ("--cache-key", args->cache.key_path,
                        debpolicy_text_problem (args->cache.key_path), error))
    return FALSE;
  if (!buildcache_check (&args->cache, error))
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

/* OPERAND is LOCKFILE or LOCKFILE=REF.  A ref holds no "=", so REF is what
 * follows the last one, unless OPERAND is itself a file. */
static BuildImage *
parse_operand (const char *operand, const char *ref_option)
{
  BuildImage *image = g_new0 (BuildImage, 1);
  imagespec_split (operand, &image->lockfile, &image->image);
  if (*image->lockfile == '\0')  /* "=REF": a file named "=REF", as before */
    {
      g_free (image->lockfile);
      g_clear_pointer (&image->image, g_free);
      image->lockfile = g_strdup (operand);
    }
  if (image->image == NULL)
    image->image = ref_option != NULL ? g_strdup (ref_option)
                                      : imagespec_default_ref (image->lockfile);
  return image;
}

/* A ref is a file under refs/heads: "a" and "a/b" cannot both be. */
static gboolean
check_nested_refs (BuildArgs *args, CmdInvocation *inv, GError **error)
{
  for (guint i = 0; i < args->images->len; i++)
    for (guint j = 0; j < args->images->len; j++)
      {
        BuildImage *outer = args->images->pdata[i], *inner = args->images->pdata[j];
        gsize n = strlen (outer->image);
        if (i != j && g_str_has_prefix (inner->image, outer->image) && inner->image[n] == '/')
          return cmd_usage_error (inv, error, "%s gives the image ref \"%s\" and %s \"%s\", "
                                  "which cannot both be refs (one would be a file, the other "
                                  "inside it); rename one with LOCKFILE=REF", outer->lockfile,
                                  outer->image, inner->lockfile, inner->image);
      }
  return TRUE;
}

/* The images of OPERANDS, each ref a valid one and given once. */
static gboolean
parse_images (BuildArgs *args, CmdInvocation *inv, int n_operands, char **operands,
              GError **error)
{
  if (args->sbom != NULL && !g_str_has_suffix (args->sbom, "/") && n_operands > 1)
    return cmd_usage_error (inv, error, "--sbom FILE goes with one lockfile; for several, give a "
                            "directory, --sbom DIR/, for DIR/IMAGE.spdx.json each");
  if (args->image != NULL && n_operands > 1)
    return cmd_usage_error (inv, error, "--ref names the image of one lockfile; with several, "
                            "write LOCKFILE=REF for each image to name");
  args->images = g_ptr_array_new_with_free_func (build_image_free);
  g_autoptr(GHashTable) by_ref = g_hash_table_new (g_str_hash, g_str_equal);
  for (int i = 0; i < n_operands; i++)
    {
      BuildImage *image = parse_operand (operands[i], args->image);
      g_ptr_array_add (args->images, image);
      /* Both go into messages below, and into the Ninja file. */
      if (!check_option ("LOCKFILE", image->lockfile, debpolicy_text_problem (image->lockfile), error)
          || !check_option ("the image ref", image->image, debpolicy_text_problem (image->image),
                            error))
        return FALSE;
      g_autofree char *shown = g_strescape (image->image, NULL);
      g_autoptr(GError) ref_error = NULL;
      if (!repo_check_ref_name (image->image, &ref_error))
        return util_fail (error, "%s: the image ref %s", image->lockfile, ref_error->message);
      BuildImage *other = g_hash_table_lookup (by_ref, image->image);
      if (other != NULL)
        return cmd_usage_error (inv, error, "%s and %s both give the image ref \"%s\"; name one "
                                "of them with LOCKFILE=REF", other->lockfile, image->lockfile, shown);
      g_hash_table_insert (by_ref, image->image, image);
    }
  return check_nested_refs (args, inv, error);
}

gboolean
build_args_complete (BuildArgs *args, CmdInvocation *inv, int n_operands, char **operands,
                     GError **error)
{
  if (!parse_images (args, inv, n_operands, operands, error))
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
  if (args->images->len > 1)
    return g_build_filename (args->builddir, "images.ninja", NULL);
  BuildImage *image = args->images->pdata[0];
  g_autofree char *name = g_strdelimit (g_strdup (image->image), "/", '_');
  g_autofree char *file = g_strconcat (name, ".ninja", NULL);
  return g_build_filename (args->builddir, file, NULL);
}

/* The names of the sources of every image, which --mirror may name. */
static GStrv
source_names (BuildArgs *args)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < args->images->len; i++)
    {
      Lockfile *lock = ((BuildImage *) args->images->pdata[i])->lock;
      for (guint j = 0; j < lock->sources->len; j++)
        {
          const char *name = ((LockSource *) lock->sources->pdata[j])->name;
          if (g_hash_table_add (seen, (gpointer) name))
            g_strv_builder_add (b, name);
        }
    }
  return g_strv_builder_end (b);
}

/* The sources an image's packages are fetched from: --sources, else the
 * file the lock was made from, else the host's apt configuration; then
 * --mirror.  A --mirror for a source no lockfile names would be ignored
 * (its packages then come from elsewhere): a typo, said at once. */
static SourcesList *
load_sources (BuildArgs *args, BuildImage *image, const char *const *names, GError **error)
{
  Lockfile *lock = image->lock;
  g_autofree char *recorded = lockfile_request_sources_path (lock, image->lockfile);
  g_autoptr(SourcesList) sources = sources_load (args->sources != NULL ? args->sources : recorded,
                                                 error);
  if (sources == NULL)
    return NULL;
  if (lock->request.suite != NULL && !sources_list_set_suite (sources, lock->request.suite, error))
    return NULL;
  g_autoptr(GString) where = g_string_new (args->images->len == 1 ? "the lockfile "
                                                                  : "the lockfiles ");
  for (guint i = 0; i < args->images->len; i++)
    g_string_append_printf (where, "%s%s", i == 0 ? "" : ", ",
                            ((BuildImage *) args->images->pdata[i])->lockfile);
  if (!sources_list_apply_mirrors (sources, (const char *const *) args->mirrors, names, where->str,
                                   error))
    return NULL;
  return g_steal_pointer (&sources);
}

gboolean
build_load_images (BuildArgs *args, GError **error)
{
  for (guint i = 0; i < args->images->len; i++)
    {
      BuildImage *image = args->images->pdata[i];
      if (image->lock == NULL && (image->lock = lockfile_load (image->lockfile, error)) == NULL)
        return FALSE;
    }
  g_auto(GStrv) names = source_names (args);
  for (guint i = 0; i < args->images->len; i++)
    {
      BuildImage *image = args->images->pdata[i];
      if (image->sources == NULL
          && (image->sources = load_sources (args, image, (const char *const *) names, error)) == NULL)
        return FALSE;
    }
  return TRUE;
}

/* The Ninja file's text for ARGS, and its download list's in
 * *OUT_DOWNLOADS. */
static char *
generate_ninja (BuildArgs *args, const char *output_path, gboolean subninja,
                char **out_downloads, GError **error)
{
  if (!build_load_images (args, error))
    return NULL;
  /* The rules run the program that runs now (the commands module is
   * loaded into it). */
  g_autofree char *self = g_file_read_link ("/proc/self/exe", error);
  if (self == NULL)
    return NULL;

  g_autoptr(GArray) images = g_array_new (FALSE, TRUE, sizeof (NinjaImage));
  g_autoptr(GPtrArray) apt_dirs = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < args->images->len; i++)
    {
      BuildImage *image = args->images->pdata[i];
      NinjaImage ni = { image->lockfile, image->image, image->lock, image->sources, NULL };
      if (args->apt_sources)
        {
          /* BUILDDIR/apt-sources/IMAGE (with "/" as "_"): what goes over the image. */
          g_autofree char *name = g_strdelimit (g_strdup (image->image), "/", '_');
          char *dir = g_build_filename (args->builddir, "apt-sources", name, NULL);
          g_ptr_array_add (apt_dirs, dir);
          if (!aptsources_write (image->lock, image->sources, dir, error))
            return NULL;
          ni.apt_sources_dir = dir;
        }
      g_array_append_val (images, ni);
    }
  NinjaOptions options = {
    .apt2ostree = self,
    .output_path = output_path,
    .builddir = args->builddir,
    .repo = args->repo,
    .sources_path = args->sources,
    .mirrors = (const char *const *) args->mirrors,
    .subninja = subninja,
    .download_jobs = args->download_jobs,
    .before_configure = (const char *const *) args->before_configure,
    .after_configure = (const char *const *) args->after_configure,
    .configure_hooks = (const char *const *) args->configure_hooks,
    .deployable = args->deployable,
    .sbom = args->sbom,
    .apt_sources = args->apt_sources,
    .cache_url = args->cache.url,
    .cache_key = args->cache.key_path,
    .incremental = args->incremental,
    .timeout = args->timeout,
    .memory_limit = args->memory_limit,
    .max_processes = args->max_processes,
  };
  return ninja_generate ((NinjaImage *) images->data, images->len, &options, out_downloads,
                         error);
}

gboolean
build_write_ninja (BuildArgs *args, const char *output_path, gboolean subninja, GError **error)
{
  /* The download list goes where the edges' fetch service looks, the
   * cache they download into; none with a build cache (its trees make most
   * downloads moot). */
  gboolean list = args->cache.url == NULL;
  g_autofree char *downloads = NULL;
  g_autofree char *text = generate_ninja (args, output_path, subninja, list ? &downloads : NULL,
                                          error);
  if (text == NULL)
    return FALSE;
  if (list)
    {
      g_autofree char *cache_dir = g_build_filename (args->builddir, "cache", "debs", NULL);
      g_autofree char *path = fetch_client_list_path (cache_dir, output_path);
      if (!ninja_write_if_changed (path, downloads, error))
        return FALSE;
    }
  return ninja_write_if_changed (output_path, text, error);
}

/* Add each of ITEMS (trees put over the image) as its commit; FALSE when
 * one is a directory or not a ref of REPO. */
static gboolean
add_tree_inputs (GPtrArray *inputs, const char *what, char **items, OstreeRepo *repo)
{
  for (char **i = items; i != NULL && *i != NULL; i++)
    {
      if (g_file_test (*i, G_FILE_TEST_IS_DIR))
        return FALSE;
      g_autofree char *commit = repo_read_ref (repo, *i);
      if (commit == NULL)
        return FALSE;
      g_ptr_array_add (inputs, g_strconcat (what, commit, NULL));
    }
  return TRUE;
}

char *
build_image_cache_ref (BuildArgs *args, BuildImage *image, OstreeRepo *repo)
{
  if (args->apt_sources || args->sbom != NULL)
    return NULL;
  Lockfile *lock = image->lock;
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (inputs, g_strdup (lock->request.architecture));
  g_ptr_array_add (inputs, g_strdup (lock->merged_usr ? "merged-usr" : "split-usr"));
  const char *env = g_getenv ("SOURCE_DATE_EPOCH");
  g_ptr_array_add (inputs, env != NULL && *env != '\0'
                               ? g_strconcat ("epoch=", env, NULL)
                               : g_strdup_printf ("epoch=%" G_GINT64_FORMAT,
                                                  ninja_lockfile_epoch (lock)));
  for (guint i = 0; i < lock->packages->len; i++)
    {
      LockPackage *p = lock->packages->pdata[i];
      g_ptr_array_add (inputs, deb_ref_name (p->name, p->version, p->architecture, p->sha256));
    }
  for (guint i = 0; i < lock->install_order->len; i++)
    g_ptr_array_add (inputs, g_strconcat ("order=", lock->install_order->pdata[i], NULL));
  for (char **f = lock->request.path_filters; f != NULL && *f != NULL; f++)
    g_ptr_array_add (inputs, g_strconcat ("filter=", *f, NULL));
  for (char **h = args->configure_hooks; h != NULL && *h != NULL; h++)
    g_ptr_array_add (inputs, g_strconcat ("hook=", *h, NULL));
  if (!add_tree_inputs (inputs, "before=", args->before_configure, repo)
      || !add_tree_inputs (inputs, "after=", args->after_configure, repo))
    return NULL;
  if (args->deployable)
    g_ptr_array_add (inputs, g_strdup ("deployable"));
  g_ptr_array_add (inputs, NULL);
  return buildcache_ref ("image", (const char *const *) inputs->pdata);
}

/* The build's repository, made when missing (as the Ninja file's first
 * step would). */
OstreeRepo *
build_open_repo (BuildArgs *args, GCancellable *cancellable, GError **error)
{
  g_autofree char *default_repo = g_build_filename (args->builddir, "ostree", NULL);
  return repo_ensure (args->repo != NULL ? args->repo : default_repo, NULL, cancellable, error);
}

/* The one line a build says when the cache does not give IMAGE whole
 * (MISS says why): its steps then ask the cache one by one. */
static void
say_image_miss (BuildArgs *args, BuildImage *image, const char *key, const GError *miss)
{
  g_autofree char *why = NULL;
  if (g_error_matches (miss, CACHEFETCH_ERROR, CACHEFETCH_ERROR_NO_REF))
    why = g_strdup_printf ("it has no %s: no build of this lockfile with these options was "
                           "published there by apt2ostree " PACKAGE_VERSION, key);
  else
    why = g_strdup (miss->message);
  fprintf (stderr, "apt2ostree: image %s: not from the cache %s (%s); its %u package trees and "
           "its stages are taken from it one by one, and built here when it lacks them\n",
           image->image, args->cache.url, why, image->lock->packages->len);
}

/* --cache-url: each image the cache has whole, by its key (see
 * build_image_cache_ref), is taken from it and ninja does not build it;
 * one this repository took before (its key's ref holds it) is kept.  The
 * others go into TODO.  KEYS gets each image's key, or NULL. */
gboolean
build_images_from_cache (BuildArgs *args, OstreeRepo *repo, GPtrArray *todo, GPtrArray *keys,
                         GCancellable *cancellable, GError **error)
{
  buildcache_forget_refused (repo, &args->cache);
  for (guint i = 0; i < args->images->len; i++)
    {
      BuildImage *image = args->images->pdata[i];
      char *key = build_image_cache_ref (args, image, repo);
      g_ptr_array_add (keys, key);
      if (key == NULL)
        {
          g_ptr_array_add (todo, image);
          continue;
        }
      g_autofree char *known = repo_read_ref (repo, key);
      if (known != NULL)
        {
          const char *refs[] = { image->image, NULL };
          if (!buildcache_set_refs (repo, refs, known, cancellable, error))
            return FALSE;
          continue;
        }
      g_autoptr(GError) miss = NULL;
      g_autofree char *commit = buildcache_try_fetch (repo, &args->cache, key, image->image,
                                                      cancellable, &miss);
      /* (A refusal for the signature is said once, at the end.) */
      if (commit == NULL && !g_error_matches (miss, CACHEFETCH_ERROR, CACHEFETCH_ERROR_SIGNATURE)
          && !g_error_matches (miss, BUILDCACHE_ERROR, BUILDCACHE_ERROR_REFUSED_BEFORE))
        say_image_miss (args, image, key, miss);
      if (commit == NULL)
        g_ptr_array_add (todo, image);
    }
  return TRUE;
}
