/* stagedir.c — the staging directory of the project's own transaction.
 *
 * The object writer (writer.c) makes a transaction's objects as O_TMPFILEs,
 * and bare symlinks (and objects made while file descriptors run short)
 * as files with names of their own, in a staging directory; after a
 * syncfs() it links or renames them into objects/.  That directory is the
 * transaction's own, tmp/apt2ostree-staging-XXXXXX, never libostree's: a
 * transaction takes an exclusive flock() on it for as long as it runs, so
 * parallel processes each have one.  It is kept when the transaction ends
 * (empty: everything in it went into objects/), and the next transaction
 * that finds it unlocked takes it, removing first whatever a killed
 * process left in it (files whose content was never synced): deleting a
 * directory per transaction is not free (on ext4 without a journal every
 * inode allocation steps over those deleted in the last minute), and a
 * build runs one transaction per package. */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "barestore/stagedir.h"

#define STAGE_DIR_PREFIX "apt2ostree-staging-"

struct StageDir {
  int dfd;
};

int
stage_dir_fd (StageDir *dir)
{
  return dir->dfd;
}

void
stage_dir_free (StageDir *dir)
{
  if (dir == NULL)
    return;
  util_fd_close (&dir->dfd);
  g_free (dir);
}

/* Remove the files a killed transaction left in the locked directory DFD;
 * FALSE when it holds anything else (a directory: not ours to judge). */
static gboolean
clear_leftovers (int dfd)
{
  int dup = fcntl (dfd, F_DUPFD_CLOEXEC, 3);
  DIR *dir = dup >= 0 ? fdopendir (dup) : NULL;
  if (dir == NULL)
    {
      util_fd_close (&dup);
      return FALSE;
    }
  gboolean ok = TRUE;
  struct dirent *de;
  while (ok && (de = readdir (dir)) != NULL)
    {
      if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, ".."))
        continue;
      ok = unlinkat (dfd, de->d_name, 0) == 0 || errno == ENOENT;
    }
  closedir (dir);
  return ok;
}

/* The directory NAME under TMP_DFD, opened and locked for this
 * transaction, or -1 when another holds it or it cannot be used. */
static int
take (int tmp_dfd, const char *name)
{
  util_autofd int fd = openat (tmp_dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || flock (fd, LOCK_EX | LOCK_NB) < 0)
    return -1;
  /* (Fresh, for anything that expires old entries of tmp/.) */
  if (faccessat (tmp_dfd, name, W_OK, AT_EACCESS) < 0 || !clear_leftovers (fd)
      || futimens (fd, NULL) < 0)
    return -1;
  int taken = fd;
  fd = -1;
  return taken;
}

/* An unlocked staging directory under TMP_DFD, taken; or -1. */
static int
take_existing (int tmp_dfd)
{
  int dup = fcntl (tmp_dfd, F_DUPFD_CLOEXEC, 3);
  DIR *dir = dup >= 0 ? fdopendir (dup) : NULL;
  if (dir == NULL)
    {
      util_fd_close (&dup);
      return -1;
    }
  int fd = -1;
  struct dirent *de;
  while (fd < 0 && (de = readdir (dir)) != NULL)
    if (g_str_has_prefix (de->d_name, STAGE_DIR_PREFIX))
      fd = take (tmp_dfd, de->d_name);
  closedir (dir);
  return fd;
}

StageDir *
stage_dir_open (int repo_dfd, const char *repo_path, GError **error)
{
  util_autofd int tmp_dfd = openat (repo_dfd, "tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (tmp_dfd < 0)
    return util_fail (error, "%s/tmp: %s", repo_path, g_strerror (errno)), NULL;
  int fd = take_existing (tmp_dfd);
  for (int attempt = 0; fd < 0 && attempt < 100; attempt++)
    {
      char name[64];
      g_snprintf (name, sizeof name, STAGE_DIR_PREFIX "%08x", g_random_int ());
      if (mkdirat (tmp_dfd, name, 0755) < 0)
        {
          if (errno == EEXIST)
            continue;
          return util_fail (error, "%s/tmp/%s: %s", repo_path, name, g_strerror (errno)), NULL;
        }
      fd = take (tmp_dfd, name);
    }
  if (fd < 0)
    return util_fail (error, "%s/tmp: no staging directory could be made", repo_path), NULL;
  StageDir *dir = g_new0 (StageDir, 1);
  dir->dfd = fd;
  return dir;
}
