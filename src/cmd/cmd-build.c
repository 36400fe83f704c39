/* apt2ostree build — lockfiles in, configured images out, through ninja. */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "graph/build.h"
#include "graph/buildstatus.h"
#include "graph/buildsync.h"
#include "graph/localcheck.h"
#include "graph/lockjob.h"
#include "graph/ninjarun.h"
#include "cmd/cmd.h"
#include "sandbox/foreign.h"
#include "sandbox/runlimits.h"
#include "apt/lockfile.h"
#include "apt/netcheck.h"
#include "store/repo.h"
#include "base/util.h"

/* Each image's commit, and how to look inside. */
static gboolean
print_images (BuildArgs *args, GCancellable *cancellable, GError **error)
{
  g_autofree char *default_repo = g_build_filename (args->builddir, "ostree", NULL);
  const char *repo_path = args->repo != NULL ? args->repo : default_repo;
  g_autoptr(OstreeRepo) repo = repo_open (repo_path, cancellable, error);
  if (repo == NULL)
    return FALSE;
  const char *last = NULL;
  g_autofree char *last_commit = NULL;
  for (guint i = 0; i < args->images->len; i++)
    {
      BuildImage *image = args->images->pdata[i];
      g_autoptr(RepoRev) rev = repo_resolve (repo, image->image, error);
      if (rev == NULL)
        return FALSE;
      printf ("image %s: commit %s\n", image->image, rev->commit);
      last = image->image;
      g_free (last_commit);
      last_commit = g_strdup (rev->commit);
    }
  printf ("look inside:\n"
          "  ostree --repo=%s ls -R %s\n"
          "  apt2ostree --repo %s export %s --dir rootfs     (or --tar rootfs.tar)\n",
          repo_path, last_commit, repo_path, last);
  return TRUE;
}

/* The one-shot build's lock options (mmdebstrap's command line). */
typedef struct {
  char **include;     /* --include PKG[,PKG...] */
  char *suite, *variant, *arch, *merged_usr;
  char **components;
} OneShot;

static void
one_shot_clear (OneShot *o)
{
  g_strfreev (o->include);
  g_free (o->suite);
  g_free (o->variant);
  g_free (o->arch);
  g_free (o->merged_usr);
  g_strfreev (o->components);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (OneShot, one_shot_clear)

static gboolean
one_shot_wanted (const OneShot *o)
{
  return o->include != NULL || o->suite != NULL || o->variant != NULL || o->arch != NULL
         || o->merged_usr != NULL || o->components != NULL;
}

/* Lock the one-shot build's request into BUILDDIR/NAME.lock.json (from its
 * package list, BUILDDIR/NAME.txt), as "apt2ostree lock" does; the
 * lockfile's argument for the build (LOCKFILE=NAME) in *OUT_ARG. */
static gboolean
one_shot_lock (OneShot *o, BuildArgs *args, CmdInvocation *inv, char **out_arg,
               GCancellable *cancellable, GError **error)
{
  const char *name = args->image != NULL ? args->image : "image";
  const char *builddir = args->builddir != NULL ? args->builddir : "build";
  /* NAME makes file names under BUILDDIR: a valid ref has no "..". */
  if (!repo_check_ref_name (name, error))
    return FALSE;
  g_autofree char *list = g_strconcat (builddir, "/", name, ".txt", NULL);
  g_autofree char *lockfile = g_strconcat (builddir, "/", name, ".lock.json", NULL);
  g_autofree char *cache = g_build_filename (builddir, "cache", "lists", NULL);
  g_autofree char *dir = g_path_get_dirname (list);
  if (g_mkdir_with_parents (dir, 0755) < 0)
    return util_fail (error, "%s: %s", dir, g_strerror (errno));
  g_autoptr(GString) text = g_string_new ("# apt2ostree build --include: the image's packages\n");
  for (char **i = o->include; i != NULL && *i != NULL; i++)
    {
      g_auto(GStrv) names = g_strsplit (*i, ",", -1);
      for (char **n = names; *n != NULL; n++)
        if (*g_strstrip (*n) != '\0')
          g_string_append_printf (text, "%s\n", *n);
    }
  g_autoptr(GError) local_error = NULL;
  if (!g_file_set_contents (list, text->str, text->len, &local_error))
    return util_fail (error, "%s: %s", list, local_error->message);

  g_auto(LockArgs) lock_args = { .output = g_strdup (lockfile), .cache = g_strdup (cache),
                                 .sources_path = g_strdup (args->sources),
                                 .suite = g_strdup (o->suite), .variant = g_strdup (o->variant),
                                 .arch = g_strdup (o->arch),
                                 .merged_usr = g_strdup (o->merged_usr),
                                 .components = g_strdupv (o->components),
                                 .mirrors = g_strdupv (args->mirrors) };
  /* Its errors are the lock's: "see apt2ostree lock --help". */
  CmdInvocation lock_inv = { "lock", inv->repo_path };
  if (!lockjob_run (&lock_inv, &lock_args, list, FALSE, cancellable, error))
    return FALSE;
  /* The lockfile names its sources file itself now. */
  g_clear_pointer (&args->sources, g_free);
  *out_arg = g_strconcat (lockfile, "=", name, NULL);
  return TRUE;
}

/* The network settings of every image's sources checked (a URI they
 * share is said once). */
static gboolean
check_network (BuildArgs *args, CmdInvocation *inv, gboolean verbose, GError **error)
{
  g_autoptr(GPtrArray) lists = g_ptr_array_new ();
  for (guint i = 0; i < args->images->len; i++)
    g_ptr_array_add (lists, ((BuildImage *) args->images->pdata[i])->sources);
  return netcheck_sources (inv->name, (SourcesList *const *) lists->pdata, lists->len, verbose,
                           error);
}

gboolean
cmd_build (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
           GError **error)
{
  g_auto(BuildArgs) args = BUILD_ARGS_INIT;
  int jobs = 0;
  gboolean verbose = FALSE, keep = FALSE;
  g_autofree char *ninja = NULL;
  g_auto(OneShot) one = { NULL };
  const GOptionEntry entries[] = {
    BUILD_OPTION_ENTRIES (args),
    { "include", 0, 0, G_OPTION_ARG_STRING_ARRAY, &one.include,
      "No LOCKFILE: lock these packages (comma-separated) into BUILDDIR/REF.lock.json, then "
      "build it (as mmdebstrap --include)", "PKG[,PKG...]" },
    { "suite", 0, 0, G_OPTION_ARG_STRING, &one.suite,
      "No LOCKFILE: lock from this release (lock --suite)", "CODENAME" },
    { "variant", 0, 0, G_OPTION_ARG_STRING, &one.variant,
      "No LOCKFILE: the package set (lock --variant)", "VARIANT" },
    { "arch", 0, 0, G_OPTION_ARG_STRING, &one.arch,
      "No LOCKFILE: the image's architecture (lock --arch)", "ARCH" },
    { "components", 0, 0, G_OPTION_ARG_STRING_ARRAY, &one.components,
      "No LOCKFILE: every source's components (lock --components)", "COMP[,COMP...]" },
    { "merged-usr", 0, 0, G_OPTION_ARG_STRING, &one.merged_usr,
      "No LOCKFILE: lock --merged-usr", "auto|yes|no" },
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "Steps at once (default: ninja's)", "N" },
    { "ninja", 0, 0, G_OPTION_ARG_FILENAME, &ninja, "The ninja to run (default: ninja)", "PATH" },
    { "keep-on-failure", 0, 0, G_OPTION_ARG_NONE, &keep,
      "When stage 2 fails, keep its scratch directory (the tree, upper/, output.log)", NULL },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose,
      "Show dpkg's output as stage 2 runs; say which proxy each source goes through, and why, "
      "and the CA file apt.conf names; with --cache-url, each tree a cache refused for its "
      "signature", NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "LOCKFILE[=REF]... | --include PKG[,PKG...] [--suite CODENAME] ...",
                  "Build the image of each LOCKFILE: write BUILDDIR/NAME.ninja (for several,\n"
                  "BUILDDIR/images.ninja) and run ninja on it.  REF names the image (default:\n"
                  "the lockfile's name without .lock.json).  The repository is BUILDDIR/ostree\n"
                  "unless --repo is given; images share the trees of the packages they share.\n"
                  "Without LOCKFILE, --include (--suite, --variant, --arch, --components)\n"
                  "locks BUILDDIR/REF.lock.json first (REF default: image), kept for later.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc >= 2 && one_shot_wanted (&one))
    return cmd_usage_error (inv, error, "--include, --suite, --variant, --arch, --components and "
                            "--merged-usr lock a new image: give them without a LOCKFILE");
  if (argc < 2 && !one_shot_wanted (&one))
    return cmd_usage_error (inv, error, "expected one LOCKFILE or more (or --include PKG,... to "
                            "lock one first)");
  if (jobs < 0)
    return cmd_usage_error (inv, error, "--jobs %d: expected a number of steps (1 or more; 0: ninja's "
                            "default)", jobs);

  args.repo = inv->repo_path;
  RunLimits limits;   /* checked now; stage 2 reads them again */
  g_autofree char *one_shot_arg = NULL;
  char *one_shot_argv[3] = { argv[0], NULL, NULL };
  if (!runlimits_init (&limits, args.timeout, args.memory_limit, args.max_processes, error))
    return FALSE;
  if (argc < 2)
    {
      if (!one_shot_lock (&one, &args, inv, &one_shot_arg, cancellable, error))
        return FALSE;
      g_clear_pointer (&args.image, g_free);
      one_shot_argv[1] = one_shot_arg;
      argc = 2;
      argv = one_shot_argv;
    }
  if (!build_args_complete (&args, inv, argc - 1, argv + 1, error)
      || !build_load_images (&args, error)
      || !check_network (&args, inv, verbose, error))
    return FALSE;
  localcheck_say_changed (&args);
  /* Stage 2 runs the images' programs: say so before the downloads when
   * this machine cannot (configure checks again, for "ninja" users). */
  for (guint i = 0; i < args.images->len; i++)
    if (!foreign_check_arch (((BuildImage *) args.images->pdata[i])->lock->request.architecture,
                             error))
      return FALSE;

  g_autofree char *ninja_file = build_ninja_path (&args);
  if (!build_write_ninja (&args, ninja_file, FALSE, error))
    return FALSE;

  /* Before anything is written: what a build the machine stopped during
   * may have left damaged (graph/buildsync.h). */
  g_autoptr(OstreeRepo) repo = build_open_repo (&args, cancellable, error);
  if (repo == NULL || !buildsync_recover (repo, cancellable, error))
    return FALSE;
  g_autoptr(GPtrArray) todo = g_ptr_array_new ();
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  if (args.cache.url == NULL)
    g_ptr_array_extend (todo, args.images, NULL, NULL);
  else if (!build_images_from_cache (&args, repo, todo, keys, cancellable, error))
    return FALSE;

  /* Told to stage 2 through its environment, not the Ninja file: a
   * command that does not change does not configure built images again. */
  if (verbose)
    g_setenv ("APT2OSTREE_VERBOSE", "1", TRUE);
  if (keep)
    g_setenv ("APT2OSTREE_KEEP_ON_FAILURE", "1", TRUE);
  /* What the cache lacks now: what it holds after, the build fetched. */
  g_autofree char *debs_dir = g_build_filename (args.builddir, "cache", "debs", NULL);
  g_autoptr(GPtrArray) missing = buildstatus_missing_debs (debs_dir, todo);
  g_auto(BuildTotal) total = { 0, };
  /* The steps leave their writes unsynced; one sync at the end. */
  g_autofree char *marker = NULL;
  if (todo->len > 0 && !buildsync_begin (repo, &marker, error))
    return FALSE;
  gboolean ran = todo->len == 0 || ninjarun_run (ninja != NULL ? ninja : "ninja", ninja_file,
                                                 jobs, todo, args.sbom, &total, error);
  g_autoptr(GError) sync_error = NULL;
  if (marker != NULL && !buildsync_end (repo, marker, ran ? error : &sync_error))
    {
      if (ran)
        return FALSE;
      g_printerr ("apt2ostree build: warning: %s\n", sync_error->message);
    }
  /* A cache refused for its signature: one line for all its trees. */
  if (args.cache.url != NULL)
    {
      if (verbose)
        buildcache_list_refused (repo, &args.cache);
      buildcache_say_refused (repo, &args.cache, cancellable);
    }
  if (!ran)
    return FALSE;
  buildstatus_say_total (&total, debs_dir, missing);
  /* Each image is recorded under its key, with or without a cache, so
   * that publishing the repository offers it whole to a machine that has
   * one; an incremental image never is (the key means from scratch). */
  for (guint i = 0; !args.incremental && i < args.images->len; i++)
    {
      BuildImage *image = args.images->pdata[i];
      g_autofree char *key = i < keys->len ? g_strdup (keys->pdata[i])
                                           : build_image_cache_ref (&args, image, repo);
      if (key != NULL
          && !buildcache_record_result (repo, image->image, key, cancellable, error))
        return FALSE;
    }
  return print_images (&args, cancellable, error);
}
