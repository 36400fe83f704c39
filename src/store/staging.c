/* staging.c — the staging directory of the open transaction, emptied
 * into objects/ without being deleted, and the writer that makes the
 * transaction's objects.
 *
 * libostree writes a transaction's new objects into tmp/staging-BOOTID-XXXXXX/XX/
 * and, at ostree_repo_commit_transaction(), renames them into objects/XX/ and
 * deletes the staging directory with its up to 256 XX directories.  The next
 * transaction makes them all again.  Deleting is not free: on ext4 without
 * a journal every inode allocation steps over the inodes deleted in the last
 * minute, one by one, so a build of many small transactions (one per
 * package) slows down as it goes.  An aborted transaction, on the other
 * hand, leaves its staging directory for the next transaction of the same
 * boot to reuse (that is how libostree resumes pulls).  So the caller moves
 * the objects itself, then aborts: the staging directory stays, its XX
 * directories empty and ready.
 *
 * The staging directory is found as the directory under tmp/ named
 * staging-* that this process holds open (libostree keeps it open for the
 * whole transaction).  Anything in it other than XX/OBJECT files (and the
 * writer's own files, which it moves itself) is a layout this code does not
 * know: the caller then lets libostree commit the rest as usual.
 *
 * In a bare or bare-user repository the objects are made by the writer
 * (writer.c) instead of libostree; this module sets it up for a libostree
 * transaction. */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/staging.h"
#include "base/util.h"

#define STAGING_PREFIX "staging-"

static void
close_dir (DIR *dir)
{
  if (dir != NULL)
    closedir (dir);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DIR, close_dir)

/* Is FD, an open file descriptor of this process, the directory
 * TMP_DFD/staging-*?  Compared by device and inode, not by path. */
static gboolean
is_staging_fd (int tmp_dfd, int fd)
{
  char link[64];
  g_snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
  char target[PATH_MAX];
  ssize_t n = readlink (link, target, sizeof target - 1);
  if (n < 0)
    return FALSE;
  target[n] = '\0';
  const char *name = strrchr (target, '/');
  if (name == NULL || !g_str_has_prefix (name + 1, STAGING_PREFIX))
    return FALSE;

  struct stat by_fd, by_name;
  if (fstat (fd, &by_fd) < 0 || !S_ISDIR (by_fd.st_mode))
    return FALSE;
  if (fstatat (tmp_dfd, name + 1, &by_name, AT_SYMLINK_NOFOLLOW) < 0)
    return FALSE;
  return by_fd.st_dev == by_name.st_dev && by_fd.st_ino == by_name.st_ino;
}

int
staging_open (OstreeRepo *repo)
{
  util_autofd int tmp_dfd = openat (ostree_repo_get_dfd (repo), "tmp",
                                    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (tmp_dfd < 0)
    return -1;
  g_autoptr(DIR) fds = opendir ("/proc/self/fd");
  if (fds == NULL)
    return -1;
  int found = -1;
  struct dirent *de;
  while ((de = readdir (fds)) != NULL)
    {
      char *end;
      long fd = strtol (de->d_name, &end, 10);
      if (*end != '\0' || fd < 0 || fd == dirfd (fds) || fd == tmp_dfd)
        continue;
      if (!is_staging_fd (tmp_dfd, fd))
        continue;
      if (found >= 0)
        return -1; /* two: not the layout this code knows */
      found = fd;
    }
  if (found < 0)
    return -1;
  return fcntl (found, F_DUPFD_CLOEXEC, 3);
}

/* Is NAME one of the two-hex-digit directories objects live in? */
static gboolean
is_object_dir_name (const char *name)
{
  return g_ascii_isxdigit (name[0]) && g_ascii_isxdigit (name[1]) && name[2] == '\0'
         && !g_ascii_isupper (name[0]) && !g_ascii_isupper (name[1]);
}

/* Make the XX directory of the object path PATH ("XX/REST.TYPE") under
 * DFD; it may be there already. */
static gboolean
make_object_dir (int dfd, const char *path)
{
  char dir[3] = { path[0], path[1], '\0' };
  return mkdirat (dfd, dir, 0777) == 0 || errno == EEXIST;
}

/* Rename FROM (under FROM_DFD) to the object path PATH under OBJECTS_DFD,
 * making its XX directory when it is missing: 0, or -1 with errno set. */
static int
rename_object (int from_dfd, const char *from, int objects_dfd, const char *path)
{
  if (renameat (from_dfd, from, objects_dfd, path) == 0)
    return 0;
  if (errno != ENOENT || !make_object_dir (objects_dfd, path))
    return -1;
  return renameat (from_dfd, from, objects_dfd, path);
}

/* Move the objects of the staging directory XX into objects/XX/: the
 * commits only with COMMITS, the rest only without. */
static gboolean
move_dir (int objects_dfd, int stage_dfd, const char *xx, gboolean commits, GError **error)
{
  int dfd = openat (stage_dfd, xx, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  g_autoptr(DIR) dir = dfd >= 0 ? fdopendir (dfd) : NULL;
  if (dir == NULL)
    {
      int errsv = errno;
      if (dfd >= 0)
        close (dfd);
      return util_fail (error, "staging directory %s: %s", xx, g_strerror (errsv));
    }

  struct dirent *de;
  while ((de = readdir (dir)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0
          || g_str_has_suffix (de->d_name, ".commit") != commits)
        continue;
      g_autofree char *dest = g_strconcat (xx, "/", de->d_name, NULL);
      if (rename_object (dirfd (dir), de->d_name, objects_dfd, dest) < 0)
        return util_fail (error, "moving object %s%s into objects/: %s", xx, de->d_name,
                          g_strerror (errno));
    }
  return TRUE;
}

/* A directory stream over a duplicate of DFD, read from the start. */
static DIR *
open_dup (int dfd)
{
  int dup = fcntl (dfd, F_DUPFD_CLOEXEC, 3);
  if (dup < 0)
    return NULL;
  DIR *dir = fdopendir (dup);
  if (dir == NULL)
    {
      close (dup);
      return NULL;
    }
  rewinddir (dir);
  return dir;
}

/* Is the entry DE of DIR a directory? */
static gboolean
is_dir_entry (DIR *dir, struct dirent *de)
{
  if (de->d_type != DT_UNKNOWN)
    return de->d_type == DT_DIR;
  struct stat st;
  return fstatat (dirfd (dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode);
}

gboolean
staging_move_objects (OstreeRepo *repo, int stage_dfd, gboolean commits, gboolean *out_known,
                      GError **error)
{
  *out_known = TRUE;
  util_autofd int objects_dfd = openat (ostree_repo_get_dfd (repo), "objects",
                                        O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (objects_dfd < 0)
    return util_fail (error, "objects/: %s", g_strerror (errno));
  g_autoptr(DIR) dir = open_dup (stage_dfd);
  if (dir == NULL)
    return util_fail (error, "staging directory: %s", g_strerror (errno));
  struct dirent *de;
  while ((de = readdir (dir)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0
          || g_str_has_prefix (de->d_name, OBJECT_WRITER_STAGE_PREFIX))
        continue;
      if (!is_object_dir_name (de->d_name) || !is_dir_entry (dir, de))
        *out_known = FALSE;
      else if (!move_dir (objects_dfd, dirfd (dir), de->d_name, commits, error))
        return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* The writer (writer.c) for a libostree transaction. */

/* Does REPO ask for anything the writer does not do (fs-verity, objects
 * synced one by one, another repository mode)? */
static gboolean
writer_applies (OstreeRepo *repo)
{
  OstreeRepoMode mode = ostree_repo_get_mode (repo);
  if (mode != OSTREE_REPO_MODE_BARE && mode != OSTREE_REPO_MODE_BARE_USER)
    return FALSE;
  GKeyFile *config = ostree_repo_get_config (repo);
  if (g_key_file_get_boolean (config, "core", "per-object-fsync", NULL))
    return FALSE;
  g_auto(GStrv) groups = g_key_file_get_groups (config, NULL);
  for (char **g = groups; *g != NULL; g++)
    if (g_str_has_prefix (*g, "ex-fsverity") || g_str_has_prefix (*g, "ex-integrity"))
      return FALSE;
  return TRUE;
}

ObjectWriter *
staging_writer_new (OstreeRepo *repo, int stage_dfd, PartialMarks *marks)
{
  guint64 reserved = 0;
  if (!writer_applies (repo) || !ostree_repo_get_min_free_space_bytes (repo, &reserved, NULL))
    return NULL;
  g_autofree char *path = g_file_get_path (ostree_repo_get_path (repo));
  ObjectWriterConfig config = {
    .repo_dfd = ostree_repo_get_dfd (repo),
    .stage_dfd = stage_dfd,
    .bare_user = ostree_repo_get_mode (repo) == OSTREE_REPO_MODE_BARE_USER,
    .sync = !ostree_repo_get_disable_fsync (repo),
    .min_free_bytes = reserved,
    .repo_path = path,
    .marks = marks,
  };
  return object_writer_new (&config);
}

gboolean
staging_write_mtree (ObjectWriter *w, OstreeMutableTree *mtree, GError **error)
{
  if (ostree_mutable_tree_get_contents_checksum (mtree) != NULL)
    return TRUE;
  if (ostree_mutable_tree_get_metadata_checksum (mtree) == NULL)
    return util_fail (error, "a directory without metadata cannot be committed");

  GHashTable *subdirs = ostree_mutable_tree_get_subdirs (mtree);
  g_autoptr(GHashTable) contents = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) meta = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter iter;
  gpointer name, child;
  g_hash_table_iter_init (&iter, subdirs);
  while (g_hash_table_iter_next (&iter, &name, &child))
    {
      if (!staging_write_mtree (w, child, error))
        return FALSE;
      g_hash_table_insert (contents, name,
                           (gpointer) ostree_mutable_tree_get_contents_checksum (child));
      g_hash_table_insert (meta, name, (gpointer) ostree_mutable_tree_get_metadata_checksum (child));
    }
  g_autofree char *checksum = object_writer_metadata (
      w, OBJECTS_DIR_TREE,
      objects_dirtree_new (ostree_mutable_tree_get_files (mtree), contents, meta), error);
  if (checksum == NULL)
    return FALSE;
  ostree_mutable_tree_set_contents_checksum (mtree, checksum);
  return TRUE;
}
