/* cache.c — the download cache (CACHE_DIR/SHA256) and the checks a .deb
 * gets before anything is written, with GLib alone. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apt/cache.h"
#include "base/sha256.h"
#include "base/util.h"

gboolean
cache_is_sha256 (const char *s)
{
  if (s == NULL || strlen (s) != 64)
    return FALSE;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isxdigit (*p))
      return FALSE;
  return TRUE;
}

gboolean
cache_is_url (const char *s)
{
  return g_str_has_prefix (s, "http://") || g_str_has_prefix (s, "https://")
         || g_str_has_prefix (s, "file://");
}

char *
cache_sha256_file (const char *path, GError **error)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      util_fail (error, "%s: %s", path, g_strerror (errno));
      return NULL;
    }
  g_autoptr(Sha256) sha256 = sha256_new ();
  g_autofree guchar *buf = g_malloc (256 * 1024);
  for (;;)
    {
      ssize_t n = read (fd, buf, 256 * 1024);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int errsv = errno;
          close (fd);
          util_fail (error, "%s: cannot read: %s", path, g_strerror (errsv));
          return NULL;
        }
      if (n == 0)
        break;
      sha256_update (sha256, buf, n);
    }
  close (fd);
  return sha256_finish_hex (sha256);
}

/* Does the cached file PATH hold SIZE bytes (when >= 0) with this SHA256? */
gboolean
cache_is_valid (const char *path, const char *sha256, gint64 size)
{
  struct stat st;
  if (stat (path, &st) < 0 || !S_ISREG (st.st_mode))
    return FALSE;
  if (size >= 0 && st.st_size != size)
    return FALSE;
  g_autofree char *actual = cache_sha256_file (path, NULL);
  return actual != NULL && g_ascii_strcasecmp (actual, sha256) == 0;
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

char *
cache_progress_line (const char *label, guint64 done, gint64 total, double seconds)
{
  double rate = done / MAX (seconds, 0.001);
  g_autofree char *done_text = g_format_size (done);
  g_autofree char *speed = g_format_size ((guint64) rate);
  if (total <= 0 || (guint64) total < done)
    return g_strdup_printf ("%s: %s, %s/s", label, done_text, speed);
  g_autofree char *of = g_format_size (total);
  g_autofree char *left = progress_duration ((total - done) / MAX (rate, 1.0));
  return g_strdup_printf ("%d%% %s: %s of %s, %s/s, %s left", (int) (100 * done / total), label,
                          done_text, of, speed, left);
}

char *
cache_url_label (const char *url)
{
  const char *slash = strrchr (url, '/');
  const char *name = slash != NULL && slash[1] != '\0' ? slash + 1 : url;
  if (!g_utf8_validate (name, -1, NULL) || g_utf8_strlen (name, -1) <= 30)
    return g_strdup (name);
  g_autofree char *head = g_utf8_substring (name, 0, 29);
  return g_strconcat (head, "…", NULL);
}
