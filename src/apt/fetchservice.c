/* fetchservice.c — the fetch service: one libcurl multi handle serving the
 * unpack edges of a download cache over a unix socket. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "apt/cache.h"
#include "apt/fetchclient.h"
#include "apt/fetchservice.h"
#include "apt/fetchtransfer.h"
#include "base/util.h"

#define DEFAULT_CONNECTIONS 16
#define MAX_CONNECTIONS 64
/* A client's request line is short; one longer than this is not one. */
#define MAX_LINE 16384
/* A name lookup slower than this is said to the edges that waited on it. */
#define SLOW_LOOKUP_US (2 * G_USEC_PER_SEC)
#define PROGRESS_INTERVAL_US (250 * 1000)

typedef struct {
  int fd;
  GString *in;
} Client;

/* One download: of URL, for the .deb with SHA256 and SIZE. */
typedef struct {
  char *key;              /* "SHA256 URL" */
  char *url;
  char *sha256;
  gint64 size;
  FetchTransfer *transfer;
  CURL *curl;
  GPtrArray *waiters;     /* Client *, the edges that asked for it */
  gint64 not_before_us;   /* a retry waits for its back-off */
  gboolean running;
  gboolean lookup_said;   /* a failed lookup's retry was said */
  char *host;             /* "SCHEME://HOST:PORT" */
  struct Service *service;
} Job;

/* What the service knows of a host: a download to a host it has not
 * reached yet waits for the first one's lookup, so that the others find
 * the address in libcurl's cache instead of each looking it up at once. */
typedef enum {
  HOST_NEW,        /* no download running to it */
  HOST_LOOKING,    /* the first is looking it up and connecting */
  HOST_REACHED,    /* connected once: its address is known */
} HostState;

typedef struct Service {
  char *cache_dir;
  int dir_fd;
  char *socket_name;      /* in the cache directory */
  int listen_fd;
  dev_t socket_dev;
  ino_t socket_ino;
  CURLM *multi;
  guint max_running;
  guint running;
  GQueue queue;           /* Job *, waiting to run: the head runs next */
  GHashTable *jobs;       /* key -> Job, queued or running */
  GPtrArray *clients;     /* Client * */
  GHashTable *failed;     /* key -> GError *: prefetches that failed for good (no
                           * such file, other bytes), said to the first edge
                           * that asks */
  GHashTable *hosts;      /* host -> HostState */
  GHashTable *lists;      /* "NAME MTIME SIZE" of the download lists read (and not
                           * yet forgotten) */
  gint64 last_client_us;  /* when a client last came */
  gint64 idle_since_us;   /* 0: not idle */
  gint64 progress_us;     /* when the waiting edges were last told their progress */
} Service;

static guint
connections (void)
{
  const char *value = g_getenv ("APT2OSTREE_DOWNLOAD_CONNECTIONS");
  guint64 n;
  if (value != NULL && g_ascii_string_to_unsigned (value, 10, 1, MAX_CONNECTIONS, &n, NULL))
    return (guint) n;
  return DEFAULT_CONNECTIONS;
}

static void
job_free (Job *job)
{
  g_free (job->key);
  g_free (job->url);
  g_free (job->sha256);
  g_free (job->host);
  fetch_transfer_free (job->transfer);
  if (job->curl != NULL)
    curl_easy_cleanup (job->curl);
  g_ptr_array_unref (job->waiters);
  g_free (job);
}

static void
client_free (Client *client)
{
  util_fd_close (&client->fd);
  g_string_free (client->in, TRUE);
  g_free (client);
}

/* URL's "SCHEME://HOST:PORT" (the URL itself when it does not parse). */
static char *
url_host (const char *url)
{
  g_autofree char *scheme = NULL;
  g_autofree char *host = NULL;
  int port = -1;
  if (!g_uri_split_network (url, G_URI_FLAGS_NONE, &scheme, &host, &port, NULL))
    return g_strdup (url);
  return g_strdup_printf ("%s://%s:%d", scheme, host, port);
}

static HostState
host_state (Service *s, const char *host)
{
  return GPOINTER_TO_INT (g_hash_table_lookup (s->hosts, host));
}

static void
host_set (Service *s, const char *host, HostState state)
{
  g_hash_table_replace (s->hosts, g_strdup (host), GINT_TO_POINTER (state));
}

/* libcurl's word that JOB's connection is up (its host's address known). */
static int
job_connected (void *data, char *primary_ip, char *local_ip, int primary_port, int local_port)
{
  Job *job = data;
  host_set (job->service, job->host, HOST_REACHED);
  return CURL_PREREQFUNC_OK;
}

static char *
job_key (const char *sha256, const char *url)
{
  return g_strconcat (sha256, " ", url, NULL);
}

/* A line to CLIENT; one it cannot take now (it stopped reading) is lost,
 * and so is the client when it has gone. */
static void
client_send (Client *client, const char *line)
{
  (void) send (client->fd, line, strlen (line), MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void
client_send_error (Client *client, const GError *error)
{
  const char *kind = g_error_matches (error, UTIL_ERROR, UTIL_ERROR_NOT_FOUND) ? "notfound"
                     : g_error_matches (error, UTIL_ERROR, UTIL_ERROR_MISMATCH) ? "mismatch"
                                                                                : "failed";
  g_autofree char *message = g_strdup (error->message);
  g_strdelimit (message, "\t\n\r", ' ');
  g_autofree char *line = g_strdup_printf ("error\t%s\t%s\n", kind, message);
  client_send (client, line);
}

/* JOB is over, with ERROR or done: its edges are told. */
static void
job_end (Service *s, Job *job, const GError *error)
{
  for (guint i = 0; i < job->waiters->len; i++)
    {
      Client *client = job->waiters->pdata[i];
      if (error == NULL)
        client_send (client, "ok\n");
      else
        client_send_error (client, error);
    }
  /* A prefetch that found no such file or other bytes than locked has
   * the edge's answer; one that gave up on a flaky network has not: the
   * edge's own request tries again. */
  if (job->waiters->len == 0 && (g_error_matches (error, UTIL_ERROR, UTIL_ERROR_NOT_FOUND)
                                 || g_error_matches (error, UTIL_ERROR, UTIL_ERROR_MISMATCH)))
    g_hash_table_replace (s->failed, g_strdup (job->key), g_error_copy (error));
  g_hash_table_remove (s->jobs, job->key);  /* frees JOB */
}

static void
job_notify (Job *job, const char *text)
{
  /* One line, whatever the text (a URL from a download list) holds. */
  g_autofree char *clean = g_strdelimit (g_strdup (text), "\t\r\n", ' ');
  g_autofree char *line = g_strdup_printf ("note\t%s\n", clean);
  for (guint i = 0; i < job->waiters->len; i++)
    client_send (job->waiters->pdata[i], line);
}

/* Does the cache hold SHA256 already (by its size: the edge checks the
 * sha256 itself)? */
static gboolean
cached (Service *s, const char *sha256, gint64 size)
{
  struct stat st;
  return fstatat (s->dir_fd, sha256, &st, 0) == 0 && S_ISREG (st.st_mode)
         && (size < 0 || st.st_size == size);
}

static void
job_start (Service *s, Job *job)
{
  g_autoptr(GError) local_error = NULL;
  if (cached (s, job->sha256, job->size))
    return job_end (s, job, NULL);
  if (job->transfer == NULL)
    {
      FetchOptions opts = { job->sha256, job->size, FALSE };
      job->transfer = fetch_transfer_new (job->url, s->cache_dir, &opts, NULL, &local_error);
      if (job->transfer == NULL)
        return job_end (s, job, local_error);
    }
  if (job->curl == NULL && (job->curl = fetch_curl_new (&local_error)) == NULL)
    return job_end (s, job, local_error);
  if (!fetch_transfer_prepare (job->transfer, job->curl, &local_error))
    return job_end (s, job, local_error);
  curl_easy_setopt (job->curl, CURLOPT_PRIVATE, job);
  curl_easy_setopt (job->curl, CURLOPT_PREREQFUNCTION, job_connected);
  curl_easy_setopt (job->curl, CURLOPT_PREREQDATA, job);
  if (host_state (s, job->host) == HOST_NEW)
    host_set (s, job->host, HOST_LOOKING);
  curl_multi_add_handle (s->multi, job->curl);
  job->running = TRUE;
  s->running++;
}

/* Start what the queue holds, while connections are free; the time until
 * a retry's back-off ends (or -1). */
static gint64
start_jobs (Service *s)
{
  gint64 now = g_get_monotonic_time ();
  gint64 next = -1;
  for (GList *l = s->queue.head; l != NULL && s->running < s->max_running;)
    {
      GList *following = l->next;
      Job *job = l->data;
      if (host_state (s, job->host) == HOST_LOOKING)
        ;  /* after the lookup under way */
      else if (job->not_before_us <= now)
        {
          g_queue_delete_link (&s->queue, l);
          job_start (s, job);
        }
      else if (next < 0 || job->not_before_us - now < next)
        next = job->not_before_us - now;
      l = following;
    }
  return next;
}

static void
note_slow_lookup (Job *job)
{
  curl_off_t lookup_us = 0;
  if (curl_easy_getinfo (job->curl, CURLINFO_NAMELOOKUP_TIME_T, &lookup_us) != CURLE_OK
      || lookup_us < SLOW_LOOKUP_US)
    return;
  g_autofree char *text = g_strdup_printf ("%s: the name lookup took %.1f s (the resolver "
                                           "retried); the build makes it once for every .deb",
                                           job->url, lookup_us / 1e6);
  job_notify (job, text);
}

static void
job_finished (Service *s, Job *job, CURLcode code)
{
  curl_multi_remove_handle (s->multi, job->curl);
  job->running = FALSE;
  s->running--;
  /* Not reached: the next download to it looks it up again. */
  if (host_state (s, job->host) == HOST_LOOKING)
    host_set (s, job->host, HOST_NEW);
  note_slow_lookup (job);
  g_autoptr(GError) local_error = NULL;
  gulong retry_us = 0;
  FetchAttempt r = fetch_transfer_done (job->transfer, job->curl, code, &retry_us, &local_error);
  if (r == FETCH_ATTEMPT_TRANSIENT)
    {
      /* A lost name lookup is said once; other retries are not news. */
      if (code == CURLE_COULDNT_RESOLVE_HOST && !job->lookup_said)
        {
          g_autofree char *text = g_strdup_printf ("%s: the name lookup failed; retrying in "
                                                   "%lu ms", job->url, retry_us / 1000);
          job_notify (job, text);
          job->lookup_said = TRUE;
        }
      job->not_before_us = g_get_monotonic_time () + retry_us;
      g_queue_push_head (&s->queue, job);
      return;
    }
  g_autofree char *path = NULL;
  if (r == FETCH_ATTEMPT_OK)
    path = fetch_transfer_commit (job->transfer, s->cache_dir, &local_error);
  else
    fetch_transfer_explain (job->transfer, &local_error);
  job_end (s, job, path != NULL ? NULL : local_error);
}

/* Each waiting edge's download, so far: "progress DONE TOTAL" (TOTAL -1
 * when unknown), at most four times a second. */
static void
send_progress (Service *s)
{
  gint64 now = g_get_monotonic_time ();
  if (now - s->progress_us < PROGRESS_INTERVAL_US)
    return;
  s->progress_us = now;
  GHashTableIter iter;
  Job *job;
  g_hash_table_iter_init (&iter, s->jobs);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &job))
    {
      curl_off_t done = 0, total = -1;
      if (!job->running || job->waiters->len == 0
          || curl_easy_getinfo (job->curl, CURLINFO_SIZE_DOWNLOAD_T, &done) != CURLE_OK || done == 0)
        continue;
      curl_easy_getinfo (job->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &total);
      g_autofree char *line = g_strdup_printf ("progress\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                                               "\n", (gint64) done, (gint64) total);
      for (guint i = 0; i < job->waiters->len; i++)
        client_send (job->waiters->pdata[i], line);
    }
}

static void
collect_finished (Service *s)
{
  int left;
  CURLMsg *msg;
  while ((msg = curl_multi_info_read (s->multi, &left)) != NULL)
    {
      if (msg->msg != CURLMSG_DONE)
        continue;
      Job *job = NULL;
      curl_easy_getinfo (msg->easy_handle, CURLINFO_PRIVATE, (char **) &job);
      job_finished (s, job, msg->data.result);
    }
}

static Job *
job_new (Service *s, const char *sha256, gint64 size, const char *url)
{
  Job *job = g_new0 (Job, 1);
  job->key = job_key (sha256, url);
  job->url = g_strdup (url);
  job->sha256 = g_strdup (sha256);
  job->size = size;
  job->host = url_host (url);
  job->service = s;
  job->waiters = g_ptr_array_new ();
  g_hash_table_insert (s->jobs, job->key, job);
  return job;
}

/* A line of a download list: "REF SHA256 SIZE URL", queued behind what
 * the edges asked for unless the tree or the .deb is there already. */
static void
prefetch_line (Service *s, const char *line, const char *repo)
{
  g_auto(GStrv) f = g_strsplit (line, "\t", 4);
  guint64 size;
  if (g_strv_length (f) != 4 || !cache_is_sha256 (f[1])
      || !g_ascii_string_to_unsigned (f[2], 10, 0, G_MAXINT64, &size, NULL)
      || !fetch_client_serves (f[3]) || f[0][0] == '/' || strstr (f[0], "..") != NULL)
    return;
  g_autofree char *ref = g_build_filename (repo, "refs", "heads", f[0], NULL);
  g_autofree char *sha256 = g_ascii_strdown (f[1], -1);
  g_autofree char *key = job_key (sha256, f[3]);
  if (g_file_test (ref, G_FILE_TEST_EXISTS) || cached (s, sha256, size)
      || g_hash_table_contains (s->jobs, key))
    return;
  g_queue_push_tail (&s->queue, job_new (s, sha256, size, f[3]));
}

/* The download lists of the cache that are new or changed since they were
 * read, queued. */
static void
prefetch (Service *s, const char *repo)
{
  g_autofree char *dir = g_build_filename (s->cache_dir, FETCH_SERVICE_LISTS, NULL);
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      struct stat st;
      if (stat (path, &st) < 0 || !S_ISREG (st.st_mode))
        continue;
      char *seen = g_strdup_printf ("%s %" G_GINT64_FORMAT ".%09ld %" G_GINT64_FORMAT, name,
                                    (gint64) st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                                    (gint64) st.st_size);
      if (!g_hash_table_add (s->lists, seen))
        continue;
      g_autofree char *text = NULL;
      g_autoptr(GError) local_error = NULL;
      if (!g_file_get_contents (path, &text, NULL, &local_error))
        {
          g_printerr ("fetch-service: %s\n", local_error->message);
          continue;
        }
      g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
      for (char **l = lines; *l != NULL; l++)
        if (**l != '\0' && **l != '#')
          prefetch_line (s, *l, repo);
    }
}

/* "get SHA256 SIZE URL REPO": answered now when the cache has it or its
 * prefetch failed, else when its download ends (which goes first); the
 * download lists are queued behind it. */
static void
get (Service *s, Client *client, char **f)
{
  gint64 size;
  if (!cache_is_sha256 (f[1]) || !g_ascii_string_to_signed (f[2], 10, -1, G_MAXINT64, &size, NULL)
      || !fetch_client_serves (f[3]))
    return client_send (client, "error\tfailed\tthe fetch service cannot read the request\n");
  g_autofree char *sha256 = g_ascii_strdown (f[1], -1);
  g_autofree char *key = job_key (sha256, f[3]);
  GError *failed = g_hash_table_lookup (s->failed, key);
  if (failed != NULL)
    {
      client_send_error (client, failed);
      g_hash_table_remove (s->failed, key);
      return;
    }
  Job *job = g_hash_table_lookup (s->jobs, key);
  if (job == NULL && cached (s, sha256, size))
    return client_send (client, "ok\n");
  if (job == NULL)
    job = job_new (s, sha256, size, f[3]);
  else if (!job->running)
    g_queue_remove (&s->queue, job);
  g_ptr_array_add (job->waiters, client);
  if (!job->running)
    g_queue_push_head (&s->queue, job);
  if (g_path_is_absolute (f[4]))
    prefetch (s, f[4]);
}

static void
client_line (Service *s, Client *client, const char *line)
{
  g_auto(GStrv) f = g_strsplit (line, "\t", 5);
  guint n = g_strv_length (f);
  if (n == 5 && g_str_equal (f[0], "get"))
    get (s, client, f);
  else
    client_send (client, "error\tfailed\tthe fetch service cannot read the request\n");
}

static void
client_drop (Service *s, Client *client)
{
  GHashTableIter iter;
  Job *job;
  g_hash_table_iter_init (&iter, s->jobs);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &job))
    g_ptr_array_remove (job->waiters, client);
  g_ptr_array_remove (s->clients, client);  /* frees CLIENT */
}

/* What CLIENT sent; FALSE when it has gone. */
static gboolean
client_read (Service *s, Client *client)
{
  char buf[4096];
  ssize_t n = recv (client->fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return TRUE;
  if (n <= 0)
    return FALSE;
  g_string_append_len (client->in, buf, n);
  char *nl;
  while ((nl = memchr (client->in->str, '\n', client->in->len)) != NULL)
    {
      g_autofree char *line = g_strndup (client->in->str, nl - client->in->str);
      g_string_erase (client->in, 0, nl - client->in->str + 1);
      client_line (s, client, line);
    }
  return client->in->len <= MAX_LINE;
}

static void
accept_clients (Service *s)
{
  int fd;
  while ((fd = accept4 (s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
    {
      Client *client = g_new0 (Client, 1);
      client->fd = fd;
      client->in = g_string_new ("");
      g_ptr_array_add (s->clients, client);
      s->last_client_us = g_get_monotonic_time ();
    }
}

/* Wait for the network, a client or TIMEOUT_MS, and serve the clients. */
static void
wait_and_serve (Service *s, int timeout_ms)
{
  guint n = s->clients->len + 1;
  g_autofree struct curl_waitfd *fds = g_new0 (struct curl_waitfd, n);
  fds[0].fd = s->listen_fd;
  fds[0].events = CURL_WAIT_POLLIN;
  for (guint i = 1; i < n; i++)
    {
      fds[i].fd = ((Client *) s->clients->pdata[i - 1])->fd;
      fds[i].events = CURL_WAIT_POLLIN;
    }
  curl_multi_poll (s->multi, fds, n, timeout_ms, NULL);
  /* Clients by their descriptor: a drop reorders the array. */
  for (guint i = 1; i < n; i++)
    {
      if (fds[i].revents == 0)
        continue;
      for (guint k = 0; k < s->clients->len; k++)
        {
          Client *client = s->clients->pdata[k];
          if (client->fd == fds[i].fd && !client_read (s, client))
            client_drop (s, client);
        }
    }
  if (fds[0].revents != 0)
    accept_clients (s);
}

/* The queued prefetches, when no edge has come for a while (the build
 * was stopped): what edges wait for stays. */
static void
forget_prefetches (Service *s)
{
  for (GList *l = s->queue.head; l != NULL;)
    {
      GList *following = l->next;
      Job *job = l->data;
      if (job->waiters->len == 0)
        {
          g_queue_delete_link (&s->queue, l);
          g_hash_table_remove (s->jobs, job->key);
        }
      l = following;
    }
  g_hash_table_remove_all (s->lists);
}

/* Stop listening, unless a client is on its way in.  The start lock keeps
 * a client from starting another service meanwhile. */
static gboolean
try_stop (Service *s)
{
  util_autofd int lock = openat (s->dir_fd, FETCH_SERVICE_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock >= 0)
    (void) flock (lock, LOCK_EX);
  struct pollfd pfd = { s->listen_fd, POLLIN, 0 };
  if (poll (&pfd, 1, 0) > 0)
    return FALSE;
  struct stat st;
  if (fstatat (s->dir_fd, s->socket_name, &st, AT_SYMLINK_NOFOLLOW) == 0
      && st.st_dev == s->socket_dev && st.st_ino == s->socket_ino)
    (void) unlinkat (s->dir_fd, s->socket_name, 0);
  util_fd_close (&s->listen_fd);
  return TRUE;
}

/* TRUE when the service should end now. */
static gboolean
idle (Service *s)
{
  gint64 now = g_get_monotonic_time ();
  if (s->clients->len == 0 && now - s->last_client_us > FETCH_SERVICE_PREFETCH_SECONDS * G_USEC_PER_SEC)
    forget_prefetches (s);
  if (s->clients->len > 0 || s->running > 0 || s->queue.length > 0)
    return s->idle_since_us = 0, FALSE;
  if (s->idle_since_us == 0)
    s->idle_since_us = now;
  return now - s->idle_since_us > FETCH_SERVICE_IDLE_SECONDS * G_USEC_PER_SEC && try_stop (s);
}

static gboolean
service_listen (Service *s, gboolean *out_other, GError **error)
{
  struct sockaddr_un addr;
  gsize len = fetch_service_address (s->cache_dir, s->dir_fd, &addr);
  if (len == 0)
    return util_fail (error, "%s: the path is too long for a socket", s->cache_dir);
  s->listen_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s->listen_fd < 0)
    return util_fail (error, "socket: %s", g_strerror (errno));
  if (bind (s->listen_fd, (struct sockaddr *) &addr, len) < 0)
    {
      if (errno == EADDRINUSE)
        return *out_other = TRUE, util_fail (error, "%s/%s: another fetch service listens",
                                             s->cache_dir, s->socket_name);
      return util_fail (error, "%s/%s: %s", s->cache_dir, s->socket_name, g_strerror (errno));
    }
  struct stat st;
  if (fstatat (s->dir_fd, s->socket_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      s->socket_dev = st.st_dev;
      s->socket_ino = st.st_ino;
    }
  if (listen (s->listen_fd, 128) < 0)
    return util_fail (error, "listen: %s", g_strerror (errno));
  return TRUE;
}

static void
service_clear (Service *s)
{
  g_queue_clear (&s->queue);
  g_clear_pointer (&s->jobs, g_hash_table_unref);
  g_clear_pointer (&s->clients, g_ptr_array_unref);
  g_clear_pointer (&s->failed, g_hash_table_unref);
  g_clear_pointer (&s->lists, g_hash_table_unref);
  g_clear_pointer (&s->hosts, g_hash_table_unref);
  if (s->multi != NULL)
    curl_multi_cleanup (s->multi);
  util_fd_close (&s->listen_fd);
  util_fd_close (&s->dir_fd);
  g_free (s->cache_dir);
  g_free (s->socket_name);
}

gboolean
fetch_service_run (const char *cache_dir, gboolean *out_other, GError **error)
{
  *out_other = FALSE;
  Service s = { .listen_fd = -1, .dir_fd = -1 };
  s.cache_dir = g_canonicalize_filename (cache_dir, NULL);
  s.socket_name = fetch_service_socket_name ();
  s.jobs = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) job_free);
  s.clients = g_ptr_array_new_with_free_func ((GDestroyNotify) client_free);
  s.failed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_error_free);
  s.lists = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  s.hosts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  s.max_running = connections ();
  s.last_client_us = g_get_monotonic_time ();
  gboolean ok = FALSE;
  s.dir_fd = open (s.cache_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (s.dir_fd < 0)
    util_fail (error, "%s: %s", s.cache_dir, g_strerror (errno));
  else if ((s.multi = curl_multi_init ()) == NULL)
    util_fail (error, "cannot initialise libcurl");
  else if (service_listen (&s, out_other, error))
    {
      fetch_sweep_temporaries (s.cache_dir);
      curl_multi_setopt (s.multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long) s.max_running);
      curl_multi_setopt (s.multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long) s.max_running);
      while (!idle (&s))
        {
          /* What the clients asked for, then what finished made room for
           * (before the wait, which knows the back-offs). */
          (void) start_jobs (&s);
          int still;
          curl_multi_perform (s.multi, &still);
          collect_finished (&s);
          send_progress (&s);
          gint64 retry_us = start_jobs (&s);
          int timeout_ms = retry_us < 0 ? 250 : (int) MIN (250, retry_us / 1000 + 1);
          wait_and_serve (&s, timeout_ms);
        }
      ok = TRUE;
    }
  service_clear (&s);
  return ok;
}
