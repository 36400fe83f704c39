/* ninja.c — the Ninja file for one or more images: the package-tree edges
 * shared by the images, then each image's stage-1 and stage-2 edges. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include <curl/curl.h>

#include "apt/cache.h"
#include "deb/deb.h"
#include "graph/ninja.h"
#include "graph/imagespec.h"
#include "base/util.h"

/* The file being written, and the first value that could not be written
 * into it: everything goes through the appenders below, which refuse what
 * no escape can carry, so a value that slipped past the lockfile's checks
 * still cannot end a line and start a binding (a "command" of its own). */
typedef struct {
  GString *text;
  char *refused;   /* the first value refused, escaped for an error, or NULL */
  const char *why;
} NinjaOut;

static void
ninja_out_clear (NinjaOut *out)
{
  if (out->text != NULL)
    g_string_free (out->text, TRUE);
  g_free (out->refused);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (NinjaOut, ninja_out_clear)

/* Can VALUE be written at all?  A newline ends a Ninja line whatever
 * precedes it, and no control character belongs in a path or a word; in a
 * path, "|" ends the path and has no escape. */
static gboolean
writable (NinjaOut *out, const char *value, gboolean path)
{
  const char *why = NULL;
  for (const char *p = value; *p != '\0' && why == NULL; p++)
    if ((unsigned char) *p < 0x20 || *p == 0x7f)
      why = "contains a control character (a newline, a tab...), which a Ninja file cannot hold";
    else if (path && *p == '|')
      why = "contains \"|\", which a path in a Ninja file cannot hold";
  if (why == NULL)
    return TRUE;
  if (out->refused == NULL)
    {
      out->refused = g_strescape (value, NULL);
      out->why = why;
    }
  return FALSE;
}

/* A path in a build line, where "$", " " and ":" are special. */
static void
append_path (NinjaOut *out, const char *path)
{
  if (!writable (out, path, TRUE))
    return;
  for (const char *p = path; *p != '\0'; p++)
    {
      if (*p == '$' || *p == ' ' || *p == ':')
        g_string_append_c (out->text, '$');
      g_string_append_c (out->text, *p);
    }
}

/* A word the shell will see in a command, quoted only when it needs to be,
 * with "$" doubled for ninja. */
static void
append_word (NinjaOut *out, const char *word)
{
  if (!writable (out, word, FALSE))
    return;
  gboolean plain = *word != '\0';
  for (const char *p = word; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && strchr ("_./:=+,@%-~", *p) == NULL)
      plain = FALSE;
  g_autofree char *quoted = plain ? g_strdup (word) : g_shell_quote (word);
  for (const char *p = quoted; *p != '\0'; p++)
    {
      if (*p == '$')
        g_string_append_c (out->text, '$');
      g_string_append_c (out->text, *p);
    }
}

/* Text of the file itself (rule names, punctuation, numbers, comments made
 * of checked values). */
static void
append_text (NinjaOut *out, const char *text)
{
  g_string_append (out->text, text);
}

static void
append_printf (NinjaOut *out, const char *format, ...) G_GNUC_PRINTF (2, 3);

static void
append_printf (NinjaOut *out, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_string_append_vprintf (out->text, format, args);
  va_end (args);
}

/* " OPTION VALUE" (VALUE a word of a command), when VALUE is given. */
static void
append_option (NinjaOut *out, const char *option, const char *value)
{
  if (value == NULL)
    return;
  append_printf (out, " %s ", option);
  append_word (out, value);
}

/* " OPTION VALUE" for each of VALUES. */
static void
append_options (NinjaOut *out, const char *option, const char *const *values)
{
  for (const char *const *v = values; v != NULL && *v != NULL; v++)
    append_option (out, option, *v);
}

static void
append_variable (NinjaOut *out, const char *name, const char *word)
{
  append_printf (out, "  %s = ", name);
  append_word (out, word);
  append_text (out, "\n");
}

/* "$repo/refs/heads/REF" */
static void
append_ref_path (NinjaOut *out, const char *ref)
{
  append_text (out, "$repo/refs/heads/");
  append_path (out, ref);
}


/* The packages in install order, each once. */
static GPtrArray *
packages_in_order (Lockfile *lock, const char *lockfile_path, GError **error)
{
  g_autoptr(GPtrArray) ordered = g_ptr_array_new ();
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);
  for (guint i = 0; i < lock->install_order->len; i++)
    {
      g_auto(GStrv) parts = g_strsplit (lock->install_order->pdata[i], ":", 2);
      LockPackage *package = lockfile_lookup_package (lock, parts[0], parts[1]);
      if (package == NULL)
        return util_fail (error, "%s: install-order names \"%s\", which is not among the packages",
                          lockfile_path, (char *) lock->install_order->pdata[i]), NULL;
      if (g_hash_table_add (seen, package))
        g_ptr_array_add (ordered, package);
    }
  for (guint i = 0; i < lock->packages->len; i++)
    if (!g_hash_table_contains (seen, lock->packages->pdata[i]))
      {
        LockPackage *package = lock->packages->pdata[i];
        return util_fail (error, "%s: package \"%s\" is missing from install-order; re-run "
                          "\"apt2ostree lock --update %s\"", lockfile_path, package->name,
                          lockfile_path), NULL;
      }
  if (ordered->len == 0)
    return util_fail (error, "%s: the lockfile holds no packages", lockfile_path), NULL;
  return g_steal_pointer (&ordered);
}

/* One package tree's edge: written once, for the first image that uses the
 * package (its URL and its merged /usr). */
typedef struct {
  LockPackage *package;
  const NinjaImage *image;
  char *ref;
  char **urls;            /* in the order to try them */
} PackageEdge;

static void
package_edge_free (gpointer data)
{
  PackageEdge *edge = data;
  g_free (edge->ref);
  g_strfreev (edge->urls);
  g_free (edge);
}

/* Every image's package trees: the edges in the order the images first use
 * them, and each image's refs in its install order. */
typedef struct {
  GPtrArray *edges;       /* PackageEdge */
  GHashTable *by_ref;     /* ref -> PackageEdge */
  GPtrArray *image_refs;  /* per image, a GPtrArray of refs (the edges' strings) */
} PackageGraph;

static void
package_graph_clear (PackageGraph *graph)
{
  g_clear_pointer (&graph->by_ref, g_hash_table_unref);
  g_clear_pointer (&graph->image_refs, g_ptr_array_unref);
  g_clear_pointer (&graph->edges, g_ptr_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (PackageGraph, package_graph_clear)

/* PACKAGE of IMAGE: its edge, made when no image before used the package.
 * A package tree is one ref, so two images that unpack it differently
 * (merged /usr or not) cannot share a repository. */
static PackageEdge *
package_graph_add (PackageGraph *graph, const NinjaImage *image, LockPackage *package,
                   GError **error)
{
  g_autofree char *ref = deb_ref_name (package->name, package->version, package->architecture,
                                       package->sha256);
  PackageEdge *edge = g_hash_table_lookup (graph->by_ref, ref);
  if (edge != NULL)
    {
      if (edge->image->lock->merged_usr == image->lock->merged_usr)
        return edge;
      return util_fail (error, "%s and %s: package \"%s\" %s is unpacked with merged /usr for one "
                        "and without for the other, and its tree has one ref; re-lock one of them "
                        "with the other's --merged-usr, or build them in separate --builddir",
                        edge->image->lockfile_path, image->lockfile_path, package->name,
                        package->version), NULL;
    }
  g_auto(GStrv) urls = package->path != NULL
                       ? lockfile_local_package_urls (image->lockfile_path, package)
                       : lockfile_package_urls (image->lock, package, image->sources, error);
  if (urls == NULL)
    return NULL;
  edge = g_new0 (PackageEdge, 1);
  edge->package = package;
  edge->image = image;
  edge->ref = g_steal_pointer (&ref);
  edge->urls = g_steal_pointer (&urls);
  g_ptr_array_add (graph->edges, edge);
  g_hash_table_insert (graph->by_ref, edge->ref, edge);
  return edge;
}

static gboolean
package_graph_build (PackageGraph *graph, const NinjaImage *images, guint n_images,
                     GError **error)
{
  graph->edges = g_ptr_array_new_with_free_func (package_edge_free);
  graph->by_ref = g_hash_table_new (g_str_hash, g_str_equal);
  graph->image_refs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  for (guint i = 0; i < n_images; i++)
    {
      g_autoptr(GPtrArray) ordered = packages_in_order (images[i].lock, images[i].lockfile_path,
                                                        error);
      if (ordered == NULL)
        return FALSE;
      GPtrArray *refs = g_ptr_array_new ();
      g_ptr_array_add (graph->image_refs, refs);
      for (guint j = 0; j < ordered->len; j++)
        {
          PackageEdge *edge = package_graph_add (graph, &images[i], ordered->pdata[j], error);
          if (edge == NULL)
            return FALSE;
          g_ptr_array_add (refs, edge->ref);
        }
    }
  return TRUE;
}

/* The date stage 2 runs at: the newest Release date of the lockfile's
 * sources, so that the dates a postinst writes (/etc/shadow's) and the
 * image's commit time are the same wherever the lockfile is built. */
gint64
ninja_lockfile_epoch (Lockfile *lock)
{
  gint64 newest = 0;
  for (guint i = 0; i < lock->sources->len; i++)
    {
      LockSource *source = lock->sources->pdata[i];
      time_t t = source->date != NULL ? curl_getdate (source->date, NULL) : -1;
      if (t > newest)
        newest = t;
    }
  return newest;
}

/* A pool name unique to the repository: pools are global to a Ninja build,
 * and files for other repositories may be included into one. */
static char *
pool_name (const char *repo)
{
  g_autofree char *raw = g_strdup_printf ("a2o_download_%s", repo);
  for (char *p = raw; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '_')
      *p = '_';
  return g_steal_pointer (&raw);
}

static void
append_header (NinjaOut *out, const NinjaImage *images, guint n_images, PackageGraph *graph,
               const NinjaOptions *options, const char *repo)
{
  append_printf (out, "# %u image%s, %u package trees, one repository.\n",
                 n_images, n_images == 1 ? "" : "s", graph->edges->len);
  for (guint i = 0; i < n_images; i++)
    {
      const NinjaImage *image = &images[i];
      GPtrArray *refs = graph->image_refs->pdata[i];
      /* The comment names them: they must not end it. */
      if (!writable (out, image->image, TRUE) || !writable (out, image->lockfile_path, TRUE)
          || !writable (out, image->lock->request.architecture, FALSE))
        return;
      append_printf (out, "#   %s: %u packages from %s (%s, %s)\n", image->image, refs->len,
                     image->lockfile_path, image->lock->request.architecture,
                     image->lock->merged_usr ? "merged /usr" : "no merged /usr");
    }
  append_printf (out,
      "# Written by \"apt2ostree ninja\"; it rewrites itself when a lockfile changes.\n"
      "# A package tree has one edge however many images use it.\n"
      "#\n"
      "# Targets, for each IMAGE:\n"
      "#   IMAGE                  the configured image (ref IMAGE)\n"
      "#   IMAGE/stage1           every package unpacked, not configured (ref stage1/IMAGE)\n"
      "#   IMAGE/update-lockfile  re-resolve its lockfile without building\n%s"
      "#\n"
      "# Paths are relative to the directory ninja runs in.\n\n"
      "ninja_required_version = 1.8\n",
      options->subninja ? "" : "#   update-lockfiles       every lockfile, as the nightly job calls it\n");
  if (!options->subninja)
    {
      append_text (out, "builddir = ");
      append_path (out, options->builddir);
      append_text (out, "\n");
    }
  append_text (out, "a2o = ");
  append_word (out, options->apt2ostree);
  /* The repository and the cache are paths in build lines ($repo) and
   * words in commands ($repo_arg), escaped for each. */
  append_text (out, "\nrepo = ");
  append_path (out, repo);
  append_text (out, "\nrepo_arg = ");
  append_word (out, repo);
  g_autofree char *cache = g_build_filename (options->builddir, "cache", "debs", NULL);
  append_text (out, "\ncache_arg = ");
  append_word (out, cache);
  if (options->cache_url != NULL)
    {
      /* --cache-url: each step first asks the shared cache. */
      append_text (out, "\nbuild_cache =");
      append_option (out, "--cache-url", options->cache_url);
      append_option (out, "--cache-key", options->cache_key);
    }
  append_text (out, "\n\n");
}

/* Two files generated separately for one repository would both write the
 * edges of the packages they share, which ninja refuses ("multiple rules
 * generate ...").  This edge comes first, so that is the output ninja names,
 * and its name says what to do. */
static void
append_repository_claim (NinjaOut *out)
{
  append_text (out,
      "# One generated file per repository: a second one, included into the same build,\n"
      "# fails on this edge.  Give all the lockfiles to one \"apt2ostree ninja\" instead.\n"
      "build $repo/one-ninja-file-per-repository.give-every-lockfile-to-one-apt2ostree-ninja: "
      "phony\n\n");
}

/* " --timeout SECONDS" and the other sandbox limits that were given. */
static void
append_limits (NinjaOut *out, const NinjaOptions *options)
{
  append_option (out, "--timeout", options->timeout);
  append_option (out, "--memory-limit", options->memory_limit);
  append_option (out, "--max-processes", options->max_processes);
}

/* "apt2ostree ninja LOCKFILE=REF… -o FILE …" again, with the options that
 * made this file. */
static void
append_regen_command (NinjaOut *out, const NinjaImage *images, guint n_images,
                      const NinjaOptions *options)
{
  append_text (out, "$a2o ninja");
  for (guint i = 0; i < n_images; i++)
    {
      /* LOCKFILE=REF, or LOCKFILE alone when that gives REF. */
      g_autofree char *default_image = imagespec_default_ref (images[i].lockfile_path);
      gboolean plain = g_str_equal (default_image, images[i].image)
                       && strchr (images[i].lockfile_path, '=') == NULL;
      g_autofree char *operand = plain ? g_strdup (images[i].lockfile_path)
                                       : g_strconcat (images[i].lockfile_path, "=", images[i].image, NULL);
      append_text (out, " ");
      append_word (out, operand);
    }
  append_option (out, "-o", options->output_path);
  append_option (out, "--builddir", options->builddir);
  append_option (out, "--repo", options->repo);
  append_option (out, "--sources", options->sources_path);
  append_options (out, "--mirror", options->mirrors);
  if (options->subninja)
    append_text (out, " --subninja");
  append_printf (out, " --download-jobs %d", options->download_jobs);
  append_options (out, "--before-configure", options->before_configure);
  append_options (out, "--after-configure", options->after_configure);
  append_options (out, "--configure-hook", options->configure_hooks);
  append_limits (out, options);
  if (options->deployable)
    append_text (out, " --deployable");
  if (options->apt_sources)
    append_text (out, " --apt-sources");
  if (options->incremental)
    append_text (out, " --incremental");
  append_option (out, "--sbom", options->sbom);
  if (options->cache_url != NULL)
    append_text (out, " $build_cache");
}

static void
append_rules (NinjaOut *out, const NinjaImage *images, guint n_images,
              const NinjaOptions *options, const char *pool)
{
  /* The commands print the commit they wrote; ninja's own progress line
   * says the same, so their standard output goes away (errors stay).
   * Stage 1's package refs go in a response file that ninja writes into
   * the repository's directory and removes when the edge succeeds: Linux
   * refuses one argument over 128 KiB, and "sh -c" takes the whole command
   * as one (about 1,270 package refs).  Not tmp/: the repository's
   * directory is there even for "ninja -n" before the first build (ninja
   * makes the directories of the edge's output, refs/heads/stage1/), and
   * one Ninja file per repository keeps the names apart. */
  append_printf (out, "pool %s\n  depth = %d\n\n", pool, options->download_jobs);
  /* With a cache, a package's tree is pulled from it when it has it (then
   * unpack-deb finds its ref holding the package and does nothing). */
  const char *pull = options->cache_url == NULL ? ""
                     : "$a2o --repo $repo_arg cache-pull $build_cache $ref > /dev/null && ";
  const char *step_cache = options->cache_url == NULL ? "" : " $build_cache";

  append_printf (out,
      "rule a2o_init\n"
      "  command = $a2o --repo $repo_arg init\n"
      "  description = init $repo\n"
      "  restat = 1\n\n"
      "rule a2o_unpack\n"
      "  command = %s$a2o --repo $repo_arg unpack-deb --ref $ref --sha256 $sha256 --size $size "
      "--cache $cache_arg $merged_usr $url > /dev/null\n"
      "  description = fetch+unpack $package $version\n"
      "  pool = %s\n"
      "  restat = 1\n\n"
      "rule a2o_stage1\n"
      "  command = $a2o --repo $repo_arg stage1 --ref $ref --arch $arch%s $path_filters "
      "--packages-from $repo_arg/$packages_list > /dev/null\n"
      "  description = stage1 $ref\n"
      "  rspfile = $repo/$packages_list\n"
      "  rspfile_content = $packages\n"
      "  restat = 1\n\n"
      "rule a2o_configure\n"
      "  command = env SOURCE_DATE_EPOCH=$${SOURCE_DATE_EPOCH:-$epoch} "
      "$a2o --repo $repo_arg configure --ref $ref%s $hooks$limits $stage1 > /dev/null\n"
      "  description = configure $ref (dpkg --configure -a)\n"
      "  restat = 1\n\n"
      "rule a2o_import\n"
      "  command = $a2o --repo $repo_arg import --ref $ref $dir > /dev/null\n"
      "  description = import $dir\n"
      "  restat = 1\n\n"
      "rule a2o_overlay\n"
      "  command = $a2o --repo $repo_arg overlay --ref $ref $trees > /dev/null\n"
      "  description = overlay $ref\n"
      "  restat = 1\n\n"
      "rule a2o_deployable\n"
      "  command = $a2o --repo $repo_arg deployable --ref $ref $in_ref > /dev/null\n"
      "  description = deployable $ref\n"
      "  restat = 1\n\n"
      "rule a2o_sbom\n"
      "  command = $a2o --repo $repo_arg sbom $image --lockfile $lockfile -o $out\n"
      "  description = sbom $image\n"
      "  restat = 1\n\n"
      "rule a2o_lock_update\n"
      "  command = $a2o lock --update $lockfile\n"
      "  description = lock --update $lockfile\n"
      "  restat = 1\n\n"
      "rule a2o_regen\n"
      "  command = ",
      pull, pool, step_cache, step_cache);
  append_regen_command (out, images, n_images, options);
  /* restat: an unchanged file is not rewritten, so without it a touched
   * lockfile would leave the manifest older than its input for ever
   * ("manifest still dirty after 100 tries"). */
  append_text (out, "\n  description = regenerate $out\n  generator = 1\n  restat = 1\n\n");
  /* --incremental: the image its ref holds before the edge runs is where
   * stage 2 starts (none: from scratch); never from or into the cache. */
  if (options->incremental)
    append_text (out,
        "rule a2o_configure_incremental\n"
        "  command = env SOURCE_DATE_EPOCH=$${SOURCE_DATE_EPOCH:-$epoch} "
        "$a2o --repo $repo_arg configure --ref $ref --incremental --lockfile $lockfile "
        "--debs $cache_arg $hooks$limits $stage1 > /dev/null\n"
        "  description = configure $ref (incremental: from the image it replaces)\n"
        "  restat = 1\n\n");
}

static void
append_package_edges (NinjaOut *out, PackageGraph *graph)
{
  append_text (out, "# One tree per package, named by its content (see unpack-deb), one edge\n"
                    "# however many images use it.\n");
  for (guint i = 0; i < graph->edges->len; i++)
    {
      PackageEdge *edge = graph->edges->pdata[i];
      LockPackage *package = edge->package;
      append_text (out, "build ");
      append_ref_path (out, edge->ref);
      append_text (out, ": a2o_unpack || $repo/config\n");
      append_variable (out, "package", package->name);
      append_variable (out, "version", package->version);
      append_variable (out, "ref", edge->ref);
      append_variable (out, "sha256", package->sha256);
      g_autofree char *size = g_strdup_printf ("%" G_GINT64_FORMAT, package->size);
      append_variable (out, "size", size);
      append_variable (out, "merged_usr",
                       edge->image->lock->merged_usr ? "--merged-usr" : "--no-merged-usr");
      append_text (out, "  url =");
      for (char **u = edge->urls; *u != NULL; u++)
        {
          append_text (out, " ");
          append_word (out, *u);
        }
      append_text (out, "\n");
    }
}

/* The name of IMAGE's stage-1 response file in the repository: a
 * file name that needs no quoting in Ninja or the shell ("_" and all but
 * letters, digits, "." and "-" as "_XX", so two images never share one),
 * or for a name too long for a file, its checksum. */
static char *
stage1_list_name (const char *image)
{
  g_autoptr(GString) name = g_string_new ("stage1-");
  for (const char *p = image; *p != '\0'; p++)
    if (g_ascii_isalnum (*p) || *p == '.' || *p == '-')
      g_string_append_c (name, *p);
    else
      g_string_append_printf (name, "_%02x", (guint8) *p);
  if (name->len > 200)
    {
      g_autofree char *sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, image, -1);
      g_string_printf (name, "stage1-%s", sum);
    }
  g_string_append (name, ".packages");
  return g_string_free (g_steal_pointer (&name), FALSE);
}

/* IMAGE's stage-1 edge: its package trees REFS into STAGE1. */
static void
append_stage1 (NinjaOut *out, const NinjaImage *image, GPtrArray *refs, const char *stage1)
{
  append_printf (out, "\n# %s, stage 1: the package trees in install order, and the dpkg "
                 "database.\nbuild ", image->image);
  append_ref_path (out, stage1);
  append_text (out, ": a2o_stage1");
  for (guint i = 0; i < refs->len; i++)
    {
      append_text (out, " $\n    ");
      append_ref_path (out, refs->pdata[i]);
    }
  append_text (out, "\n");
  append_variable (out, "ref", stage1);
  append_variable (out, "arch", image->lock->request.architecture);
  /* lock --path-exclude/--path-include, in order. */
  char **filters = image->lock->request.path_filters;
  if (filters != NULL && filters[0] != NULL)
    {
      append_text (out, "  path_filters =");
      append_options (out, "--path-filter", (const char *const *) filters);
      append_text (out, "\n");
    }
  g_autofree char *list = stage1_list_name (image->image);
  append_variable (out, "packages_list", list);
  append_text (out, "  packages =");
  for (guint i = 0; i < refs->len; i++)
    {
      append_text (out, " $\n     ");
      append_word (out, refs->pdata[i]);
    }
  append_text (out, "\n");
}

/* The trees of --before-configure or --after-configure (WHICH): a
 * directory is imported by an edge of its own into hooks/NAME/WHICH-N, run
 * every time (ninja cannot see into a directory) but with restat, so an
 * unchanged directory changes nothing downstream; anything else is a ref of
 * the repository.  Returns the refs, in order. */
static GPtrArray *
append_hook_trees (NinjaOut *out, const char *image, const char *which,
                   const char *const *items, const char *always, gboolean *any_import)
{
  g_autoptr(GPtrArray) refs = g_ptr_array_new_with_free_func (g_free);
  gboolean any_dir = FALSE;
  for (guint i = 0; items != NULL && items[i] != NULL; i++)
    {
      if (!g_file_test (items[i], G_FILE_TEST_IS_DIR))
        {
          g_ptr_array_add (refs, g_strdup (items[i]));
          continue;
        }
      char *ref = imagespec_hook_ref (image, which, i + 1);
      g_ptr_array_add (refs, ref);
      if (!any_dir)
        append_printf (out, "\n# --%s directories, imported on every run.\n", which);
      any_dir = TRUE;
      *any_import = TRUE;
      append_text (out, "build ");
      append_ref_path (out, ref);
      append_text (out, ": a2o_import | ");
      append_path (out, always);
      append_text (out, " || $repo/config\n");
      append_variable (out, "ref", ref);
      append_variable (out, "dir", items[i]);
    }
  return g_steal_pointer (&refs);
}

/* An edge putting the trees REFS over BASE into OUT (see overlay.h). */
static void
append_overlay (NinjaOut *out, const char *comment, const char *out_ref, const char *base,
                GPtrArray *refs)
{
  append_text (out, comment);
  append_text (out, "build ");
  append_ref_path (out, out_ref);
  append_text (out, ": a2o_overlay ");
  append_ref_path (out, base);
  for (guint i = 0; i < refs->len; i++)
    {
      append_text (out, " ");
      append_ref_path (out, refs->pdata[i]);
    }
  append_text (out, "\n");
  append_variable (out, "ref", out_ref);
  append_text (out, "  trees = ");
  append_word (out, base);
  for (guint i = 0; i < refs->len; i++)
    {
      append_text (out, " ");
      append_word (out, refs->pdata[i]);
    }
  append_text (out, "\n");
}

/* IMAGE's stage-2 edge: dpkg --configure -a over CONFIGURE_IN into CONFIGURED. */
static void
append_stage2 (NinjaOut *out, const NinjaImage *image, const NinjaOptions *options,
               const char *configure_in, const char *configured)
{
  if (options->incremental)
    append_printf (out, "\n# %s, stage 2, incremental: over the image its ref holds (see\n"
                   "# \"build --incremental\"), dpkg --purge, --unpack, --configure -a.\nbuild ",
                   image->image);
  else
    append_printf (out, "\n# %s, stage 2: dpkg --configure -a in a sandbox.\nbuild ", image->image);
  append_ref_path (out, configured);
  append_text (out, options->incremental ? ": a2o_configure_incremental " : ": a2o_configure ");
  append_ref_path (out, configure_in);
  if (options->incremental)
    {
      /* Its packages are read from there. */
      append_text (out, " | ");
      append_path (out, image->lockfile_path);
    }
  append_text (out, "\n");
  append_variable (out, "ref", configured);
  if (options->incremental)
    append_variable (out, "lockfile", image->lockfile_path);
  append_variable (out, "stage1", configure_in);
  g_autofree char *epoch = g_strdup_printf ("%" G_GINT64_FORMAT, ninja_lockfile_epoch (image->lock));
  append_variable (out, "epoch", epoch);
  if (options->configure_hooks != NULL && options->configure_hooks[0] != NULL)
    {
      append_text (out, "  hooks =");
      append_options (out, "--configure-hook", options->configure_hooks);
      append_text (out, "\n");
    }
  /* Only when given, and glued to $hooks in the rule: an edge's command
   * that does not change does not configure existing images again.  "$ "
   * is the space Ninja would otherwise strip. */
  if (options->timeout != NULL || options->memory_limit != NULL
      || options->max_processes != NULL)
    {
      append_text (out, "  limits = $");
      append_limits (out, options);
      append_text (out, "\n");
    }
}

/* --deployable: IN rearranged as an OSTree deployment into IMAGE. */
static void
append_deployable (NinjaOut *out, const char *image, const char *in)
{
  append_printf (out, "\n# %s as an OSTree deployment.\nbuild ", image);
  append_ref_path (out, image);
  append_text (out, ": a2o_deployable ");
  append_ref_path (out, in);
  append_text (out, "\n");
  append_variable (out, "ref", image);
  append_variable (out, "in_ref", in);
}

/* IMAGE's edges from its stage 1 to its ref: the --before-configure trees
 * over stage1/NAME into before-configure/NAME, stage 2 (into configured/NAME
 * when --after-configure trees go over it into NAME, else into NAME). */
static void
append_configure (NinjaOut *out, const NinjaImage *image, const NinjaOptions *options,
                  const char *stage1)
{
  g_autofree char *always = g_strconcat (options->builddir, "/stamps/", image->image,
                                         ".hook-dirs", NULL);
  gboolean any_import = FALSE;
  g_autoptr(GPtrArray) before = append_hook_trees (out, image->image, "before-configure",
                                                   options->before_configure, always, &any_import);
  g_autoptr(GStrvBuilder) after_items = g_strv_builder_new ();
  if (options->after_configure != NULL)
    g_strv_builder_addv (after_items, (const char **) options->after_configure);
  if (image->apt_sources_dir != NULL)
    g_strv_builder_add (after_items, image->apt_sources_dir);
  g_auto(GStrv) after_list = g_strv_builder_end (after_items);
  g_autoptr(GPtrArray) after = append_hook_trees (out, image->image, "after-configure",
                                                  (const char *const *) after_list, always,
                                                  &any_import);
  if (any_import)
    {
      /* Never made, so always out of date. */
      append_text (out, "build ");
      append_path (out, always);
      append_text (out, ": phony\n");
    }
  g_autofree char *configure_in = before->len > 0 ? imagespec_before_configure_ref (image->image)
                                                  : g_strdup (stage1);
  /* With --deployable the configured image is before-deployable/NAME and
   * "deployable" makes NAME of it. */
  g_autofree char *finished = options->deployable ? imagespec_before_deployable_ref (image->image)
                                                  : g_strdup (image->image);
  g_autofree char *configured = after->len > 0 ? imagespec_configured_ref (image->image)
                                               : g_strdup (finished);
  if (before->len > 0)
    append_overlay (out, "\n# The --before-configure trees over stage 1.\n", configure_in, stage1,
                    before);
  append_stage2 (out, image, options, configure_in, configured);
  if (after->len > 0)
    append_overlay (out, "\n# The --after-configure trees over the configured image.\n",
                    finished, configured, after);
  if (options->deployable)
    append_deployable (out, image->image, finished);
}

/* IMAGE's stamp for re-locking: never made, so it runs every time it is
 * asked for (the lock update writes no output of its own). */
static char *
update_stamp (const NinjaImage *image, const NinjaOptions *options)
{
  return g_strconcat (options->builddir, "/stamps/", image->image, ".update-lockfile", NULL);
}

/* IMAGE's names: IMAGE, IMAGE/stage1, IMAGE/update-lockfile. */
static void
append_image_targets (NinjaOut *out, const NinjaImage *image, const NinjaOptions *options,
                      const char *stage1)
{
  g_autofree char *stage1_target = g_strconcat (image->image, "/stage1", NULL);
  g_autofree char *stamp = update_stamp (image, options);
  append_text (out, "\nbuild ");
  append_path (out, image->image);
  append_text (out, ": phony ");
  append_ref_path (out, image->image);
  append_text (out, "\nbuild ");
  append_path (out, stage1_target);
  append_text (out, ": phony ");
  append_ref_path (out, stage1);
  append_text (out, "\nbuild ");
  append_path (out, stamp);
  append_text (out, ": a2o_lock_update\n");
  append_variable (out, "lockfile", image->lockfile_path);
  append_text (out, "build ");
  append_path (out, image->image);
  append_text (out, "/update-lockfile: phony ");
  append_path (out, stamp);
  append_text (out, "\n");
}

static void
append_image (NinjaOut *out, const NinjaImage *image, GPtrArray *refs, const NinjaOptions *options)
{
  /* A ref cannot be both a file and a directory, so the stage-1 ref of
   * image NAME is stage1/NAME (its Ninja target is still NAME/stage1). */
  g_autofree char *stage1 = imagespec_stage1_ref (image->image);
  append_stage1 (out, image, refs, stage1);
  append_configure (out, image, options, stage1);
  append_image_targets (out, image, options, stage1);
}

/* What concerns every image: the default targets, re-locking them all, and
 * the edge that rewrites this file when a lockfile (or --sources) changes. */
static void
append_footer (NinjaOut *out, const NinjaImage *images, guint n_images,
               const NinjaOptions *options)
{
  for (guint i = 0; options->sbom != NULL && i < n_images; i++)
    {
      g_autofree char *sbom = ninja_sbom_path (options->sbom, images[i].image);
      append_text (out, "\n# The image's bill of materials.\nbuild ");
      append_path (out, sbom);
      append_text (out, ": a2o_sbom ");
      append_ref_path (out, images[i].image);
      append_text (out, " | ");
      append_path (out, images[i].lockfile_path);
      append_text (out, "\n");
      append_variable (out, "image", images[i].image);
      append_variable (out, "lockfile", images[i].lockfile_path);
    }
  append_text (out, "\ndefault");
  for (guint i = 0; i < n_images; i++)
    {
      append_text (out, " ");
      append_path (out, images[i].image);
    }
  for (guint i = 0; options->sbom != NULL && i < n_images; i++)
    {
      g_autofree char *sbom = ninja_sbom_path (options->sbom, images[i].image);
      append_text (out, " ");
      append_path (out, sbom);
    }
  append_text (out, "\n\n# The lockfiles: re-resolve them, and rewrite this file when one changes.\n");
  if (!options->subninja)
    {
      append_text (out, "build update-lockfiles: phony");
      for (guint i = 0; i < n_images; i++)
        {
          g_autofree char *stamp = update_stamp (&images[i], options);
          append_text (out, " ");
          append_path (out, stamp);
        }
      append_text (out, "\n");
    }
  append_text (out, "build ");
  append_path (out, options->output_path);
  append_text (out, ": a2o_regen");
  for (guint i = 0; i < n_images; i++)
    {
      append_text (out, " ");
      append_path (out, images[i].lockfile_path);
    }
  if (options->sources_path != NULL)
    {
      append_text (out, " ");
      append_path (out, options->sources_path);
    }
  append_text (out, "\n");
}

/* A deployable image boots through an initramfs that runs
 * ostree-prepare-root: its lockfile must have ostree-boot and dracut. */
static gboolean
check_deployable (const NinjaImage *images, guint n_images, GError **error)
{
  static const char *const needed[] = { "ostree-boot", "dracut" };
  for (guint i = 0; i < n_images; i++)
    for (guint j = 0; j < G_N_ELEMENTS (needed); j++)
      if (lockfile_lookup_package (images[i].lock, needed[j], NULL) == NULL)
        return util_fail (error, "%s: --deployable needs \"%s\" in the image (ostree-boot and "
                          "dracut make the initramfs that runs ostree-prepare-root); add it to the "
                          "package list and lock again", images[i].lockfile_path, needed[j]);
  return TRUE;
}

/* The download list: "REF SHA256 SIZE URL" for each package tree's .deb
 * that comes from a URL (its first one), tab-separated, in the edges' order. */
static char *
downloads_text (PackageGraph *graph, const NinjaOptions *options)
{
  GString *text = g_string_new ("");
  g_string_append_printf (text, "# The downloads of %s, for the fetch service "
                          "(\"apt2ostree ninja\" writes it): REF SHA256 SIZE URL\n",
                          options->output_path);
  for (guint i = 0; i < graph->edges->len; i++)
    {
      PackageEdge *edge = graph->edges->pdata[i];
      LockPackage *package = edge->package;
      if (package->sha256 == NULL || package->size < 0 || !cache_is_url (edge->urls[0])
          || g_str_has_prefix (edge->urls[0], "file:"))
        continue;
      g_string_append_printf (text, "%s\t%s\t%" G_GINT64_FORMAT "\t%s\n", edge->ref,
                              package->sha256, package->size, edge->urls[0]);
    }
  return g_string_free (text, FALSE);
}

char *
ninja_generate (const NinjaImage *images, guint n_images, const NinjaOptions *options,
                char **out_downloads, GError **error)
{
  g_return_val_if_fail (n_images > 0, NULL);
  if (options->deployable && !check_deployable (images, n_images, error))
    return NULL;
  g_auto(PackageGraph) graph = { NULL, };
  if (!package_graph_build (&graph, images, n_images, error))
    return NULL;

  g_autofree char *default_repo = g_build_filename (options->builddir, "ostree", NULL);
  const char *repo = options->repo != NULL ? options->repo : default_repo;
  g_autofree char *pool = pool_name (repo);
  g_auto(NinjaOut) out_state = { g_string_new (""), NULL, NULL };
  NinjaOut *out = &out_state;
  append_header (out, images, n_images, &graph, options, repo);
  append_repository_claim (out);
  append_rules (out, images, n_images, options, pool);
  append_text (out, "build $repo/config: a2o_init\n\n");
  append_package_edges (out, &graph);
  for (guint i = 0; i < n_images; i++)
    append_image (out, &images[i], graph.image_refs->pdata[i], options);
  append_footer (out, images, n_images, options);

  if (out->refused != NULL)
    {
      /* The value came from a lockfile or from an option. */
      g_autofree char *shown = g_strescape (n_images == 1 ? images[0].lockfile_path
                                                          : options->output_path, NULL);
      return util_fail (error, "%s: \"%s\" %s; nothing was written", shown, out->refused,
                        out->why), NULL;
    }
  if (out_downloads != NULL)
    *out_downloads = downloads_text (&graph, options);
  return g_string_free (g_steal_pointer (&out->text), FALSE);
}

char *
ninja_sbom_path (const char *sbom, const char *image)
{
  if (sbom == NULL)
    return NULL;
  if (g_str_has_suffix (sbom, "/"))
    return g_strconcat (sbom, image, ".spdx.json", NULL);
  return g_strdup (sbom);
}

gboolean
ninja_write_if_changed (const char *path, const char *text, GError **error)
{
  g_autofree char *current = NULL;
  if (g_file_get_contents (path, &current, NULL, NULL) && g_str_equal (current, text))
    return TRUE;

  g_autofree char *dir = g_path_get_dirname (path);
  if (g_mkdir_with_parents (dir, 0755) < 0)
    return util_fail (error, "%s: cannot create directory: %s", dir, g_strerror (errno));
  g_autoptr(GError) local_error = NULL;
  if (!g_file_set_contents (path, text, -1, &local_error))
    return util_fail (error, "%s: %s", path, local_error->message);
  return TRUE;
}
