/* buildstatus.c — the build's line on a terminal; see buildstatus.h. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/progress.h"
#include "base/util.h"
#include "apt/lockfile.h"
#include "graph/build.h"
#include "graph/buildstatus.h"

/* How often the line is drawn again, at most. */
#define DRAW_INTERVAL_MS 100

/* One step's connection: what it said first (its name) and last. */
typedef struct {
  int fd;
  GSource *source;
  char *name;
  char *text;
  gint64 start_us;
  BuildStatus *status;
} StepConn;

struct BuildStatus {
  int out_fd;
  gboolean terminal;        /* FALSE: a log, plain lines only */
  GMainContext *context;
  char *dir;                /* private (0700), holds the socket */
  char *socket_path;
  int listen_fd;
  GSource *listen_source;
  GSource *draw_source;
  GPtrArray *steps;         /* StepConn *, in the order they connected */
  GString *ninja_line;      /* ninja's line not ended yet */
  guint finished, total;    /* ninja's count */
  char *last_description;   /* of the step ninja said last */
  gboolean drawn;           /* the line is on the terminal */
  gboolean dirty;
  gint64 start_us;
  char *longest;            /* the name of the longest step so far */
  gint64 longest_us;
};

static void
step_conn_free (StepConn *step)
{
  if (step->source != NULL)
    {
      g_source_destroy (step->source);
      g_source_unref (step->source);
    }
  util_fd_close (&step->fd);
  g_free (step->name);
  g_free (step->text);
  g_free (step);
}

/* TEXT fit for the terminal: valid UTF-8, no control character, at most
 * WIDTH characters. */
static char *
printable (const char *text, gsize len, int width)
{
  g_autofree char *valid = g_utf8_make_valid (text, len);
  for (char *p = valid; *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      *p = ' ';
  if (width > 0 && g_utf8_strlen (valid, -1) > width)
    return g_utf8_substring (valid, 0, width);
  return g_steal_pointer (&valid);
}

static int
terminal_width (BuildStatus *status)
{
  struct winsize ws;
  if (ioctl (status->out_fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return ws.ws_col;
  return 80;
}

static void
write_all (int fd, const char *text)
{
  gsize len = strlen (text);
  for (gsize done = 0; done < len;)
    {
      ssize_t n = write (fd, text + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      done += n;
    }
}

static void
erase (BuildStatus *status)
{
  if (status->drawn)
    write_all (status->out_fd, "\r\033[K");
  status->drawn = FALSE;
}

/* Of the steps that said something, the one that has run longest. */
static StepConn *
oldest_step (BuildStatus *status)
{
  for (guint i = 0; i < status->steps->len; i++)
    {
      StepConn *step = status->steps->pdata[i];
      if (step->text != NULL)
        return step;
    }
  return NULL;
}

static void
draw (BuildStatus *status)
{
  StepConn *step = oldest_step (status);
  g_autoptr(GString) line = g_string_new (NULL);
  g_string_printf (line, "[%u/%u] ", status->finished, status->total);
  if (step != NULL)
    {
      g_string_append (line, step->text);
      if (status->steps->len > 1)
        g_string_append_printf (line, " (+%u more)", status->steps->len - 1);
    }
  else if (status->last_description != NULL)
    g_string_append (line, status->last_description);
  /* One column short: a full line would wrap on some terminals. */
  g_autofree char *shown = printable (line->str, line->len, terminal_width (status) - 1);
  g_autofree char *out = g_strconcat ("\r\033[K", shown, NULL);
  write_all (status->out_fd, out);
  status->drawn = TRUE;
  status->dirty = FALSE;
}

static gboolean
on_draw (gpointer data)
{
  BuildStatus *status = data;
  if (status->dirty)
    draw (status);
  return G_SOURCE_CONTINUE;
}

static void
step_ended (BuildStatus *status, StepConn *step)
{
  gint64 took = g_get_monotonic_time () - step->start_us;
  if (step->name != NULL && took > status->longest_us)
    {
      g_free (status->longest);
      status->longest = g_strdup (step->name);
      status->longest_us = took;
    }
  status->dirty = TRUE;
  g_ptr_array_remove (status->steps, step);  /* frees STEP */
}

static gboolean
on_step_message (int fd, GIOCondition condition, gpointer data)
{
  StepConn *step = data;
  BuildStatus *status = step->status;
  char buf[PROGRESS_MAX_MESSAGE];
  ssize_t n = recv (fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return G_SOURCE_CONTINUE;
  if (n <= 0)
    {
      g_clear_pointer (&step->source, g_source_unref);  /* ends with this callback */
      step_ended (status, step);
      return G_SOURCE_REMOVE;
    }
  g_free (step->text);
  step->text = printable (buf, n, 0);
  if (step->name == NULL)
    step->name = g_strdup (step->text);
  status->dirty = TRUE;
  return G_SOURCE_CONTINUE;
}

static gboolean
on_connection (int fd, GIOCondition condition, gpointer data)
{
  BuildStatus *status = data;
  int conn;
  while ((conn = accept4 (fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
    {
      StepConn *step = g_new0 (StepConn, 1);
      step->fd = conn;
      step->status = status;
      step->start_us = g_get_monotonic_time ();
      step->source = g_unix_fd_source_new (conn, G_IO_IN | G_IO_HUP | G_IO_ERR);
      g_source_set_callback (step->source, G_SOURCE_FUNC (on_step_message), step, NULL);
      g_source_attach (step->source, status->context);
      g_ptr_array_add (status->steps, step);
    }
  return G_SOURCE_CONTINUE;
}

static gboolean
listen_socket (BuildStatus *status, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  status->dir = g_dir_make_tmp ("apt2ostree-progress-XXXXXX", &local_error);
  if (status->dir == NULL)
    return util_fail (error, "%s", local_error->message);
  status->socket_path = g_build_filename (status->dir, "socket", NULL);
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (status->socket_path) >= sizeof addr.sun_path)
    return util_fail (error, "%s: too long a path for a socket", status->socket_path);
  strcpy (addr.sun_path, status->socket_path);
  status->listen_fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (status->listen_fd < 0 || bind (status->listen_fd, (struct sockaddr *) &addr, sizeof addr) < 0
      || listen (status->listen_fd, 64) < 0)
    return util_fail (error, "%s: %s", status->socket_path, g_strerror (errno));
  status->listen_source = g_unix_fd_source_new (status->listen_fd, G_IO_IN);
  g_source_set_callback (status->listen_source, G_SOURCE_FUNC (on_connection), status, NULL);
  g_source_attach (status->listen_source, status->context);
  return TRUE;
}

BuildStatus *
buildstatus_new (int out_fd, gboolean terminal, GMainContext *context, GError **error)
{
  g_autoptr(BuildStatus) status = g_new0 (BuildStatus, 1);
  status->out_fd = out_fd;
  status->terminal = terminal;
  status->listen_fd = -1;
  status->context = g_main_context_ref (context);
  status->steps = g_ptr_array_new_with_free_func ((GDestroyNotify) step_conn_free);
  status->ninja_line = g_string_new (NULL);
  status->start_us = g_get_monotonic_time ();
  if (!terminal)
    return g_steal_pointer (&status);
  if (!listen_socket (status, error))
    return NULL;
  status->draw_source = g_timeout_source_new (DRAW_INTERVAL_MS);
  g_source_set_callback (status->draw_source, on_draw, status, NULL);
  g_source_attach (status->draw_source, context);
  return g_steal_pointer (&status);
}

static void
source_drop (GSource **source)
{
  if (*source == NULL)
    return;
  g_source_destroy (*source);
  g_clear_pointer (source, g_source_unref);
}

void
buildstatus_free (BuildStatus *status)
{
  source_drop (&status->listen_source);
  source_drop (&status->draw_source);
  g_clear_pointer (&status->steps, g_ptr_array_unref);
  util_fd_close (&status->listen_fd);
  if (status->socket_path != NULL)
    (void) g_unlink (status->socket_path);
  if (status->dir != NULL)
    (void) g_rmdir (status->dir);
  g_free (status->socket_path);
  g_free (status->dir);
  g_string_free (status->ninja_line, TRUE);
  g_free (status->last_description);
  g_free (status->longest);
  g_main_context_unref (status->context);
  g_free (status);
}

const char *
buildstatus_socket_path (BuildStatus *status)
{
  return status->socket_path;
}

/* "[a2o N/M] DESCRIPTION": ninja's count and the step it ended. */
static gboolean
ninja_status_line (BuildStatus *status, const char *line)
{
  guint finished, total;
  int end = 0;
  if (sscanf (line, "[a2o %u/%u] %n", &finished, &total, &end) != 2 || end == 0)
    return FALSE;
  status->finished = finished;
  status->total = total;
  g_free (status->last_description);
  status->last_description = g_strdup (line + end);
  status->dirty = TRUE;
  if (!status->terminal)
    {
      /* As ninja would have said it, in a log. */
      g_autofree char *plain = g_strdup_printf ("[%u/%u] %s\n", finished, total, line + end);
      write_all (status->out_fd, plain);
    }
  return TRUE;
}

static void
ninja_line (BuildStatus *status, const char *line)
{
  if (ninja_status_line (status, line))
    return;
  /* Anything else ninja says stays, above the line. */
  erase (status);
  g_autofree char *out = g_strconcat (line, "\n", NULL);
  write_all (status->out_fd, out);
  status->dirty = TRUE;
}

void
buildstatus_ninja_output (BuildStatus *status, const char *data, gsize len)
{
  g_string_append_len (status->ninja_line, data, len);
  char *nl;
  while ((nl = memchr (status->ninja_line->str, '\n', status->ninja_line->len)) != NULL)
    {
      *nl = '\0';
      ninja_line (status, status->ninja_line->str);
      g_string_erase (status->ninja_line, 0, nl - status->ninja_line->str + 1);
    }
}

void
build_total_clear (BuildTotal *total)
{
  g_clear_pointer (&total->longest, g_free);
}

void
buildstatus_finish (BuildStatus *status, BuildTotal *out_total)
{
  if (status->ninja_line->len > 0)
    ninja_line (status, status->ninja_line->str);
  g_string_truncate (status->ninja_line, 0);
  erase (status);
  if (out_total == NULL)
    return;
  out_total->steps = status->finished;
  out_total->seconds = (g_get_monotonic_time () - status->start_us) / 1e6;
  g_free (out_total->longest);
  out_total->longest = g_strdup (status->longest);
  out_total->longest_seconds = status->longest_us / 1e6;
}

/* The cache's file of PACKAGE's .deb (named by its sha256), or NULL for
 * a local .deb or one without a sha256. */
static char *
cached_deb (const char *cache_dir, LockPackage *package)
{
  if (package->path != NULL || package->sha256 == NULL)
    return NULL;
  g_autofree char *name = g_ascii_strdown (package->sha256, -1);
  return g_build_filename (cache_dir, name, NULL);
}

GPtrArray *
buildstatus_missing_debs (const char *cache_dir, GPtrArray *images)
{
  g_autoptr(GPtrArray) missing = g_ptr_array_new ();
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < images->len; i++)
    {
      GPtrArray *packages = ((BuildImage *) images->pdata[i])->lock->packages;
      for (guint j = 0; j < packages->len; j++)
        {
          LockPackage *package = packages->pdata[j];
          g_autofree char *path = cached_deb (cache_dir, package);
          if (path != NULL && !g_file_test (path, G_FILE_TEST_EXISTS)
              && g_hash_table_add (seen, package->sha256))
            g_ptr_array_add (missing, package);
        }
    }
  return g_steal_pointer (&missing);
}

void
buildstatus_say_total (const BuildTotal *total, const char *cache_dir, GPtrArray *missing)
{
  if (total->steps == 0)
    return;
  guint debs = 0;
  guint64 bytes = 0;
  for (guint i = 0; missing != NULL && i < missing->len; i++)
    {
      LockPackage *package = missing->pdata[i];
      g_autofree char *path = cached_deb (cache_dir, package);
      if (path != NULL && g_file_test (path, G_FILE_TEST_EXISTS))
        {
          debs++;
          bytes += MAX (package->size, 0);
        }
    }
  g_autoptr(GString) line = g_string_new (NULL);
  g_string_printf (line, "apt2ostree build: %u step%s in %.1f s", total->steps,
                   total->steps == 1 ? "" : "s", total->seconds);
  if (debs > 0)
    {
      g_autofree char *size = g_format_size (bytes);
      g_string_append_printf (line, ", %u .deb%s fetched (%s)", debs, debs == 1 ? "" : "s", size);
    }
  if (total->longest != NULL)
    g_string_append_printf (line, "; the longest: %s (%.1f s)", total->longest,
                            total->longest_seconds);
  g_autofree char *shown = printable (line->str, line->len, 0);
  printf ("%s\n", shown);
  fflush (stdout);
}
