/* util.c — small helpers shared by every module. */
#define _GNU_SOURCE  /* AT_EMPTY_PATH */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <unistd.h>

#include "base/util.h"

G_DEFINE_QUARK (apt2ostree-error-quark, util_error)

gboolean
util_source_date_epoch (guint64 *out_epoch, GError **error)
{
  const char *value = g_getenv ("SOURCE_DATE_EPOCH");
  if (value == NULL || *value == '\0')
    {
      *out_epoch = 0;
      return TRUE;
    }

  guint64 epoch;
  g_autoptr(GError) local_error = NULL;
  if (!g_ascii_string_to_unsigned (value, 10, 0, G_MAXUINT64, &epoch, &local_error))
    return util_fail (error, "SOURCE_DATE_EPOCH=\"%s\" is not a number of seconds", value);
  *out_epoch = epoch;
  return TRUE;
}

GPtrArray *
util_split_tree_path (const char *path, GError **error)
{
  g_autoptr(GPtrArray) components = g_ptr_array_new_with_free_func (g_free);
  g_auto(GStrv) parts = g_strsplit (path, "/", -1);

  for (char **p = parts; *p != NULL; p++)
    {
      if (**p == '\0' || g_str_equal (*p, "."))
        continue;
      if (g_str_equal (*p, ".."))
        {
          g_set_error (error, UTIL_ERROR, 0,
                       "path \"%s\": \"..\" is not allowed in a path inside a tree", path);
          return NULL;
        }
      g_ptr_array_add (components, g_strdup (*p));
    }
  return g_steal_pointer (&components);
}

char *
util_join_tree_path (GPtrArray *components, guint n)
{
  GString *s = g_string_new ("");
  for (guint i = 0; i < n && i < components->len; i++)
    {
      g_string_append_c (s, '/');
      g_string_append (s, components->pdata[i]);
    }
  if (s->len == 0)
    g_string_append_c (s, '/');
  return g_string_free (s, FALSE);
}

const char *
util_tree_path_problem (const char *path)
{
  if (strchr (path, '\n') != NULL)
    return "contains a newline, which dpkg refuses (a .list file holds one path a line)";
  if (!g_utf8_validate (path, -1, NULL))
    return "is not valid UTF-8, which OSTree cannot store";
  const char *rest = path;
  while (*rest == '/' || (rest[0] == '.' && rest[1] == '/'))
    rest++;
  if (1 + strlen (rest) >= PATH_MAX)
    return "is longer than 4095 bytes (PATH_MAX), which dpkg cannot install";
  for (const char *c = rest; *c != '\0';)
    {
      size_t len = strcspn (c, "/");
      if (len > NAME_MAX)
        return "has a component longer than 255 bytes (NAME_MAX), which no file system holds";
      if (len == 2 && c[0] == '.' && c[1] == '.')
        return "climbs out of the tree with \"..\"";
      c += len;
      c += strspn (c, "/");
    }
  return NULL;
}

char *
util_shown_path (const char *path)
{
  GString *out = g_string_new ("");
  for (const char *p = path; *p != '\0';)
    {
      if (out->len >= 200)
        {
          g_string_append (out, "...");
          break;
        }
      gunichar c = g_utf8_get_char_validated (p, -1);
      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          g_string_append_printf (out, "\\x%02x", (guint8) *p);
          p++;
          continue;
        }
      const char *next = g_utf8_next_char (p);
      if (c == '\n')
        g_string_append (out, "\\n");
      else if (c == '\\')
        g_string_append (out, "\\\\");
      else if (c < 0x20 || c == 0x7f)
        g_string_append_printf (out, "\\x%02x", (guint) c);
      else
        g_string_append_len (out, p, next - p);
      p = next;
    }
  return g_string_free (out, FALSE);
}

gint
util_compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

GPtrArray *
util_sorted_keys (GHashTable *table)
{
  GPtrArray *keys = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer key;
  g_hash_table_iter_init (&iter, table);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (keys, key);
  g_ptr_array_sort (keys, util_compare_strings);
  return keys;
}

/* Set XATTRS on FD, or when LINK is not NULL on that path itself (not
 * following a symlink). */
static gboolean
set_xattrs (int fd, const char *link, GVariant *xattrs, const char *path, GError **error)
{
  gsize n = g_variant_n_children (xattrs);
  for (gsize i = 0; i < n; i++)
    {
      const char *name;
      g_autoptr(GVariant) value = NULL;
      g_variant_get_child (xattrs, i, "(^&ay@ay)", &name, &value);
      gsize len;
      const guint8 *data = g_variant_get_fixed_array (value, &len, 1);
      int r = link != NULL ? lsetxattr (link, name, data, len, 0)
                           : fsetxattr (fd, name, data, len, 0);
      if (r < 0)
        {
          int errsv = errno;
          util_fail (error, "%s: cannot set %s: %s", path, name, g_strerror (errsv));
          errno = errsv;
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
util_fd_set_xattrs (int fd, GVariant *xattrs, const char *path, GError **error)
{
  return set_xattrs (fd, NULL, xattrs, path, error);
}

gboolean
util_path_set_xattrs (const char *link, GVariant *xattrs, const char *path, GError **error)
{
  return set_xattrs (-1, link, xattrs, path, error);
}

int
util_link_tmpfile (int fd, int dfd, const char *path, gboolean *by_fd)
{
  char proc[32];
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
  if (!*by_fd)
    return linkat (AT_FDCWD, proc, dfd, path, AT_SYMLINK_FOLLOW);
  if (linkat (fd, "", dfd, path, AT_EMPTY_PATH) == 0)
    return 0;
  int errsv = errno;
  if (errsv != ENOENT && errsv != EPERM && errsv != EACCES && errsv != EINVAL)
    return -1;
  /* Not allowed, or PATH's directory is missing: /proc tells which. */
  int r = linkat (AT_FDCWD, proc, dfd, path, AT_SYMLINK_FOLLOW);
  if (r == 0 || errno == EEXIST)
    *by_fd = FALSE;
  return r;
}

void
util_fd_close (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

/* The whole file FD, opened as PATH (-1: errno says why it could not be). */
static GBytes *
read_whole (int fd, const char *path, gsize max, GError **error)
{
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno)), NULL;
  if (!S_ISREG (st.st_mode) || (guint64) st.st_size > max)
    return util_fail (error, "%s: not a regular file of at most %" G_GSIZE_FORMAT " bytes", path,
                      max), NULL;
  gsize size = st.st_size;
  g_autofree guint8 *data = g_malloc (MAX (size, 1));
  gsize done = 0;
  while (done < size)
    {
      ssize_t n = read (fd, data + done, size - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return util_fail (error, "%s: cannot read: %s", path,
                          g_strerror (n < 0 ? errno : EIO)), NULL;
      done += n;
    }
  return g_bytes_new_take (g_steal_pointer (&data), size);
}

GBytes *
util_read_at (int dfd, const char *path, gsize max, GError **error)
{
  util_autofd int fd = openat (dfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  return read_whole (fd, path, max, error);
}

GBytes *
util_read_file (const char *path, gsize max, GError **error)
{
  util_autofd int fd = open (path, O_RDONLY | O_CLOEXEC);
  return read_whole (fd, path, max, error);
}

gboolean
util_fail (GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, UTIL_ERROR, 0, message);
  return FALSE;
}

gboolean
util_fail_code (GError **error, GQuark domain, int code, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, domain, code, message);
  return FALSE;
}

char *
util_uuid_from_hex (const char *hex, char version)
{
  char u[33];
  memcpy (u, hex, 32);
  u[32] = '\0';
  u[12] = version;
  u[16] = "89ab"[g_ascii_xdigit_value (u[16]) & 3];
  return g_strdup_printf ("%.8s-%.4s-%.4s-%.4s-%.12s", u, u + 8, u + 12, u + 16, u + 20);
}

gboolean
util_env_flag (const char *name)
{
  const char *v = g_getenv (name);
  return v != NULL && *v != '\0' && strcmp (v, "0") != 0;
}
