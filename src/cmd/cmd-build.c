/* apt2ostree build — lockfiles in, configured images out, through ninja. */
#define _GNU_SOURCE
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib-unix.h>

#include "graph/build.h"
#include "cmd/cmd.h"
#include "sandbox/foreign.h"
#include "sandbox/runlimits.h"
#include "apt/lockfile.h"
#include "graph/ninja.h"
#include "store/repo.h"
#include "base/util.h"

/* Ninja runs in a process group of its own, with SIGTERM as its
 * parent-death signal: however this process ends (SIGKILL of it or of its
 * process group included), ninja is told to stop, and it stops every step
 * it runs (each step is a process group of its own, which ninja signals).
 * Each step's sandbox ends with the step (bubblewrap's --die-with-parent).
 * SIGINT, SIGTERM and SIGHUP that reach this process are passed on to
 * ninja, and this process waits until ninja has stopped its steps. */
typedef struct {
  GMainLoop *loop;
  GPid pid;
  int wait_status;
  int signal;              /* the first interruption received, 0 when none */
} NinjaRun;

typedef struct {
  NinjaRun *run;
  int signum;
} NinjaSignal;

static void
ninja_child_setup (gpointer data)
{
  pid_t parent = GPOINTER_TO_INT (data);
  (void) setpgid (0, 0);
  (void) prctl (PR_SET_PDEATHSIG, SIGTERM);
  if (getppid () != parent)  /* the parent died before the line above */
    _exit (128 + SIGTERM);
}

static gboolean
ninja_on_signal (gpointer data)
{
  NinjaSignal *sig = data;
  if (sig->run->signal == 0)
    sig->run->signal = sig->signum;
  (void) kill (sig->run->pid, sig->signum);
  return G_SOURCE_CONTINUE;
}

static void
ninja_on_exit (GPid pid, int wait_status, gpointer data)
{
  NinjaRun *run = data;
  run->wait_status = wait_status;
  g_spawn_close_pid (pid);
  g_main_loop_quit (run->loop);
}

static void
source_remove (gpointer source)
{
  g_source_destroy (source);
  g_source_unref (source);
}

static gboolean
run_ninja (const char *ninja, const char *file, int jobs, GPtrArray *images, const char *sbom,
           GError **error)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (argv, g_strdup (ninja));
  g_ptr_array_add (argv, g_strdup ("-f"));
  g_ptr_array_add (argv, g_strdup (file));
  if (jobs > 0)
    g_ptr_array_add (argv, g_strdup_printf ("-j%d", jobs));
  for (guint i = 0; i < images->len; i++)
    g_ptr_array_add (argv, g_strdup (((BuildImage *) images->pdata[i])->image));
  for (guint i = 0; sbom != NULL && i < images->len; i++)
    g_ptr_array_add (argv, ninja_sbom_path (sbom, ((BuildImage *) images->pdata[i])->image));
  g_ptr_array_add (argv, NULL);

  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GMainLoop) loop = g_main_loop_new (context, FALSE);
  NinjaRun run = { .loop = loop };
  static const int signals[] = { SIGINT, SIGTERM, SIGHUP };
  NinjaSignal handlers[G_N_ELEMENTS (signals)];
  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func (source_remove);
  /* Before the spawn, so that no interruption is missed. */
  for (guint i = 0; i < G_N_ELEMENTS (signals); i++)
    {
      handlers[i] = (NinjaSignal) { &run, signals[i] };
      GSource *source = g_unix_signal_source_new (signals[i]);
      g_source_set_callback (source, ninja_on_signal, &handlers[i], NULL);
      g_source_attach (source, context);
      g_ptr_array_add (sources, source);
    }

  g_autoptr(GError) local_error = NULL;
  gboolean spawned = g_spawn_async (NULL, (char **) argv->pdata, NULL,
                                    G_SPAWN_SEARCH_PATH | G_SPAWN_CHILD_INHERITS_STDIN
                                        | G_SPAWN_DO_NOT_REAP_CHILD,
                                    ninja_child_setup, GINT_TO_POINTER (getpid ()), &run.pid,
                                    &local_error);
  if (spawned)
    {
      GSource *child = g_child_watch_source_new (run.pid);
      g_source_set_callback (child, G_SOURCE_FUNC (ninja_on_exit), &run, NULL);
      g_source_attach (child, context);
      g_ptr_array_add (sources, child);
      g_main_loop_run (loop);
    }
  g_clear_pointer (&sources, g_ptr_array_unref);  /* the signals' dispositions back */

  if (!spawned)
    return util_fail (error, "cannot run \"%s\": %s; install ninja-build or give --ninja PATH",
                      ninja, local_error->message);
  if (run.signal != 0)
    return util_fail (error, "interrupted by signal %d (%s): ninja and its steps were stopped; run "
                      "the same command again to continue where it stopped", run.signal,
                      g_strsignal (run.signal));
  int status = run.wait_status;
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return util_fail (error, "ninja stopped (exit status %d): the step that failed is named above; "
                      "fix it and run the same command again to continue where it stopped",
                      WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status));
  return TRUE;
}

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

/* The build's repository, made when missing (as the Ninja file's first
 * step would). */
static OstreeRepo *
open_build_repo (BuildArgs *args, GCancellable *cancellable, GError **error)
{
  g_autofree char *default_repo = g_build_filename (args->builddir, "ostree", NULL);
  return repo_ensure (args->repo != NULL ? args->repo : default_repo, NULL, cancellable, error);
}

/* --cache-url: each image the cache has whole, by its key (see
 * build_image_cache_ref), is taken from it and ninja does not build it;
 * one this repository took before (its key's ref holds it) is kept.  The
 * others go into TODO.  KEYS gets each image's key, or NULL. */
static gboolean
images_from_cache (BuildArgs *args, OstreeRepo *repo, GPtrArray *todo, GPtrArray *keys,
                   GCancellable *cancellable, GError **error)
{
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
      g_autofree char *what = g_strconcat ("image ", image->image, NULL);
      g_autofree char *commit = buildcache_fetch_result (repo, &args->cache, key, image->image,
                                                         what, cancellable);
      if (commit == NULL)
        g_ptr_array_add (todo, image);
    }
  return TRUE;
}

/* cmd_check_proxies over the sources of every image (a URI they share
 * is said once). */
static gboolean
check_proxies (BuildArgs *args, CmdInvocation *inv, gboolean verbose, GError **error)
{
  g_autoptr(GPtrArray) lists = g_ptr_array_new ();
  for (guint i = 0; i < args->images->len; i++)
    g_ptr_array_add (lists, ((BuildImage *) args->images->pdata[i])->sources);
  return cmd_check_proxies (inv, (SourcesList *const *) lists->pdata, lists->len, verbose, error);
}

gboolean
cmd_build (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
           GError **error)
{
  g_auto(BuildArgs) args = BUILD_ARGS_INIT;
  int jobs = 0;
  gboolean verbose = FALSE;
  g_autofree char *ninja = NULL;
  const GOptionEntry entries[] = {
    BUILD_OPTION_ENTRIES (args),
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "Steps at once (default: ninja's)", "N" },
    { "ninja", 0, 0, G_OPTION_ARG_FILENAME, &ninja, "The ninja to run (default: ninja)", "PATH" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose,
      "Say which proxy each source goes through, and why", NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "LOCKFILE[=REF]...",
                  "Build the image of each LOCKFILE: write BUILDDIR/NAME.ninja (for several,\n"
                  "BUILDDIR/images.ninja) and run ninja on it.  REF names the image (default:\n"
                  "the lockfile's name without .lock.json).  The repository is BUILDDIR/ostree\n"
                  "unless --repo is given; images share the trees of the packages they share.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc < 2)
    return cmd_usage_error (inv, error, "expected one LOCKFILE or more");
  if (jobs < 0)
    return cmd_usage_error (inv, error, "--jobs %d: expected a number of steps (1 or more; 0: ninja's "
                            "default)", jobs);

  args.repo = inv->repo_path;
  RunLimits limits;   /* checked now; stage 2 reads them again */
  if (!runlimits_init (&limits, args.timeout, args.memory_limit, args.max_processes, error)
      || !build_args_complete (&args, inv, argc - 1, argv + 1, error)
      || !build_load_images (&args, error)
      || !check_proxies (&args, inv, verbose, error))
    return FALSE;
  /* Stage 2 runs the images' programs: say so before the downloads when
   * this machine cannot (configure checks again, for "ninja" users). */
  for (guint i = 0; i < args.images->len; i++)
    if (!foreign_check_arch (((BuildImage *) args.images->pdata[i])->lock->request.architecture,
                             error))
      return FALSE;

  g_autofree char *ninja_file = build_ninja_path (&args);
  if (!build_write_ninja (&args, ninja_file, FALSE, error))
    return FALSE;

  g_autoptr(OstreeRepo) repo = NULL;
  g_autoptr(GPtrArray) todo = g_ptr_array_new ();
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  if (args.cache.url == NULL)
    g_ptr_array_extend (todo, args.images, NULL, NULL);
  else if ((repo = open_build_repo (&args, cancellable, error)) == NULL
           || !images_from_cache (&args, repo, todo, keys, cancellable, error))
    return FALSE;

  if (todo->len > 0 && !run_ninja (ninja != NULL ? ninja : "ninja", ninja_file, jobs, todo,
                                   args.sbom, error))
    return FALSE;
  /* An incremental image is never recorded as its key's (from-scratch) answer. */
  for (guint i = 0; !args.incremental && i < keys->len; i++)
    if (keys->pdata[i] != NULL
        && !buildcache_record_result (repo, ((BuildImage *) args.images->pdata[i])->image,
                                      keys->pdata[i], cancellable, error))
      return FALSE;
  return print_images (&args, cancellable, error);
}
