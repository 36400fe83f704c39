/* fsimage.c — squashfs and ext4 images of a tree; see fsimage.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/scratch.h"
#include "base/tool.h"
#include "base/util.h"
#include "store/fsimage.h"
#include "store/repo.h"

gboolean
fsimage_parse_size (const char *text, guint64 *out, GError **error)
{
  char *end = NULL;
  guint64 n = g_ascii_strtoull (text, &end, 10);
  guint shift = 0;
  if (end != text && end != NULL && *end != '\0' && end[1] == '\0')
    shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : *end == 'T' ? 40 : 99;
  else if (end == text || end == NULL || *end != '\0')
    shift = 99;
  if (shift == 99 || n == 0 || n > (G_MAXUINT64 >> shift))
    return util_fail (error, "--size \"%s\": expected a size such as 512M, 2G or a number of bytes",
                      text);
  *out = n << shift;
  return TRUE;
}

/* --- the checkout -------------------------------------------------------- */

/* Call FN on PATH and, for a directory, on everything under it first
 * (children before their directory); stops at the first FALSE. */
typedef gboolean (*WalkFunc) (const char *path, const struct stat *st, gpointer data);

static gboolean
walk_tree (const char *path, WalkFunc fn, gpointer data)
{
  struct stat st;
  if (lstat (path, &st) != 0)
    return FALSE;
  if (S_ISDIR (st.st_mode))
    {
      g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
      if (dir == NULL)
        return FALSE;
      for (const char *name; (name = g_dir_read_name (dir)) != NULL;)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          if (!walk_tree (child, fn, data))
            return FALSE;
        }
    }
  return fn (path, &st, data);
}

static gboolean
set_time (const char *path, const struct stat *st, gpointer data)
{
  const struct timespec *times = data;
  return utimensat (AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW) == 0;
}

typedef struct {
  guint64 bytes, inodes;
} TreeSize;

static gboolean
add_size (const char *path, const struct stat *st, gpointer data)
{
  TreeSize *size = data;
  size->bytes += ((guint64) st->st_size + 4095) / 4096 * 4096;
  size->inodes++;
  return TRUE;
}

/* COMMIT as real files (copies, real owners) in DIR, every time TIMESTAMP. */
static gboolean
checkout_copy (OstreeRepo *repo, const char *commit, const char *dir, gint64 timestamp,
               GCancellable *cancellable, GError **error)
{
  if (getuid () != 0)
    return util_fail (error, "a file system image keeps the files' owners and capabilities, "
                      "which needs root: run as root");
  OstreeRepoCheckoutAtOptions options = { 0, };
  options.mode = OSTREE_REPO_CHECKOUT_MODE_NONE;
  options.overwrite_mode = OSTREE_REPO_CHECKOUT_OVERWRITE_UNION_FILES;
  options.force_copy = TRUE;
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_checkout_at (repo, &options, AT_FDCWD, dir, commit, cancellable, &local_error))
    return util_fail (error, "checking out %s: %s", commit, local_error->message);
  struct timespec times[2] = { { .tv_sec = timestamp }, { .tv_sec = timestamp } };
  if (!walk_tree (dir, set_time, times))
    return util_fail (error, "%s: setting times: %s", dir, g_strerror (errno));
  return TRUE;
}

/* --- the tools ----------------------------------------------------------- */

const char *const *
fsimage_compressions (void)
{
  static const char *const names[] = { "gzip", "zstd", "xz", NULL };
  return names;
}

static gboolean
make_squashfs (const char *dir, const char *out, gint64 timestamp, const char *compression,
               GError **error)
{
  g_autofree char *t = g_strdup_printf ("%" G_GINT64_FORMAT, timestamp);
  const char *argv[] = { "mksquashfs", dir, out, "-noappend", "-quiet", "-no-progress", "-xattrs",
                         "-mkfs-time", t, "-all-time", t,
                         "-comp", compression != NULL ? compression : "gzip", NULL };
  /* The times are given on the command line, which mksquashfs refuses
   * together with SOURCE_DATE_EPOCH. */
  const char *env[] = { "SOURCE_DATE_EPOCH=", NULL };
  return tool_run (argv, env, NULL, "squashfs-tools", NULL, NULL, error);
}

/* Every inode in use (the root, lost+found and what -d made, numbered from
 * the first non-reserved one) gets TIMESTAMP as its access, change,
 * creation and modification time (e2fsprogs 1.47.2 under faketime writes
 * modification times of its own). */
static gboolean
fix_inode_times (const char *image, const char *frozen, gint64 timestamp, const char *const *env,
                 GError **error)
{
  g_autofree char *header = NULL;
  const char *dumpe2fs[] = { "dumpe2fs", "-h", image, NULL };
  if (!tool_run (dumpe2fs, env, NULL, "e2fsprogs", NULL, &header, error))
    return FALSE;
  guint64 count = 0, free_inodes = 0, first = 11;
  g_auto(GStrv) lines = g_strsplit (header, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      const char *colon = strchr (*l, ':');
      guint64 value = colon != NULL ? g_ascii_strtoull (colon + 1, NULL, 10) : 0;
      if (g_str_has_prefix (*l, "Inode count:"))
        count = value;
      else if (g_str_has_prefix (*l, "Free inodes:"))
        free_inodes = value;
      else if (g_str_has_prefix (*l, "First inode:"))
        first = value;
    }
  if (count == 0 || count - free_inodes < first - 1)
    return util_fail (error, "%s: cannot read its inode counts", image);
  guint64 last = count - free_inodes;   /* used inodes are 1 .. LAST, in order */
  g_autoptr(GString) script = g_string_new ("");
  static const char *const fields[] = { "atime", "ctime", "crtime", "mtime" };
  for (guint64 ino = 2; ino <= last; ino++)
    if (ino == 2 || ino >= first)
      for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
        g_string_append_printf (script, "sif <%" G_GUINT64_FORMAT "> %s @%" G_GINT64_FORMAT "\n",
                                ino, fields[i], timestamp);
  g_autofree char *script_path = g_strconcat (image, ".debugfs", NULL);
  g_autoptr(GError) local_error = NULL;
  if (!g_file_set_contents (script_path, script->str, script->len, &local_error))
    return util_fail (error, "%s: %s", script_path, local_error->message);
  const char *debugfs[] = { "faketime", "-f", frozen, "debugfs", "-w", "-f", script_path, image,
                            NULL };
  gboolean ok = tool_run (debugfs, env, NULL, "faketime", NULL, NULL, error);
  (void) unlink (script_path);
  return ok;
}

static gboolean
make_ext4 (const char *dir, const char *out, const char *commit, gint64 timestamp, guint64 size,
           GError **error)
{
  if (size == 0)
    {
      TreeSize tree = { 0 };
      if (!walk_tree (dir, add_size, &tree))
        return util_fail (error, "%s: %s", dir, g_strerror (errno));
      size = tree.bytes + tree.bytes / 4 + tree.inodes * 512 + 32 * 1024 * 1024;
      size = (size + 1024 * 1024 - 1) / (1024 * 1024) * (1024 * 1024);
    }
  int fd = open (out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || ftruncate (fd, (off_t) size) != 0)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      return util_fail (error, "%s: %s", out, g_strerror (saved));
    }
  close (fd);
  /* Its UUID and hash seed from the commit checksum. */
  g_autofree char *uuid = util_uuid_from_hex (commit, '4');
  g_autofree char *hash_seed = util_uuid_from_hex (commit + 32, '4');
  g_autofree char *extended = g_strdup_printf ("hash_seed=%s,root_owner=0:0,lazy_itable_init=0,"
                                               "nodiscard", hash_seed);
  /* e2fsprogs before 1.47.1 reads the clock for the superblock and the
   * inodes it makes: faketime stops it at the commit's time (-f: an
   * absolute date in that format is a stopped clock; without -f the
   * wrapper starts a running clock there).  The times it
   * copies from the checkout (whose ctime and atime are now) are set after,
   * inode by inode, by debugfs under the same clock. */
  g_autoptr(GDateTime) t = g_date_time_new_from_unix_utc (timestamp);
  g_autofree char *frozen = g_date_time_format (t, "%Y-%m-%d %H:%M:%S");
  g_autofree char *epoch = g_strdup_printf ("SOURCE_DATE_EPOCH=%" G_GINT64_FORMAT, timestamp);
  const char *env[] = { "TZ=UTC", epoch, NULL };
  const char *mkfs[] = { "faketime", "-f", frozen, "mkfs.ext4", "-q", "-F", "-b", "4096", "-I", "256",
                         "-U", uuid, "-E", extended, "-d", dir, out, NULL };
  if (!tool_run (mkfs, env, NULL, "faketime", NULL, NULL, error))
    return FALSE;
  return fix_inode_times (out, frozen, timestamp, env, error);
}

gboolean
fsimage_write_commit (OstreeRepo *repo, const char *commit, FsimageKind kind, const char *dest,
                      const FsimageOptions *opts, GCancellable *cancellable, GError **error)
{
  gint64 timestamp;
  if (!repo_commit_timestamp (repo, commit, &timestamp, error))
    return FALSE;

  g_autofree char *work = scratch_beside (dest, "image", error);
  if (work == NULL)
    return FALSE;
  g_autofree char *root = g_build_filename (work, "root", NULL);
  g_autofree char *tmp = g_build_filename (work, "image", NULL);
  gboolean ok = checkout_copy (repo, commit, root, timestamp, cancellable, error);
  if (ok && kind == FSIMAGE_SQUASHFS)
    ok = make_squashfs (root, tmp, timestamp, opts->compression, error);
  else if (ok)
    ok = make_ext4 (root, tmp, commit, timestamp, opts->size, error);
  if (ok && rename (tmp, dest) != 0)
    ok = util_fail (error, "%s: %s", dest, g_strerror (errno));
  (void) scratch_rm_rf (work, NULL);
  return ok;
}
