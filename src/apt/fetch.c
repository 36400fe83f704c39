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
#include "base/progress.h"
#include "apt/fetchtransfer.h"
#include "apt/proxy.h"
#include "apt/tls.h"
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
  /* progress line: on the terminal (stderr), to the build (progress.h), or both */
  gboolean progress;
  gboolean terminal;
  const char *label;
  gint64 start_us;
  gint64 last_report_us;
} FetchSink;

static long
fetch_stall_seconds (void)
{
  const char *value = g_getenv ("APT2OSTREE_FETCH_TIMEOUT");
  guint64 seconds;
  if (value != NULL && g_ascii_string_to_unsigned (value, 10, 1, 3600, &seconds, NULL))
    return (long) seconds;
  return 60;
}

/* The process's share: name lookups and TLS sessions, for every handle
 * fetch_curl_new() makes (lock fetches its sources on threads of its own,
 * hence the locks; libcurl's shared connection cache is not safe across
 * threads, so each thread keeps its connections in a handle of its own:
 * thread_handle()). */
static GMutex share_locks[CURL_LOCK_DATA_LAST];

static void
share_lock (CURL *handle, curl_lock_data data, curl_lock_access access, void *user_data)
{
  g_mutex_lock (&share_locks[data]);
}

static void
share_unlock (CURL *handle, curl_lock_data data, void *user_data)
{
  g_mutex_unlock (&share_locks[data]);
}

static CURLSH *
process_share (void)
{
  static CURLSH *share = NULL;
  if (g_once_init_enter (&share))
    {
      curl_global_init (CURL_GLOBAL_DEFAULT);
      CURLSH *s = curl_share_init ();
      curl_share_setopt (s, CURLSHOPT_LOCKFUNC, share_lock);
      curl_share_setopt (s, CURLSHOPT_UNLOCKFUNC, share_unlock);
      curl_share_setopt (s, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
      curl_share_setopt (s, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
      g_once_init_leave (&share, s);
    }
  return share;
}

FetchCurl *
fetch_curl_new (GError **error)
{
  (void) process_share ();
  CURL *curl = curl_easy_init ();
  if (curl == NULL)
    return util_fail (error, "cannot initialise libcurl"), NULL;
  return curl;
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
  if (g_atomic_pointer_compare_and_exchange (&progress_line_owner, sink, NULL) && sink->terminal)
    fputs ("\r\033[K", stderr);
  sink->last_report_us = 0;
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
  gint64 total = dltotal > 0 ? dltotal : sink->expected_size;
  g_autofree char *line = cache_progress_line (sink->label, dlnow, total,
                                               (now - sink->start_us) / 1e6);
  progress_say ("%s", line);
  if (sink->terminal)
    fprintf (stderr, "\r\033[K%s", line);
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
    case CURLE_COULDNT_RESOLVE_HOST:  /* a lost query (the resolver's own retry is 5 s) */
    case CURLE_COULDNT_RESOLVE_PROXY:
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

struct FetchTransfer {
  char *url;
  char *label;
  char *tmp_path;         /* the temporary file, while the transfer owns it */
  int fd;
  char *expected_sha256;
  Sha256 *sha256;
  FetchSink sink;
  char errbuf[CURL_ERROR_SIZE];
  int attempt;            /* attempts made so far */
  gulong backoff_us;
  char *last_message;     /* what the last transient failure was */
};

void
fetch_transfer_free (FetchTransfer *t)
{
  if (t == NULL)
    return;
  util_fd_close (&t->fd);
  if (t->tmp_path != NULL)
    (void) unlink (t->tmp_path);
  g_free (t->tmp_path);
  g_free (t->url);
  g_free (t->label);
  g_free (t->expected_sha256);
  sha256_free (t->sha256);
  g_free (t->last_message);
  g_free (t);
}

static FetchTransfer *
transfer_new (const char *url, int fd, GByteArray *buf, const FetchOptions *opts,
              GCancellable *cancellable)
{
  FetchTransfer *t = g_new0 (FetchTransfer, 1);
  t->url = g_strdup (url);
  t->label = cache_url_label (url);
  t->fd = fd;
  t->expected_sha256 = opts != NULL ? g_strdup (opts->expected_sha256) : NULL;
  t->sha256 = sha256_new ();
  t->backoff_us = FETCH_FIRST_BACKOFF_US;
  t->sink = (FetchSink) {
    .fd = fd,
    .buf = buf,
    .sha256 = t->sha256,
    .expected_size = opts != NULL ? opts->expected_size : -1,
    .cancellable = cancellable,
    .progress = opts != NULL && opts->progress && (isatty (STDERR_FILENO) || progress_active ()),
    .terminal = isatty (STDERR_FILENO),
    .label = t->label,
  };
  return t;
}

FetchTransfer *
fetch_transfer_new (const char *url, const char *dir, const FetchOptions *opts,
                    GCancellable *cancellable, GError **error)
{
  g_autofree char *tmp_path = g_build_filename (dir, ".fetch-XXXXXX", NULL);
  int fd = g_mkstemp_full (tmp_path, O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0)
    return util_fail (error, "%s: cannot create a temporary file in %s: %s", url, dir,
                      g_strerror (errno)), NULL;
  FetchTransfer *t = transfer_new (url, fd, NULL, opts, cancellable);
  t->tmp_path = g_steal_pointer (&tmp_path);
  return t;
}

const char *
fetch_transfer_url (FetchTransfer *t)
{
  return t->url;
}

gboolean
fetch_transfer_prepare (FetchTransfer *t, CURL *curl, GError **error)
{
  FetchSink *sink = &t->sink;
  t->errbuf[0] = '\0';
  t->attempt++;
  sink_reset (sink);
  if (sink->write_errno != 0)
    return util_fail (error, "%s: cannot write the download: %s", t->url,
                      g_strerror (sink->write_errno));
  sink->start_us = g_get_monotonic_time ();

  curl_easy_reset (curl);
  curl_easy_setopt (curl, CURLOPT_SHARE, process_share ());
  curl_easy_setopt (curl, CURLOPT_URL, t->url);
  curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, t->errbuf);
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
  return proxy_apply (curl, t->url, error) && tls_apply (curl, t->url, error);
}

/* What an attempt that ended with CODE means: done, worth another try
 * (*out_message says why), or failed for good (ERROR set). */
static FetchAttempt
attempt_result (FetchTransfer *t, CURL *curl, CURLcode code, char **out_message, GError **error)
{
  FetchSink *sink = &t->sink;
  const char *url = t->url;
  const char *errbuf = t->errbuf;
  progress_clear (sink);
  long status = 0;
  curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &status);

  if (code == CURLE_OK)
    return FETCH_ATTEMPT_OK;

  if (code == CURLE_ABORTED_BY_CALLBACK && g_cancellable_set_error_if_cancelled (sink->cancellable, error))
    return FETCH_ATTEMPT_FAILED;
  if (code == CURLE_WRITE_ERROR && sink->too_big)
    {
      g_set_error (error, UTIL_ERROR, UTIL_ERROR_MISMATCH, "%s: the download is larger than the "
                   "expected %" G_GINT64_FORMAT " bytes; the mirror may be out of sync with the "
                   "lockfile", url, sink->expected_size);
      return FETCH_ATTEMPT_FAILED;
    }
  if (code == CURLE_WRITE_ERROR && sink->write_errno != 0)
    {
      util_fail (error, "%s: cannot write the download: %s", url, g_strerror (sink->write_errno));
      return FETCH_ATTEMPT_FAILED;
    }
  if (code == CURLE_HTTP_RETURNED_ERROR && (status == 404 || status == 410))
    {
      g_set_error (error, UTIL_ERROR, UTIL_ERROR_NOT_FOUND, "%s: not found (HTTP status %ld)", url, status);
      return FETCH_ATTEMPT_FAILED;
    }
  if (code == CURLE_FILE_COULDNT_READ_FILE)
    {
      g_set_error (error, UTIL_ERROR, UTIL_ERROR_NOT_FOUND, "%s: no such file", url);
      return FETCH_ATTEMPT_FAILED;
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
      return FETCH_ATTEMPT_TRANSIENT;
    }
  if (code == CURLE_PEER_FAILED_VERIFICATION)
    return util_fail (error, "%s: %s (a mirror whose certificate a CA of your own signed: name "
                      "that CA's PEM file in apt.conf, Acquire::https::CaInfo \"FILE\";, as apt "
                      "takes it)", url, message), FETCH_ATTEMPT_FAILED;
  util_fail (error, "%s: %s", url, message);
  return FETCH_ATTEMPT_FAILED;
}

FetchAttempt
fetch_transfer_done (FetchTransfer *t, CURL *curl, CURLcode code, gulong *out_retry_us,
                     GError **error)
{
  g_clear_pointer (&t->last_message, g_free);
  FetchAttempt r = attempt_result (t, curl, code, &t->last_message, error);
  if (r != FETCH_ATTEMPT_TRANSIENT)
    return r;
  if (t->attempt >= FETCH_ATTEMPTS)
    {
      util_fail (error, "%s: %s (gave up after %d attempts)", t->url, t->last_message,
                 FETCH_ATTEMPTS);
      return FETCH_ATTEMPT_FAILED;
    }
  g_debug ("%s: %s; retrying in %lu ms", t->url, t->last_message, t->backoff_us / 1000);
  *out_retry_us = t->backoff_us;
  t->backoff_us *= 2;
  return FETCH_ATTEMPT_TRANSIENT;
}

/* This thread's handle, kept (with its connections) for its next
 * transfer. */
static GPrivate thread_curl = G_PRIVATE_INIT ((GDestroyNotify) curl_easy_cleanup);

static CURL *
thread_handle (GError **error)
{
  CURL *curl = g_private_get (&thread_curl);
  if (curl == NULL)
    {
      curl = fetch_curl_new (error);
      g_private_set (&thread_curl, curl);
    }
  return curl;
}

/* Attempts with back-off on this thread's handle until one succeeds, fails
 * for good, or the attempts run out. */
static gboolean
transfer_run (FetchTransfer *t, GError **error)
{
  CURL *curl = thread_handle (error);
  if (curl == NULL)
    return FALSE;
  for (;;)
    {
      if (!fetch_transfer_prepare (t, curl, error))
        return FALSE;
      gulong retry_us = 0;
      FetchAttempt r = fetch_transfer_done (t, curl, curl_easy_perform (curl), &retry_us, error);
      if (r != FETCH_ATTEMPT_TRANSIENT)
        return r == FETCH_ATTEMPT_OK;
      g_usleep (retry_us);
      if (g_cancellable_set_error_if_cancelled (t->sink.cancellable, error))
        return FALSE;
    }
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

/* Close the download and check its size and sha256 (the sha256 it has is
 * returned). */
static char *
transfer_verify (FetchTransfer *t, GError **error)
{
  FetchSink *sink = &t->sink;
  if (t->fd >= 0 && close (t->fd) < 0)
    {
      t->fd = -1;
      return util_fail (error, "%s: cannot write %s: %s", t->url, t->tmp_path, g_strerror (errno)),
             NULL;
    }
  t->fd = -1;
  if (sink->expected_size >= 0 && sink->received != (guint64) sink->expected_size)
    return g_set_error (error, UTIL_ERROR, UTIL_ERROR_MISMATCH,
                        "%s: size mismatch (expected %" G_GINT64_FORMAT " bytes, got %"
                        G_GUINT64_FORMAT "); the download is truncated or the mirror is out of sync",
                        t->url, sink->expected_size, sink->received), NULL;
  g_autofree char *actual = sha256_finish_hex (t->sha256);
  if (t->expected_sha256 != NULL && g_ascii_strcasecmp (actual, t->expected_sha256) != 0)
    return g_set_error (error, UTIL_ERROR, UTIL_ERROR_MISMATCH,
                        "%s: sha256 mismatch (expected %s, got %s); the mirror may be out of "
                        "sync with the lockfile", t->url, t->expected_sha256, actual), NULL;
  return g_steal_pointer (&actual);
}

/* Verify the finished download and rename it to DEST, or into DIR under its
 * sha256 when DEST is NULL.  Returns the final path; on failure nothing is
 * left. */
static char *
transfer_commit (FetchTransfer *t, const char *dest, const char *dir, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *actual = transfer_verify (t, &local_error);
  if (actual == NULL)
    {
      explain_local_change (t->url, t->expected_sha256, &local_error);
      return g_propagate_error (error, g_steal_pointer (&local_error)), NULL;
    }
  g_autofree char *path = dest != NULL ? g_strdup (dest) : g_build_filename (dir, actual, NULL);
  if (rename (t->tmp_path, path) < 0)
    return util_fail (error, "%s: cannot rename the download to %s: %s", t->url, path,
                      g_strerror (errno)), NULL;
  g_clear_pointer (&t->tmp_path, g_free);
  return g_steal_pointer (&path);
}

char *
fetch_transfer_commit (FetchTransfer *t, const char *cache_dir, GError **error)
{
  return transfer_commit (t, NULL, cache_dir, error);
}

void
fetch_transfer_explain (FetchTransfer *t, GError **error)
{
  explain_local_change (t->url, t->expected_sha256, error);
}

/* URL into DEST, or into DIR under its sha256 when DEST is NULL. */
static char *
fetch_into (const char *url, const char *dest, const char *dir, const FetchOptions *opts,
            GCancellable *cancellable, GError **error)
{
  g_autoptr(FetchTransfer) t = fetch_transfer_new (url, dir, opts, cancellable, error);
  if (t == NULL)
    return NULL;
  g_autoptr(GError) local_error = NULL;
  if (!transfer_run (t, &local_error))
    {
      explain_local_change (url, t->expected_sha256, &local_error);
      return g_propagate_error (error, g_steal_pointer (&local_error)), NULL;
    }
  return transfer_commit (t, dest, dir, error);
}

gboolean
fetch_to_file (const char *url, const char *dest, const FetchOptions *opts,
               GCancellable *cancellable, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (dest);
  g_autofree char *path = fetch_into (url, dest, dir, opts, cancellable, error);
  return path != NULL;
}

GBytes *
fetch_bytes (const char *url, GCancellable *cancellable, GError **error)
{
  g_autoptr(GByteArray) buf = g_byte_array_new ();
  g_autoptr(FetchTransfer) t = transfer_new (url, -1, buf, NULL, cancellable);
  if (!transfer_run (t, error))
    return NULL;
  return g_byte_array_free_to_bytes (g_steal_pointer (&buf));
}

/* Temporary files of downloads that were killed (Ctrl-C in Ninja) would
 * stay forever: remove those untouched for an hour.  A live download writes
 * more often than that, or curl gives up on it first. */
void
fetch_sweep_temporaries (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  if (d == NULL)
    return;
  gint64 cutoff = g_get_real_time () / G_USEC_PER_SEC - 3600;
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      /* ".fetch-XXXXXX" only: the fetch service keeps its lock and log
       * (".fetch-service.lock", ".fetch-service.log") beside them. */
      if (!g_str_has_prefix (name, ".fetch-") || strlen (name) != strlen (".fetch-XXXXXX"))
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

  fetch_sweep_temporaries (cache_dir);

  FetchOptions opts = { want, size, TRUE };
  return fetch_into (url, NULL, cache_dir, &opts, cancellable, error);
}
