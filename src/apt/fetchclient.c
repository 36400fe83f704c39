/* fetchclient.c — an unpack edge's side of the fetch service: connect
 * (starting the service when there is none), ask, wait, check. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "apt/cache.h"
#include "apt/fetchclient.h"
#include "apt/sources.h"
#include "base/progress.h"
#include "base/util.h"

/* How long a new service may take to listen, and how often a client starts
 * over when the service it reached went away (it was exiting, idle). */
#define START_WAIT_US (5 * G_USEC_PER_SEC)
#define ATTEMPTS 3

G_DEFINE_QUARK (apt2ostree-fetch-client-error-quark, fetch_client_error)

#define unavailable(error, ...) \
  util_fail_code ((error), FETCH_CLIENT_ERROR, FETCH_CLIENT_ERROR_UNAVAILABLE, __VA_ARGS__)

gboolean
fetch_client_serves (const char *url)
{
  if (!g_str_has_prefix (url, "http://") && !g_str_has_prefix (url, "https://"))
    return FALSE;
  return g_strcmp0 (g_getenv ("APT2OSTREE_FETCH_SERVICE"), "0") != 0;
}

/* One file of the apt configuration into CHECKSUM: its path, size, mtime
 * and inode (an edit, a new file or a removed one changes the sum). */
static void
checksum_conf_file (GChecksum *checksum, const char *path)
{
  struct stat st;
  g_autofree char *entry = NULL;
  if (stat (path, &st) == 0)
    entry = g_strdup_printf ("%s=%lld.%09ld:%lld:%llu", path, (long long) st.st_mtim.tv_sec,
                             st.st_mtim.tv_nsec, (long long) st.st_size,
                             (unsigned long long) st.st_ino);
  else
    entry = g_strdup_printf ("%s!", path);
  g_checksum_update (checksum, (const guchar *) entry, strlen (entry) + 1);
}

/* The files of the host's apt configuration (apt/aptconf.h: $APT_CONFIG,
 * apt.conf.d's, apt.conf; not the files they #include) as they are now,
 * into CHECKSUM: a few stat() calls, no parsing. */
static void
checksum_apt_conf (GChecksum *checksum)
{
  const char *apt_config = g_getenv ("APT_CONFIG");
  if (apt_config != NULL && *apt_config != '\0')
    checksum_conf_file (checksum, apt_config);
  g_autofree char *etc = sources_host_etc_dir ();
  g_autofree char *parts = g_build_filename (etc, "apt.conf.d", NULL);
  g_autoptr(GDir) dir = g_dir_open (parts, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    g_ptr_array_add (names, g_build_filename (parts, name, NULL));
  g_ptr_array_sort (names, util_compare_strings);
  for (guint i = 0; i < names->len; i++)
    checksum_conf_file (checksum, names->pdata[i]);
  g_autofree char *main_file = g_build_filename (etc, "apt.conf", NULL);
  checksum_conf_file (checksum, main_file);
}

char *
fetch_service_socket_name (void)
{
  static const char *const variables[] = {
    "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
    "no_proxy", "NO_PROXY", "APT2OSTREE_APT_ROOT", "APT_CONFIG", "APT2OSTREE_FETCH_TIMEOUT",
    "APT2OSTREE_DOWNLOAD_CONNECTIONS", NULL
  };
  g_autoptr(GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  for (const char *const *v = variables; *v != NULL; v++)
    {
      const char *value = g_getenv (*v);
      g_autofree char *entry = g_strdup_printf ("%s%c%s%c", *v, value != NULL ? '=' : '!',
                                                value != NULL ? value : "", '\0');
      g_checksum_update (checksum, (const guchar *) entry, strlen (entry) + 1);
    }
  checksum_apt_conf (checksum);
  return g_strdup_printf (".fetch-service-%.12s.sock", g_checksum_get_string (checksum));
}

gsize
fetch_service_address (const char *dir, int dir_fd, void *out)
{
  struct sockaddr_un *addr = out;
  memset (addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  g_autofree char *name = fetch_service_socket_name ();
  g_autofree char *path = g_build_filename (dir, name, NULL);
  if (strlen (path) >= sizeof addr->sun_path)
    {
      g_free (path);
      path = g_strdup_printf ("/proc/self/fd/%d/%s", dir_fd, name);
    }
  if (strlen (path) >= sizeof addr->sun_path)
    return 0;
  strcpy (addr->sun_path, path);
  return sizeof *addr;
}

/* A connection to the service of CACHE_DIR, or -1 (errno set). */
static int
service_connect (const char *cache_dir, int dir_fd)
{
  struct sockaddr_un addr;
  gsize len = fetch_service_address (cache_dir, dir_fd, &addr);
  if (len == 0)
    return errno = ENAMETOOLONG, -1;
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  if (connect (fd, (struct sockaddr *) &addr, len) < 0)
    {
      int errsv = errno;
      close (fd);
      return errno = errsv, -1;
    }
  return fd;
}

/* This program, run as "fetch-service" in the background: its own session
 * (out of the build's process group, so Ctrl-C in ninja reaches the edges,
 * which let go of their downloads), no descriptor of the edge's (ninja
 * waits for its pipes to close). */
static gboolean
service_spawn (const char *cache_dir, GError **error)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  if (self == NULL)
    return unavailable (error, "cannot find this program (/proc/self/exe)");
  const char *argv[] = { self, "fetch-service", "--cache", cache_dir, NULL };
  /* Not a step of the build, which would wait for its end on its terminal. */
  g_auto(GStrv) envp = g_environ_unsetenv (g_get_environ (), PROGRESS_ENV);
  g_autoptr(GError) local_error = NULL;
  if (!g_spawn_async (NULL, (char **) argv, envp,
                      G_SPAWN_STDIN_FROM_DEV_NULL | G_SPAWN_STDOUT_TO_DEV_NULL
                      | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, &local_error))
    return unavailable (error, "cannot start the fetch service: %s", local_error->message);
  return TRUE;
}

/* A connection to CACHE_DIR's service, started when it does not answer.
 * Clients that find none take the start lock in turn, so one starts it and
 * the others find it listening. */
static int
service_open (const char *cache_dir, int dir_fd, GError **error)
{
  int fd = service_connect (cache_dir, dir_fd);
  if (fd >= 0)
    return fd;

  g_autofree char *lock_path = g_build_filename (cache_dir, FETCH_SERVICE_LOCK, NULL);
  util_autofd int lock = open (lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0 || flock (lock, LOCK_EX) < 0)
    return unavailable (error, "%s: %s", lock_path, g_strerror (errno)), -1;
  fd = service_connect (cache_dir, dir_fd);
  if (fd >= 0)
    return fd;
  /* No service: a socket left by one that was killed goes. */
  g_autofree char *name = fetch_service_socket_name ();
  g_autofree char *socket_path = g_build_filename (cache_dir, name, NULL);
  (void) unlink (socket_path);
  if (!service_spawn (cache_dir, error))
    return -1;
  for (gint64 deadline = g_get_monotonic_time () + START_WAIT_US;
       g_get_monotonic_time () < deadline; g_usleep (5000))
    {
      fd = service_connect (cache_dir, dir_fd);
      if (fd >= 0)
        return fd;
    }
  return unavailable (error, "the fetch service did not start (see %s/%s)", cache_dir,
                      FETCH_SERVICE_LOG), -1;
}

static gboolean
send_line (int fd, const char *line)
{
  gsize len = strlen (line);
  for (gsize done = 0; done < len;)
    {
      ssize_t n = send (fd, line + done, len - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      done += n;
    }
  return TRUE;
}

/* The next line from FD (without its newline), buffered in BUF; NULL at
 * the end or on an error. */
static char *
read_line (int fd, GString *buf)
{
  for (;;)
    {
      const char *nl = memchr (buf->str, '\n', buf->len);
      if (nl != NULL)
        {
          char *line = g_strndup (buf->str, nl - buf->str);
          g_string_erase (buf, 0, nl - buf->str + 1);
          return line;
        }
      char chunk[4096];
      ssize_t n = read (fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return NULL;
      g_string_append_len (buf, chunk, n);
    }
}

/* A "progress DONE TOTAL" line drawn on a terminal's line (*DRAWN set),
 * as fetch.c draws its own downloads', and said to the build that runs
 * this step (progress.h). */
static void
draw_progress (const char *line, const char *label, gint64 start_us, gboolean terminal,
               gboolean *drawn)
{
  g_auto(GStrv) f = g_strsplit (line, "\t", 3);
  gint64 done, total;
  if (g_strv_length (f) != 3 || !g_ascii_string_to_signed (f[1], 10, 0, G_MAXINT64, &done, NULL)
      || !g_ascii_string_to_signed (f[2], 10, -1, G_MAXINT64, &total, NULL))
    return;
  double seconds = (g_get_monotonic_time () - start_us) / 1e6;
  g_autofree char *text = cache_progress_line (label, done, total, seconds);
  progress_say ("%s", text);
  if (!terminal)
    return;
  fprintf (stderr, "\r\033[K%s", text);
  *drawn = TRUE;
}

/* The service's answer: TRUE for "ok"; an error for "error"; with
 * *OUT_GONE when the service went before it answered.  Its notes go to
 * standard error, its progress too when that is a terminal. */
static gboolean
read_answer (int fd, const char *label, gboolean *out_gone, GError **error)
{
  g_autoptr(GString) buf = g_string_new ("");
  gboolean terminal = isatty (STDERR_FILENO), drawn = FALSE;
  gint64 start_us = g_get_monotonic_time ();
  for (;;)
    {
      g_autofree char *line = read_line (fd, buf);
      if (line != NULL && g_str_has_prefix (line, "progress\t"))
        {
          if (terminal || progress_active ())
            draw_progress (line, label, start_us, terminal, &drawn);
          continue;
        }
      if (drawn)
        fputs ("\r\033[K", stderr);
      drawn = FALSE;
      if (line == NULL)
        return *out_gone = TRUE, FALSE;
      if (g_str_equal (line, "ok"))
        return TRUE;
      if (g_str_has_prefix (line, "note\t"))
        {
          fprintf (stderr, "%s\n", line + strlen ("note\t"));
          continue;
        }
      g_auto(GStrv) fields = g_strsplit (line, "\t", 3);
      if (g_strv_length (fields) != 3 || !g_str_equal (fields[0], "error"))
        return util_fail (error, "the fetch service answered \"%s\"", line);
      int code = g_str_equal (fields[1], "notfound") ? UTIL_ERROR_NOT_FOUND
                 : g_str_equal (fields[1], "mismatch") ? UTIL_ERROR_MISMATCH : 0;
      return util_fail_code (error, UTIL_ERROR, code, "%s", fields[2]);
    }
}

/* Nothing the service reads may hold its separators. */
static gboolean
field_ok (const char *s)
{
  for (const char *p = s; *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      return FALSE;
  return TRUE;
}


static char *
absolute (const char *path)
{
  return g_canonicalize_filename (path, NULL);
}

char *
fetch_client_list_path (const char *cache_dir, const char *ninja_path)
{
  /* Named by the file's absolute path: two builds' files of one name in
   * one build directory get a list each. */
  g_autofree char *absolute_path = absolute (ninja_path);
  g_autofree char *hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256, absolute_path, -1);
  g_autofree char *base = g_path_get_basename (ninja_path);
  g_autofree char *name = g_strdup_printf ("%s-%.16s", base, hash);
  return g_build_filename (cache_dir, FETCH_SERVICE_LISTS, name, NULL);
}

char *
fetch_client_get (const char *cache_dir, const char *url, const char *sha256, gint64 size,
                  const char *repo, GError **error)
{
  if (!fetch_client_serves (url) || sha256 == NULL || !cache_is_sha256 (sha256))
    return unavailable (error, "not a download the service makes"), NULL;
  if (!field_ok (url) || !field_ok (cache_dir) || !field_ok (repo))
    return unavailable (error, "a control character in a URL or path"), NULL;
  if (g_mkdir_with_parents (cache_dir, 0755) < 0)
    return util_fail (error, "%s: cannot create the cache directory: %s", cache_dir,
                      g_strerror (errno)), NULL;
  g_autofree char *dir = absolute (cache_dir);
  util_autofd int dir_fd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0)
    return util_fail (error, "%s: %s", dir, g_strerror (errno)), NULL;

  /* What the cache holds already needs no service; a damaged file under
   * the name must go before the service looks. */
  g_autofree char *want = g_ascii_strdown (sha256, -1);
  g_autofree char *path = g_build_filename (cache_dir, want, NULL);
  if (cache_is_valid (path, want, size))
    return g_steal_pointer (&path);
  (void) unlink (path);

  g_autofree char *repo_dir = absolute (repo);
  g_autofree char *request = g_strdup_printf ("get\t%s\t%" G_GINT64_FORMAT "\t%s\t%s\n", want,
                                              size, url, repo_dir);

  g_autofree char *label = cache_url_label (url);
  for (int attempt = 1; attempt <= ATTEMPTS; attempt++)
    {
      util_autofd int fd = service_open (dir, dir_fd, error);
      if (fd < 0)
        return NULL;
      gboolean gone = FALSE;
      if (!send_line (fd, request))
        continue;
      if (!read_answer (fd, label, &gone, error))
        {
          if (gone)
            continue;
          return NULL;
        }
      if (!cache_is_valid (path, want, size))
        return util_fail (error, "%s: the fetch service's download %s is not the .deb locked "
                          "(sha256 %s)", url, path, want), NULL;
      return g_steal_pointer (&path);
    }
  return unavailable (error, "the fetch service went away %d times", ATTEMPTS), NULL;
}
