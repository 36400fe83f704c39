/* scratch.c — scratch directories beside a repository's objects: their
 * names, their locks, their removal, and the reaping of those that killed
 * runs left behind.
 *
 * A scratch directory is PARENT/PREFIX-XXXXXX (g_mkdtemp()'s six letters
 * and digits).  The run that makes it holds an exclusive flock() on the
 * directory itself for as long as it lives (the descriptor is close-on-exec,
 * so no sandboxed program inherits it); the kernel drops the lock when the
 * run ends, however it ends.  A later run removes a directory of that name
 * only when it can take the lock without waiting, so a live run's scratch
 * is never touched.  A directory holding the file "kept" (--keep-on-failure)
 * is the user's to remove. */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/scratch.h"
#include "base/util.h"

#define KEPT_MARKER "kept"
#define RANDOM_LEN 6   /* the XXXXXX of g_mkdtemp() */

/* --- removal --- */

/* Removing a tree: like the checkout, on a few threads, each directory a
 * task that unlinks its files and queues its subdirectories; the emptied
 * directories are removed at the end, deepest first.  Symlinks are never
 * followed and mounts never crossed.  Not root, a checkout and overlayfs'
 * work directory hold directories without write (or any) permission: they
 * are opened up first (only directories: the files are the repository's
 * own). */
typedef struct {
  dev_t dev;
  GThreadPool *pool;
  GMutex lock;             /* guards what follows */
  GCond idle;
  guint pending;
  GPtrArray *dirs;         /* every directory found, parents before children */
  GError *error;
} Remover;

static void
remover_queue (Remover *rm, char *path)
{
  g_mutex_lock (&rm->lock);
  g_ptr_array_add (rm->dirs, g_strdup (path));
  rm->pending++;
  g_mutex_unlock (&rm->lock);
  g_thread_pool_push (rm->pool, path, NULL);
}

/* Open up the directory NAME of DFD (at PATH) for removal, after checking
 * it is on the same filesystem. */
static gboolean
remover_check_dir (Remover *rm, int dfd, const char *name, const char *path, GError **error)
{
  struct stat st;
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  if (st.st_dev != rm->dev)
    return util_fail (error, "%s: a mount point inside the scratch directory", path);
  if ((st.st_mode & 0700) != 0700)
    (void) fchmodat (dfd, name, (st.st_mode & 07777) | 0700, 0);
  return TRUE;
}

/* Past this length a path is not handed to the kernel whole: what lies
 * below is removed relative to open directories (a command can make a tree
 * deeper than PATH_MAX, which no path reaches). */
#define DEEP_PATH_LEN (PATH_MAX / 2)

/* One directory on the way down a deep tree: its name in its parent, its
 * inode (checked when we climb back to it through ".."), and the
 * subdirectories it had when read, not yet removed. */
typedef struct {
  char *name;
  ino_t ino;
  GPtrArray *subdirs;
  guint next;
} DeepLevel;

static void
deep_level_free (gpointer data)
{
  DeepLevel *level = data;
  g_free (level->name);
  g_clear_pointer (&level->subdirs, g_ptr_array_unref);
  g_free (level);
}

/* The path of the directory LEVELS leads to below TOP, for errors. */
static char *
deep_path (const char *top, GPtrArray *levels)
{
  GString *s = g_string_new (top);
  for (guint i = 1; i < levels->len; i++)
    g_string_append_printf (s, "/%s", ((DeepLevel *) levels->pdata[i])->name);
  return g_string_free (s, FALSE);
}

static gboolean
deep_fail (GError **error, const char *top, GPtrArray *levels, const char *what, int errsv)
{
  g_autofree char *path = deep_path (top, levels);
  g_autofree char *shown = util_shown_path (path);
  return util_fail (error, "%s: %s: %s", shown, what, g_strerror (errsv));
}

/* Unlink everything but the directories in the directory open as FD (its
 * read position at the start); the directories, opened up, go to
 * LEVEL->subdirs. */
static gboolean
deep_read (Remover *rm, int fd, DeepLevel *level, const char *top, GPtrArray *levels,
           GError **error)
{
  int dup_fd = fcntl (fd, F_DUPFD_CLOEXEC, 0);
  DIR *dir = dup_fd < 0 ? NULL : fdopendir (dup_fd);
  if (dir == NULL)
    {
      int errsv = errno;
      util_fd_close (&dup_fd);
      return deep_fail (error, top, levels, "cannot read", errsv);
    }
  level->subdirs = g_ptr_array_new_with_free_func (g_free);
  gboolean ok = TRUE;
  struct dirent *de;
  while (ok && (de = readdir (dir)) != NULL)
    {
      if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, ".."))
        continue;
      struct stat st;
      if (fstatat (fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        ok = errno == ENOENT || deep_fail (error, top, levels, "cannot stat an entry", errno);
      else if (!S_ISDIR (st.st_mode))
        ok = unlinkat (fd, de->d_name, 0) == 0 || errno == ENOENT
             || deep_fail (error, top, levels, "cannot remove an entry", errno);
      else if (st.st_dev != rm->dev)
        ok = deep_fail (error, top, levels, "a mount point inside the scratch directory", EXDEV);
      else
        {
          if ((st.st_mode & 0700) != 0700)
            (void) fchmodat (fd, de->d_name, (st.st_mode & 07777) | 0700, 0);
          g_ptr_array_add (level->subdirs, g_strdup (de->d_name));
        }
    }
  closedir (dir);
  return ok;
}

/* Remove the directory NAME of PARENT_FD (at PATH) and everything below it,
 * however deep: one directory open at a time, going down by name and back
 * up through "..", so no path longer than a name is ever used. */
static gboolean
remove_deep (Remover *rm, int parent_fd, const char *name, const char *path, GError **error)
{
  g_autoptr(GPtrArray) levels = g_ptr_array_new_with_free_func (deep_level_free);
  util_autofd int fd = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return util_fail (error, "%s: cannot open: %s", path, g_strerror (errno));
  DeepLevel *first = g_new0 (DeepLevel, 1);
  first->name = g_strdup (name);
  first->ino = st.st_ino;
  g_ptr_array_add (levels, first);
  while (levels->len > 0)
    {
      DeepLevel *level = levels->pdata[levels->len - 1];
      if (level->subdirs == NULL && !deep_read (rm, fd, level, path, levels, error))
        return FALSE;
      if (level->next < level->subdirs->len)
        {
          const char *sub = level->subdirs->pdata[level->next++];
          int sub_fd = openat (fd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub_fd < 0 || fstat (sub_fd, &st) < 0)
            return deep_fail (error, path, levels, "cannot open a subdirectory", errno);
          util_fd_close (&fd);
          fd = sub_fd;
          DeepLevel *down = g_new0 (DeepLevel, 1);
          down->name = g_strdup (sub);
          down->ino = st.st_ino;
          g_ptr_array_add (levels, down);
          continue;
        }
      /* LEVEL is empty now: climb to its parent and remove it there. */
      g_autofree char *done = g_strdup (level->name);
      g_ptr_array_set_size (levels, levels->len - 1);
      int up_fd = levels->len == 0 ? fcntl (parent_fd, F_DUPFD_CLOEXEC, 0)
                                   : openat (fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (up_fd < 0 || fstat (up_fd, &st) < 0)
        return deep_fail (error, path, levels, "cannot open", errno);
      util_fd_close (&fd);
      fd = up_fd;
      if (levels->len > 0 && st.st_ino != ((DeepLevel *) levels->pdata[levels->len - 1])->ino)
        return deep_fail (error, path, levels, "moved while it was being removed", ESTALE);
      if (unlinkat (fd, done, AT_REMOVEDIR) < 0 && errno != ENOENT)
        return deep_fail (error, path, levels, "cannot remove a subdirectory", errno);
    }
  return TRUE;
}

static gboolean
remover_empty_dir (Remover *rm, const char *path, GError **error)
{
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return util_fail (error, "%s: cannot open: %s", path, g_strerror (errno));
  DIR *dir = fdopendir (fd);
  if (dir == NULL)
    {
      close (fd);
      return util_fail (error, "%s: cannot read: %s", path, g_strerror (errno));
    }
  gboolean ok = TRUE;
  struct dirent *de;
  while (ok && (de = readdir (dir)) != NULL)
    {
      if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, ".."))
        continue;
      gboolean is_dir = de->d_type == DT_DIR;
      if (de->d_type == DT_UNKNOWN)
        {
          struct stat st;
          if (fstatat (dirfd (dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            {
              if (errno == ENOENT)
                continue;
              ok = util_fail (error, "%s/%s: %s", path, de->d_name, g_strerror (errno));
              break;
            }
          is_dir = S_ISDIR (st.st_mode);
        }
      if (!is_dir)
        {
          if (unlinkat (dirfd (dir), de->d_name, 0) < 0 && errno != ENOENT)
            ok = util_fail (error, "%s/%s: cannot remove: %s", path, de->d_name,
                            g_strerror (errno));
          continue;
        }
      char *sub = g_build_filename (path, de->d_name, NULL);
      ok = remover_check_dir (rm, dirfd (dir), de->d_name, sub, error);
      if (ok && strlen (sub) > DEEP_PATH_LEN)
        ok = remove_deep (rm, dirfd (dir), de->d_name, sub, error);
      else if (ok)
        {
          remover_queue (rm, g_steal_pointer (&sub));
          continue;
        }
      g_free (sub);
    }
  closedir (dir);
  return ok;
}

static void
remover_run (gpointer data, gpointer user_data)
{
  char *path = data;
  Remover *rm = user_data;
  g_autoptr(GError) local_error = NULL;
  g_mutex_lock (&rm->lock);
  gboolean failed = rm->error != NULL;
  g_mutex_unlock (&rm->lock);
  if (!failed)
    (void) remover_empty_dir (rm, path, &local_error);
  g_free (path);
  g_mutex_lock (&rm->lock);
  if (local_error != NULL && rm->error == NULL)
    rm->error = g_steal_pointer (&local_error);
  if (--rm->pending == 0)
    g_cond_signal (&rm->idle);
  g_mutex_unlock (&rm->lock);
}

char *
scratch_beside (const char *dest, const char *name, GError **error)
{
  g_autofree char *parent = g_path_get_dirname (dest);
  g_autofree char *base = g_strconcat (".apt2ostree-", name, "-XXXXXX", NULL);
  g_autofree char *template = g_build_filename (parent, base, NULL);
  if (g_mkdtemp (template) == NULL)
    return util_fail (error, "%s: cannot make a working directory: %s", parent,
                      g_strerror (errno)), NULL;
  return g_steal_pointer (&template);
}

gboolean
scratch_rm_rf (const char *path, GError **error)
{
  struct stat st;
  if (lstat (path, &st) < 0)
    return errno == ENOENT ? TRUE : util_fail (error, "%s: %s", path, g_strerror (errno));
  if (!S_ISDIR (st.st_mode))
    {
      if (unlink (path) < 0 && errno != ENOENT)
        return util_fail (error, "cannot remove %s: %s", path, g_strerror (errno));
      return TRUE;
    }

  Remover rm = { .dev = st.st_dev, .dirs = g_ptr_array_new_with_free_func (g_free) };
  g_mutex_init (&rm.lock);
  g_cond_init (&rm.idle);
  if ((st.st_mode & 0700) != 0700)
    (void) chmod (path, (st.st_mode & 07777) | 0700);
  rm.pool = g_thread_pool_new (remover_run, &rm, CLAMP (g_get_num_processors (), 1, 4), FALSE,
                               NULL);
  remover_queue (&rm, g_strdup (path));
  g_mutex_lock (&rm.lock);
  while (rm.pending > 0)
    g_cond_wait (&rm.idle, &rm.lock);
  g_mutex_unlock (&rm.lock);
  g_thread_pool_free (rm.pool, FALSE, TRUE);

  for (guint i = rm.dirs->len; rm.error == NULL && i > 0; i--)
    {
      const char *dir = rm.dirs->pdata[i - 1];
      if (rmdir (dir) < 0 && errno != ENOENT)
        util_fail (&rm.error, "%s: cannot remove: %s", dir, g_strerror (errno));
    }
  g_ptr_array_unref (rm.dirs);
  g_mutex_clear (&rm.lock);
  g_cond_clear (&rm.idle);
  if (rm.error != NULL)
    {
      g_propagate_error (error, rm.error);
      g_prefix_error (error, "cannot remove the scratch directory %s: ", path);
      return FALSE;
    }
  return TRUE;
}

/* --- names and locks --- */

/* NAME is PREFIX-XXXXXX, as g_mkdtemp() makes it. */
static gboolean
is_scratch_name (const char *name, const char *prefix)
{
  gsize len = strlen (prefix);
  if (strncmp (name, prefix, len) != 0 || name[len] != '-' || strlen (name + len + 1) != RANDOM_LEN)
    return FALSE;
  for (const char *p = name + len + 1; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p))
      return FALSE;
  return TRUE;
}

/* Take the lock of the directory open as FD without waiting: 0, or
 * EWOULDBLOCK when another run holds it, ENOENT when the directory was
 * removed before we got it (a run reaping it was quicker), another errno
 * when it cannot be locked at all. */
static int
try_lock (int fd)
{
  struct stat st;
  if (flock (fd, LOCK_EX | LOCK_NB) < 0 || fstat (fd, &st) < 0)
    return errno;
  return st.st_nlink > 0 ? 0 : ENOENT;
}

/* The leftover NAME of PARENT (open as DFD), when it is one: ours to remove,
 * not in use, not kept, one of this user's unless we are root. */
static void
reap_one (int dfd, const char *parent, const char *name, const struct stat *st_parent)
{
  util_autofd int fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  struct stat st;
  if (fstat (fd, &st) < 0 || st.st_dev != st_parent->st_dev
      || (geteuid () != 0 && st.st_uid != geteuid ()))
    return;
  if (try_lock (fd) != 0 || faccessat (fd, KEPT_MARKER, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    return;
  g_autofree char *path = g_build_filename (parent, name, NULL);
  g_autoptr(GError) local_error = NULL;
  if (!scratch_rm_rf (path, &local_error))
    g_printerr ("apt2ostree: warning: a run that was killed left %s and it cannot be removed "
                "(%s); remove it by hand\n", path, local_error->message);
}

void
scratch_reap (const char *parent, const char *prefix)
{
  DIR *dir = opendir (parent);
  if (dir == NULL)
    return;
  struct stat st_parent;
  if (fstat (dirfd (dir), &st_parent) == 0)
    {
      struct dirent *de;
      while ((de = readdir (dir)) != NULL)
        if (is_scratch_name (de->d_name, prefix))
          reap_one (dirfd (dir), parent, de->d_name, &st_parent);
    }
  closedir (dir);
}

Scratch *
scratch_new (const char *parent, const char *prefix, GError **error)
{
  scratch_reap (parent, prefix);
  g_autofree char *template = g_strdup_printf ("%s/%s-XXXXXX", parent, prefix);
  /* A run reaping PARENT can take a new directory's lock before its maker
   * does: the maker then leaves that one and makes another. */
  for (guint attempt = 0; attempt < 100; attempt++)
    {
      g_autofree char *path = g_strdup (template);
      if (g_mkdtemp (path) == NULL)
        return util_fail (error, "%s: cannot create a scratch directory: %s", parent,
                          g_strerror (errno)), NULL;
      int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT)
        continue;
      if (fd < 0)
        return util_fail (error, "%s: %s", path, g_strerror (errno)), NULL;
      int err = try_lock (fd);
      if (err == 0)
        {
          Scratch *scratch = g_new0 (Scratch, 1);
          scratch->path = g_canonicalize_filename (path, NULL);
          scratch->lock_fd = fd;
          return scratch;
        }
      close (fd);
      if (err != EWOULDBLOCK && err != ENOENT)
        return util_fail (error, "%s: cannot lock the scratch directory: %s", path,
                          g_strerror (err)), NULL;
    }
  return util_fail (error, "%s: cannot create a scratch directory: another run removes every "
                    "one made", parent), NULL;
}

gboolean
scratch_remove (Scratch *scratch, GError **error)
{
  return scratch_rm_rf (scratch->path, error);
}

gboolean
scratch_keep (Scratch *scratch, GError **error)
{
  int fd = openat (scratch->lock_fd, KEPT_MARKER, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
                   0644);
  if (fd < 0)
    return util_fail (error, "%s/%s: %s", scratch->path, KEPT_MARKER, g_strerror (errno));
  static const char text[] = "kept by --keep-on-failure: later runs leave this directory "
                             "alone; remove it when done\n";
  gboolean ok = write (fd, text, sizeof text - 1) == sizeof text - 1;
  int errsv = errno;
  close (fd);
  if (!ok)
    return util_fail (error, "%s/%s: %s", scratch->path, KEPT_MARKER, g_strerror (errsv));
  return TRUE;
}

void
scratch_free (Scratch *scratch)
{
  if (scratch == NULL)
    return;
  util_fd_close (&scratch->lock_fd);
  g_free (scratch->path);
  g_free (scratch);
}
