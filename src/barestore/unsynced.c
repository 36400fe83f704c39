/* unsynced.c — a build's writes left unsynced until its end (unsynced.h). */
#define _GNU_SOURCE  /* syncfs */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "barestore/unsynced.h"
#include "base/util.h"

#define BOOT_ID_LEN 36

char *
unsynced_boot_id (void)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents ("/proc/sys/kernel/random/boot_id", &text, NULL, NULL))
    return NULL;
  g_strstrip (text);
  if (strlen (text) != BOOT_ID_LEN || strspn (text, "0123456789abcdef-") != BOOT_ID_LEN)
    return NULL;
  return g_steal_pointer (&text);
}

/* NAME is BOOT_ID.PID: its parts, or FALSE. */
static gboolean
parse_name (const char *name, char **out_boot_id, pid_t *out_pid)
{
  if (strlen (name) < BOOT_ID_LEN + 2 || name[BOOT_ID_LEN] != '.'
      || strspn (name, "0123456789abcdef-") != BOOT_ID_LEN)
    return FALSE;
  const char *digits = name + BOOT_ID_LEN + 1;
  if (strspn (digits, "0123456789") != strlen (digits) || strlen (digits) > 9)
    return FALSE;
  *out_boot_id = g_strndup (name, BOOT_ID_LEN);
  *out_pid = (pid_t) atoi (digits);
  return *out_pid > 0;
}

static gboolean
fsync_at (int dfd, const char *path)
{
  util_autofd int fd = openat (dfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  return fd >= 0 && fsync (fd) == 0;
}

/* The marker NAME on disk: made by the first step that writes, under a
 * lock, and a byte written into it once it and its directory entry are
 * synced, so that the steps after it find it so and sync nothing. */
static gboolean
join (int repo_dfd, const char *name)
{
  g_autofree char *path = g_build_filename (UNSYNCED_DIR, name, NULL);
  util_autofd int fd = openat (repo_dfd, path, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0644);
  struct stat st;
  if (fd < 0 || flock (fd, LOCK_EX) < 0 || fstat (fd, &st) < 0)
    return FALSE;
  if (st.st_size > 0)
    return TRUE;
  return fsync (fd) == 0 && fsync_at (repo_dfd, UNSYNCED_DIR) && pwrite (fd, "1", 1, 0) == 1;
}

gboolean
unsynced_deferred (int repo_dfd)
{
  const char *name = g_getenv (UNSYNCED_ENV);
  g_autofree char *boot_id = NULL;
  g_autofree char *this_boot = NULL;
  pid_t pid;
  if (name == NULL || !parse_name (name, &boot_id, &pid)
      || (this_boot = unsynced_boot_id ()) == NULL || !g_str_equal (boot_id, this_boot))
    return FALSE;
  /* (Any failure here: the step syncs, as without a build.) */
  return join (repo_dfd, name);
}

char *
unsynced_begin (int repo_dfd, const char *repo_path, GError **error)
{
  g_autofree char *boot_id = unsynced_boot_id ();
  if (boot_id == NULL)
    return util_fail (error, "cannot read this boot's id (/proc/sys/kernel/random/boot_id)"), NULL;
  /* The markers' directory stays: made (and its entry synced) once. */
  if (mkdirat (repo_dfd, UNSYNCED_DIR, 0755) == 0)
    {
      if (!fsync_at (repo_dfd, "."))
        return util_fail (error, "%s: %s", repo_path, g_strerror (errno)), NULL;
    }
  else if (errno != EEXIST)
    return util_fail (error, "%s/%s: %s", repo_path, UNSYNCED_DIR, g_strerror (errno)), NULL;
  return g_strdup_printf ("%s.%d", boot_id, (int) getpid ());
}

gboolean
unsynced_remove (int repo_dfd, const char *repo_path, const char *name, GError **error)
{
  g_autofree char *path = g_build_filename (UNSYNCED_DIR, name, NULL);
  if (unlinkat (repo_dfd, path, 0) < 0 && errno != ENOENT)
    return util_fail (error, "%s/%s: %s", repo_path, path, g_strerror (errno));
  return TRUE;
}

gboolean
unsynced_end (int repo_dfd, const char *repo_path, const char *name, GError **error)
{
  /* No step wrote: nothing waits to be synced. */
  g_autofree char *path = g_build_filename (UNSYNCED_DIR, name, NULL);
  struct stat st;
  if (fstatat (repo_dfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
    return TRUE;
  if (syncfs (repo_dfd) < 0)
    return util_fail (error, "%s: syncing the file system: %s", repo_path, g_strerror (errno));
  return unsynced_remove (repo_dfd, repo_path, name, error);
}

void
unsynced_marker_free (UnsyncedMarker *marker)
{
  if (marker == NULL)
    return;
  g_free (marker->name);
  g_free (marker);
}

/* The markers of REPO_DFD, all of them: of another boot when FOREIGN_ONLY.
 * NULL and an error when its directory cannot be read. */
static GPtrArray *
markers (int repo_dfd, const char *repo_path, gboolean foreign_only, GError **error)
{
  g_autoptr(GPtrArray) found = g_ptr_array_new_with_free_func ((GDestroyNotify) unsynced_marker_free);
  int dfd = openat (repo_dfd, UNSYNCED_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (dfd < 0 && errno == ENOENT)
    return g_steal_pointer (&found);
  if (dfd < 0)
    return util_fail (error, "%s/%s: %s", repo_path, UNSYNCED_DIR, g_strerror (errno)), NULL;
  DIR *dir = fdopendir (dfd);
  if (dir == NULL)
    {
      close (dfd);
      return util_fail (error, "%s/%s: %s", repo_path, UNSYNCED_DIR, g_strerror (errno)), NULL;
    }
  g_autofree char *this_boot = unsynced_boot_id ();
  struct dirent *de;
  while ((de = readdir (dir)) != NULL)
    {
      g_autofree char *boot_id = NULL;
      pid_t pid;
      struct stat st;
      if (!parse_name (de->d_name, &boot_id, &pid)
          || fstatat (dirfd (dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      gboolean foreign = this_boot == NULL || !g_str_equal (boot_id, this_boot);
      if (foreign_only && !foreign)
        continue;
      UnsyncedMarker *m = g_new0 (UnsyncedMarker, 1);
      m->name = g_strdup (de->d_name);
      m->foreign = foreign;
      m->mtime = st.st_mtim.tv_sec;
      m->pid = pid;
      g_ptr_array_add (found, m);
    }
  closedir (dir);
  return g_steal_pointer (&found);
}

GPtrArray *
unsynced_leftovers (int repo_dfd, const char *repo_path, GError **error)
{
  g_autoptr(GPtrArray) all = markers (repo_dfd, repo_path, FALSE, error);
  if (all == NULL)
    return NULL;
  /* This boot's, of a process still running: a build going on. */
  for (guint i = all->len; i > 0; i--)
    {
      UnsyncedMarker *m = all->pdata[i - 1];
      if (!m->foreign && (kill (m->pid, 0) == 0 || errno != ESRCH))
        g_ptr_array_remove_index (all, i - 1);
    }
  return g_steal_pointer (&all);
}

gboolean
unsynced_check (int repo_dfd, const char *repo_path, GError **error)
{
  g_autoptr(GPtrArray) foreign = markers (repo_dfd, repo_path, TRUE, error);
  if (foreign == NULL)
    return FALSE;
  if (foreign->len == 0)
    return TRUE;
  UnsyncedMarker *m = foreign->pdata[0];
  return util_fail (error, "%s: the machine stopped during a build (%s/%s) before its writes "
                    "were on disk, so trees it wrote may be damaged; run \"apt2ostree build\" on "
                    "one of the repository's lockfiles first: it removes them, then builds",
                    repo_path, UNSYNCED_DIR, m->name);
}
