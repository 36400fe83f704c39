/* ninjarun.c — ninja run over the images' Ninja file; see ninjarun.h. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/progress.h"
#include "base/util.h"
#include "graph/build.h"
#include "graph/buildstatus.h"
#include "graph/ninja.h"
#include "graph/ninjarun.h"

/* A run of ninja, while this process waits for it. */
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

/* What ninja printed, to the status line (buildstatus.h). */
static gboolean
ninja_on_output (int fd, GIOCondition condition, gpointer data)
{
  BuildStatus *status = data;
  char buf[4096];
  ssize_t n = read (fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return G_SOURCE_CONTINUE;
  if (n <= 0)
    return G_SOURCE_REMOVE;
  buildstatus_ninja_output (status, buf, n);
  return G_SOURCE_CONTINUE;
}

/* What is left of ninja's output once it has exited. */
static void
ninja_drain_output (int fd, BuildStatus *status)
{
  (void) fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK);
  char buf[4096];
  ssize_t n;
  while ((n = read (fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0)
      buildstatus_ninja_output (status, buf, n);
}

/* What ninja's output goes through: a line drawn in place when standard
 * output is a terminal ninja would draw its own line on, plain lines
 * otherwise; NULL when it cannot be set up (ninja's output is then left
 * alone). */
static BuildStatus *
status_for_output (GMainContext *context)
{
  gboolean terminal = isatty (STDOUT_FILENO) && g_strcmp0 (g_getenv ("TERM"), "dumb") != 0;
  return buildstatus_new (STDOUT_FILENO, terminal, context, NULL);
}

/* This process's environment for ninja: with DISPLAY, ninja's status in
 * the form it reads and, on a terminal, the socket the steps tell. */
static char **
ninja_environment (BuildStatus *display)
{
  char **envp = g_environ_unsetenv (g_get_environ (), PROGRESS_ENV);
  if (display == NULL)
    return envp;
  envp = g_environ_setenv (envp, "NINJA_STATUS", BUILDSTATUS_NINJA_STATUS, TRUE);
  if (buildstatus_socket_path (display) != NULL)
    envp = g_environ_setenv (envp, PROGRESS_ENV, buildstatus_socket_path (display), TRUE);
  return envp;
}

static void
source_remove (gpointer source)
{
  g_source_destroy (source);
  g_source_unref (source);
}

gboolean
ninjarun_run (const char *ninja, const char *file, int jobs, GPtrArray *images, const char *sbom,
              BuildTotal *out_total, GError **error)
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

  /* Ninja's output comes here; on a terminal, the steps say what they do
   * (base/progress.h). */
  g_autoptr(BuildStatus) display = status_for_output (context);
  g_auto(GStrv) envp = ninja_environment (display);
  util_autofd int output_fd = -1;
  g_autoptr(GError) local_error = NULL;
  gboolean spawned = g_spawn_async_with_pipes (NULL, (char **) argv->pdata, envp,
                                               G_SPAWN_SEARCH_PATH | G_SPAWN_CHILD_INHERITS_STDIN
                                                   | G_SPAWN_DO_NOT_REAP_CHILD,
                                               ninja_child_setup, GINT_TO_POINTER (getpid ()),
                                               &run.pid, NULL, display != NULL ? &output_fd : NULL,
                                               NULL, &local_error);
  if (spawned)
    {
      GSource *child = g_child_watch_source_new (run.pid);
      g_source_set_callback (child, G_SOURCE_FUNC (ninja_on_exit), &run, NULL);
      g_source_attach (child, context);
      g_ptr_array_add (sources, child);
      if (display != NULL)
        {
          GSource *output = g_unix_fd_source_new (output_fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
          g_source_set_callback (output, G_SOURCE_FUNC (ninja_on_output), display, NULL);
          g_source_attach (output, context);
          g_ptr_array_add (sources, output);
        }
      g_main_loop_run (loop);
    }
  g_clear_pointer (&sources, g_ptr_array_unref);  /* the signals' dispositions back */
  if (display != NULL)
    {
      if (output_fd >= 0)
        ninja_drain_output (output_fd, display);
      buildstatus_finish (display, out_total);
    }

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
