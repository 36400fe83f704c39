/* fetch.c — downloads with libcurl, retried, verified, written atomically. */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apt/cache.h"
#include "apt/fetch.h"
#include "apt/proxy.h"
#include "base/sha256.h"
#include "base/util.h"

/* Four attempts, 0.25 s, 0.5 s and 1 s apart: enough to ride out a mirror
 * restarting or a proxy hiccup, short enough that a real outage is reported
 * quickly. */
#define FETCH_ATTEMPTS 4
#define FETCH_FIRST_BACKOFF_US (250 * 1000)

/* Where one transfer's bytes go: a file descriptor or memory, hashed on the
 * way. */
typedef struct {
  int fd;                 /* file sink, or -1 */
  GByteArray *buf;        /* memory sink, or NULL */
  Sha256 *sha256;
  guint64 received;
  gint64 expected_size;   /* -1: unknown */
  gboolean too_big;
  int write_errno;
  GCancellable *cancellable;
  /* progress line */
  gboolean progress;
  const char *label;
  gint64 start_us;
  gint64 last_report_us;
} FetchSink;

typedef enum {
  ATTEMPT_OK,
  ATTEMPT_TRANSIENT,   /* worth another try */
  ATTEMPT_FAILED,      /* error set, do not retry */
} AttemptResult;



static long
fetch_stall_seconds (void)
{
  const char *value = g_getenv ("APT2OSTREE_FETCH_TIMEOUT");
  guint64 seconds;
  if (value != NULL && g_ascii_string_to_unsigned (value, 10, 1, 3600, &seconds, NULL))
    return (long) seconds;
  return 60;
}

static void
fetch_global_init (void)
{
  static gsize initialized = 0;
  if (g_once_init_enter (&initialized))
    {
      curl_global_init (CURL_GLOBAL_DEFAULT);
      g_once_init_leave (&initialized, 1);
    }
}

static void
sink_reset (FetchSink *sink)
{
  sha256_reset (sink->sha256);
  sink->received = 0;
  sink->too_big = FALSE;
  sink->write_errno = 0;
  if (sink->buf != NULL)
    g_byte_array_set_size (sink->buf, 0);
  if (sink->fd >= 0)
    {
      if (ftruncate (sink->fd, 0) < 0 || lseek (sink->fd, 0, SEEK_SET) < 0)
        sink->write_errno = errno;
    }
}

static size_t
sink_write (char *data, size_t size, size_t nmemb, void *user_data)
{
  FetchSink *sink = user_data;
  size_t n = size * nmemb;

  if (sink->expected_size >= 0 && sink->received + n > (guint64) sink->expected_size)
    {
      sink->too_big = TRUE;
      return 0;  /* aborts the transfer with CURLE_WRITE_ERROR */
    }
  if (sink->fd >= 0)
    {
      for (size_t done = 0; done < n;)
        {
          ssize_t w = write (sink->fd, data + done, n - done);
          if (w < 0 && errno == EINTR)
            continue;
          if (w < 0)
            {
              sink->write_errno = errno;
              return 0;
            }
          done += w;
        }
    }
  else
    g_byte_array_append (sink->buf, (const guint8 *) data, n);

  sha256_update (sink->sha256, data, n);
  sink->received += n;
  return n;
}

/* The one transfer whose progress line stderr shows, when several threads
 * download at once (the others stay quiet until it is done). */
static gpointer progress_line_owner = NULL;

static void
progress_clear (FetchSink *sink)
{
  if (g_atomic_pointer_compare_and_exchange (&progress_line_owner, sink, NULL))
    fputs ("\r\033[K", stderr);
  sink->last_report_us = 0;
}

/* A time left as apt shows it: "5s", "2min 5s", "1h 2min". */
static char *
progress_duration (double seconds)
{
  guint64 s = (guint64) (seconds + 0.5);
  if (s < 60)
    return g_strdup_printf ("%" G_GUINT64_FORMAT "s", s);
  if (s < 3600)
    return g_strdup_printf ("%" G_GUINT64_FORMAT "min %" G_GUINT64_FORMAT "s", s / 60, s % 60);
  return g_strdup_printf ("%" G_GUINT64_FORMAT "h %" G_GUINT64_FORMAT "min", s / 3600, s / 60 % 60);
}

static int
sink_xferinfo (void *user_data, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
               curl_off_t ulnow)
{
  FetchSink *sink = user_data;
  if (g_cancellable_is_cancelled (sink->cancellable))
    return 1;
  if (!sink->progress || dlnow == 0)
    return 0;
  if (g_atomic_pointer_get (&progress_line_owner) != sink
      && !g_atomic_pointer_compare_and_exchange (&progress_line_owner, NULL, sink))
    return 0;

  gint64 now = g_get_monotonic_time ();
  if (now - sink->last_report_us < 200 * 1000)
    return 0;
  sink->last_report_us = now;
  double rate = dlnow / MAX ((now - sink->start_us) / 1e6, 0.001);
  gint64 total = dltotal > 0 ? dltotal : sink->expected_size;
  g_autofree char *done = g_format_size (dlnow);
  g_autofree char *speed = g_format_size ((guint64) rate);
  if (total >= dlnow)
    {
      g_autofree char *of = g_format_size (total);
      g_autofree char *left = progress_duration ((total - dlnow) / MAX (rate, 1.0));
      fprintf (stderr, "\r\033[K%d%% %s: %s of %s, %s/s, %s left", (int) (100 * dlnow / total),
               sink->label, done, of, speed, left);
    }
  else
    fprintf (stderr, "\r\033[K%s: %s, %s/s", sink->label, done, speed);
  return 0;
}

/* Is this curl failure worth retrying? */
static gboolean
curl_error_is_transient (CURLcode code, long status)
{
  switch (code)
    {
    case CURLE_HTTP_RETURNED_ERROR:
      return status >= 500 || status == 408 || status == 429;
    case CURLE_COULDNT_CONNECT:
    case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return TRUE;
    default:
      return FALSE;
    }
}

/* One transfer of URL into SINK.  On ATTEMPT_TRANSIENT, *out_message says
 * what went wrong (for the final error once the attempts run out). */
static AttemptResult
fetch_attempt (CURL *curl, const char *url, FetchSink *sink, char **out_message, GError **error)
{
  char errbuf[CURL_ERROR_SIZE] = "";
  sink_reset (sink);
  if (sink->write_errno != 0)
    {
      util_fail (error, "%s: cannot write the download: %s", url, g_strerror (sink->write_errno));
      return ATTEMPT_FAILED;
    }
  sink->start_us = g_get_monotonic_time ();

  curl_easy_reset (curl);
  curl_easy_setopt (curl, CURLOPT_URL, url);
  curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (curl, CURLOPT_FAILONERROR, 1L);
  curl_easy_setopt (curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt (curl, CURLOPT_MAXREDIRS, 10L);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "http,https,file");
  curl_easy_setopt (curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#endif
  curl_easy_setopt (curl, CURLOPT_USERAGENT, "apt2ostree/" PACKAGE_VERSION);
  curl_easy_setopt (curl, CURLOPT_CONNECTTIMEOUT, 30L);
  /* A stalled transfer (under 1 byte/s for a minute, or
   * $APT2OSTREE_FETCH_TIMEOUT seconds) is a timeout, retried like the rest. */
  curl_easy_setopt (curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt (curl, CURLOPT_LOW_SPEED_TIME, fetch_stall_seconds ());
  curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, sink_write);
  curl_easy_setopt (curl, CURLOPT_WRITEDATA, sink);
  curl_easy_setopt (curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt (curl, CURLOPT_XFERINFOFUNCTION, sink_xferinfo);
  curl_easy_setopt (curl, CURLOPT_XFERINFODATA, sink);
  if (!proxy_apply (curl, url, error))
    return ATTEMPT_FAILED;

  CURLcode code = curl_easy_perform (curl);
  progress_clear (sink);
  long status = 0;
  curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &status);

  if (code == CURLE_OK)
    return ATTEMPT_OK;

  if (code == CURLE_ABORTED_BY_CALLBACK && g_cancellable_set_error_if_cancelled (sink->cancellable, error))
    return ATTEMPT_FAILED;
  if (code == CURLE_WRITE_ERROR && sink->too_big)
    {
      g_set_error (error, UTIL_ERROR, UTIL_ERROR_MISMATCH, "%s: the download is larger than the "
                   "expected %" G_GINT64_FORMAT " bytes; the mirror may be out of sync with the "
                   "lockfile", url, sink->expected_size);
      return ATTEMPT_FAILED;
    }
  if (code == CURLE_WRITE_ERROR && sink->write_errno != 0)
    {
      util_fail (error, "%s: cannot write the download: %s", url, g_strerror (sink->write_errno));
      return ATTEMPT_FAILED;
    }
  if (code == CURLE_HTTP_RETURNED_ERROR && (status == 404 || status == 410))
    {
      g_set_error (error, UTIL_ERROR, UTIL_ERROR_NOT_FOUND, "%s: not found (HTTP status %ld)", url, status);
      return ATTEMPT_FAILED;
    }
  if (code == CURLE_FILE_COULDNT_READ_FILE)
    {
      g_set_error (error, UTIL_ERROR, UTIL_ERROR_NOT_FOUND, "%s: no such file", url);
      return ATTEMPT_FAILED;
    }

  g_autofree char *message = NULL;
  if (code == CURLE_HTTP_RETURNED_ERROR)
    message = g_strdup_printf ("HTTP status %ld", status);
  else if (code == CURLE_PARTIAL_FILE)
    message = g_strdup_printf ("truncated download: %s (HTTP status %ld)", errbuf, status);
  else if (status != 0)
    message = g_strdup_printf ("%s (HTTP status %ld)", *errbuf ? errbuf : curl_easy_strerror (code), status);
  else
    message = g_strdup (*errbuf ? errbuf : curl_easy_strerror (code));

  if (curl_error_is_transient (code, status))
    {
      *out_message = g_steal_pointer (&message);
      return ATTEMPT_TRANSIENT;
    }
  util_fail (error, "%s: %s", url, message);
  return ATTEMPT_FAILED;
}

/* Run attempts with back-off until one succeeds, fails for good, or the
 * attempts run out. */
static gboolean
fetch_with_retries (const char *url, FetchSink *sink, GError **error)
{
  fetch_global_init ();
  CURL *curl = curl_easy_init ();
  if (curl == NULL)
    return util_fail (error, "%s: cannot initialise libcurl", url);

  gulong backoff = FETCH_FIRST_BACKOFF_US;
  g_autofree char *last_message = NULL;
  gboolean ok = FALSE;
  for (int attempt = 1; attempt <= FETCH_ATTEMPTS; attempt++)
    {
      g_clear_pointer (&last_message, g_free);
      AttemptResult r = fetch_attempt (curl, url, sink, &last_message, error);
      if (r == ATTEMPT_OK)
        {
          ok = TRUE;
          break;
        }
      if (r == ATTEMPT_FAILED)
        break;
      if (attempt == FETCH_ATTEMPTS)
        {
          util_fail (error, "%s: %s (gave up after %d attempts)", url, last_message, FETCH_ATTEMPTS);
          break;
        }
      g_debug ("%s: %s; retrying in %lu ms", url, last_message, backoff / 1000);
      g_usleep (backoff);
      backoff *= 2;
      if (g_cancellable_set_error_if_cancelled (sink->cancellable, error))
        break;
    }
  curl_easy_cleanup (curl);
  return ok;
}

/* The file's name for the progress line, its first 30 characters (the
 * line then fits in 80 columns). */
static char *
url_label (const char *url)
{
  const char *slash = strrchr (url, '/');
  const char *name = slash != NULL && slash[1] != '\0' ? slash + 1 : url;
  if (!g_utf8_validate (name, -1, NULL) || g_utf8_strlen (name, -1) <= 30)
    return g_strdup (name);
  g_autofree char *head = g_utf8_substring (name, 0, 29);
  return g_strconcat (head, "…", NULL);
}

/* A file:// URL that does not hold the bytes locked (a local .deb changed
 * since "lock" read it): ERROR, a mismatch, becomes one line naming the
 * URL, the file and both sha256s, whatever the mismatch was (a size, a
 * file that grew), and saying what to do. */
static void
explain_local_change (const char *url, const char *expected_sha256, GError **error)
{
  if (error == NULL || !g_error_matches (*error, UTIL_ERROR, UTIL_ERROR_MISMATCH)
      || expected_sha256 == NULL || !g_str_has_prefix (url, "file://"))
    return;
  g_autofree char *path = g_filename_from_uri (url, NULL, NULL);
  g_autofree char *actual = path != NULL ? cache_sha256_file (path, NULL) : NULL;
  if (actual == NULL)
    return;
  g_clear_error (error);
  g_set_error (error, UTIL_ERROR, UTIL_ERROR_MISMATCH, "%s: sha256 mismatch (expected %s, got %s): "
               "%s changed since it was locked; put the locked file back or lock again", url,
               expected_sha256, actual, path);
}

/* Download URL to a fresh temporary file in DIR and verify it.  On success
 * the caller owns *out_tmp_path (and must rename or unlink it); on failure no
 * temporary file is left. */
static gboolean
fetch_to_temp (const char *url, const char *dir, const FetchOptions *opts, char **out_tmp_path,
               char **out_sha256, GCancellable *cancellable, GError **error)
{
  FetchOptions defaults = { NULL, -1, FALSE };
  if (opts == NULL)
    opts = &defaults;

  g_autofree char *tmp_path = g_build_filename (dir, ".fetch-XXXXXX", NULL);
  int fd = g_mkstemp_full (tmp_path, O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0)
    return util_fail (error, "%s: cannot create a temporary file in %s: %s", url, dir,
                      g_strerror (errno));

  g_autofree char *label = url_label (url);
  g_autoptr(Sha256) sha256 = sha256_new ();
  FetchSink sink = {
    .fd = fd,
    .sha256 = sha256,
    .expected_size = opts->expected_size,
    .cancellable = cancellable,
    .progress = opts->progress && isatty (STDERR_FILENO),
    .label = label,
  };

  gboolean ok = fetch_with_retries (url, &sink, error);
  if (close (fd) < 0 && ok)
    ok = util_fail (error, "%s: cannot write %s: %s", url, tmp_path, g_strerror (errno));

  if (ok && opts->expected_size >= 0 && sink.received != (guint64) opts->expected_size)
    ok = (g_set_error (error, UTIL_ERROR, UTIL_ERROR_MISMATCH,
                       "%s: size mismatch (expected %" G_GINT64_FORMAT " bytes, got %"
                       G_GUINT64_FORMAT "); the download is truncated or the mirror is out of sync",
                       url, opts->expected_size, sink.received), FALSE);

  g_autofree char *actual = sha256_finish_hex (sha256);
  if (ok && opts->expected_sha256 != NULL && g_ascii_strcasecmp (actual, opts->expected_sha256) != 0)
    ok = (g_set_error (error, UTIL_ERROR, UTIL_ERROR_MISMATCH,
                       "%s: sha256 mismatch (expected %s, got %s); the mirror may be out of "
                       "sync with the lockfile", url, opts->expected_sha256, actual), FALSE);

  if (!ok)
    {
      (void) unlink (tmp_path);
      explain_local_change (url, opts->expected_sha256, error);
      return FALSE;
    }
  *out_tmp_path = g_steal_pointer (&tmp_path);
  if (out_sha256 != NULL)
    *out_sha256 = g_steal_pointer (&actual);
  return TRUE;
}

gboolean
fetch_to_file (const char *url, const char *dest, const FetchOptions *opts,
               GCancellable *cancellable, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (dest);
  g_autofree char *tmp_path = NULL;
  if (!fetch_to_temp (url, dir, opts, &tmp_path, NULL, cancellable, error))
    return FALSE;
  if (rename (tmp_path, dest) < 0)
    {
      int errsv = errno;
      (void) unlink (tmp_path);
      return util_fail (error, "%s: cannot rename the download to %s: %s", url, dest,
                        g_strerror (errsv));
    }
  return TRUE;
}

GBytes *
fetch_bytes (const char *url, GCancellable *cancellable, GError **error)
{
  g_autoptr(Sha256) sha256 = sha256_new ();
  g_autoptr(GByteArray) buf = g_byte_array_new ();
  FetchSink sink = {
    .fd = -1,
    .buf = buf,
    .sha256 = sha256,
    .expected_size = -1,
    .cancellable = cancellable,
  };
  if (!fetch_with_retries (url, &sink, error))
    return NULL;
  return g_byte_array_free_to_bytes (g_steal_pointer (&buf));
}



/* Temporary files of downloads that were killed (Ctrl-C in Ninja) would
 * stay forever: remove those untouched for an hour.  A live download writes
 * more often than that, or curl gives up on it first. */
static void
sweep_stale_temporaries (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  if (d == NULL)
    return;
  gint64 cutoff = g_get_real_time () / G_USEC_PER_SEC - 3600;
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      if (!g_str_has_prefix (name, ".fetch-"))
        continue;
      g_autofree char *path = g_build_filename (dir, name, NULL);
      struct stat st;
      if (lstat (path, &st) == 0 && S_ISREG (st.st_mode) && st.st_mtime < cutoff)
        (void) unlink (path);
    }
}

char *
fetch_cached (const char *url, const char *cache_dir, const char *sha256, gint64 size,
              GCancellable *cancellable, GError **error)
{
  g_autofree char *want = NULL;
  if (sha256 != NULL)
    {
      if (!cache_is_sha256 (sha256))
        {
          util_fail (error, "\"%s\" is not a sha256 (64 hex digits)", sha256);
          return NULL;
        }
      want = g_ascii_strdown (sha256, -1);
      g_autofree char *path = g_build_filename (cache_dir, want, NULL);
      if (cache_is_valid (path, want, size))
        return g_steal_pointer (&path);
      /* A damaged or foreign file under that name: it must not stay. */
      (void) unlink (path);
    }

  if (g_mkdir_with_parents (cache_dir, 0755) < 0)
    {
      util_fail (error, "%s: cannot create the cache directory: %s", cache_dir, g_strerror (errno));
      return NULL;
    }

  sweep_stale_temporaries (cache_dir);

  FetchOptions opts = { want, size, TRUE };
  g_autofree char *tmp_path = NULL;
  g_autofree char *actual = NULL;
  if (!fetch_to_temp (url, cache_dir, &opts, &tmp_path, &actual, cancellable, error))
    return NULL;

  g_autofree char *path = g_build_filename (cache_dir, actual, NULL);
  if (rename (tmp_path, path) < 0)
    {
      int errsv = errno;
      (void) unlink (tmp_path);
      util_fail (error, "%s: cannot rename the download to %s: %s", url, path, g_strerror (errsv));
      return NULL;
    }
  return g_steal_pointer (&path);
}
