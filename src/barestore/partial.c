/* partial.c — the commitpartial markers of this program's transactions.
 *
 * Objects go into objects/ in the order a commit needs them: content,
 * dirmeta and dirtrees, the commit last (writer.c, repo.c), so a kill
 * never leaves a commit visible whose objects are not.  A power loss is
 * another matter: the links made between two syncfs() reach the disk in
 * any order, so the commit's could survive its objects'.  libostree's
 * pulls guard against that with state/CHECKSUM.commitpartial: made before
 * the commit object, removed once every object of the commit is on disk;
 * every reader (ostree fsck among them) takes a commit so marked for
 * partial, not for complete.  A transaction here does the same: the marker
 * is made before the first syncfs (which makes it durable with the
 * objects' content) and removed after the second, before any ref names the
 * commit.  (A third syncfs between the objects and the commit would give
 * the same without markers, at the cost of one more wait for the disk per
 * transaction.)
 *
 * Our markers hold "apt2ostree\n" (libostree reads the first byte only:
 * "f" for the ones ostree fsck writes) and are locked, with an open file
 * description lock, as long as their transaction lives.  So the next run
 * tells the leftovers of a killed run from markers in use, and never
 * touches another program's (a pull's, fsck's). */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "barestore/objects.h"
#include "barestore/partial.h"
#include "base/util.h"

#define MARKER_CONTENT "apt2ostree\n"
#define MARKER_SUFFIX ".commitpartial"

typedef struct {
  char *checksum;
  int fd;            /* the marker, locked */
} Held;

struct PartialMarks {
  int repo_dfd;      /* not owned */
  char *repo_path;
  gboolean sync;
  GArray *held;      /* of Held */
};

static char *
marker_path (const char *checksum)
{
  return g_strconcat ("state/", checksum, MARKER_SUFFIX, NULL);
}

/* Lock the marker FD for this process's transaction, without waiting. */
static gboolean
lock_marker (int fd)
{
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  if (fcntl (fd, F_OFD_SETLK, &fl) == 0)
    return TRUE;
  return errno == EINVAL && flock (fd, LOCK_EX | LOCK_NB) == 0;
}

/* Did one of our transactions write the marker FD?  (Its content is
 * written after it is locked: an empty marker is someone's in the making.) */
static gboolean
is_ours (int fd)
{
  char buf[sizeof MARKER_CONTENT];
  ssize_t n = pread (fd, buf, sizeof buf, 0);
  return n == (ssize_t) strlen (MARKER_CONTENT) && memcmp (buf, MARKER_CONTENT, n) == 0;
}

/* Does objects/ hold the object CHECKSUM.SUFFIX? */
static gboolean
has_object (int repo_dfd, const char *checksum, const char *suffix)
{
  char path[OBJECTS_REPO_PATH_MAX];
  objects_repo_path (path, checksum, suffix);
  struct stat st;
  return fstatat (repo_dfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

PartialMarks *
partial_marks_new (int repo_dfd, const char *repo_path, gboolean sync)
{
  PartialMarks *marks = g_new0 (PartialMarks, 1);
  marks->repo_dfd = repo_dfd;
  marks->repo_path = g_strdup (repo_path);
  marks->sync = sync;
  marks->held = g_array_new (FALSE, FALSE, sizeof (Held));
  return marks;
}

void
partial_marks_free (PartialMarks *marks)
{
  if (marks == NULL)
    return;
  for (guint i = 0; i < marks->held->len; i++)
    {
      Held *h = &g_array_index (marks->held, Held, i);
      /* A transaction that failed before its commit went into objects/
       * leaves no marker behind; one that failed after leaves it for the
       * next run to resolve. */
      if (!has_object (marks->repo_dfd, h->checksum, "commit"))
        {
          g_autofree char *path = marker_path (h->checksum);
          (void) unlinkat (marks->repo_dfd, path, 0);
        }
      util_fd_close (&h->fd);
      g_free (h->checksum);
    }
  g_array_unref (marks->held);
  g_free (marks->repo_path);
  g_free (marks);
}

/* Is FD still what DFD/PATH is (not removed by the transaction that held
 * it before this process locked it)? */
static gboolean
same_file (int fd, int dfd, const char *path)
{
  struct stat a, b;
  return fstat (fd, &a) == 0 && fstatat (dfd, path, &b, AT_SYMLINK_NOFOLLOW) == 0
         && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void
hold (PartialMarks *marks, const char *checksum, int fd)
{
  Held h = { g_strdup (checksum), fd };
  g_array_append_val (marks->held, h);
}

gboolean
partial_marks_add (PartialMarks *marks, const char *checksum, GError **error)
{
  if (!marks->sync)
    return TRUE;
  for (guint i = 0; i < marks->held->len; i++)
    if (g_str_equal (g_array_index (marks->held, Held, i).checksum, checksum))
      return TRUE;
  g_autofree char *path = marker_path (checksum);
  int fd = openat (marks->repo_dfd, path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0)
    {
      /* Left by a run of ours that was killed, or by another program (a
       * libostree pull that failed part-way): this transaction writes the
       * commit in full, so once its objects are durable the commit is
       * complete, whoever marked it, and the marker goes.  A marker whose
       * lock another live transaction holds stays its own. */
      if (lock_marker (fd) && same_file (fd, marks->repo_dfd, path))
        hold (marks, checksum, fd);
      else
        close (fd);
      return TRUE;
    }
  if (errno != ENOENT)
    return util_fail (error, "%s: %s: %s", marks->repo_path, path, g_strerror (errno));
  if (has_object (marks->repo_dfd, checksum, "commit"))
    return TRUE;

  (void) mkdirat (marks->repo_dfd, "state", 0777);
  fd = openat (marks->repo_dfd, path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST)
    return TRUE; /* another transaction writing the same commit marked it */
  gboolean locked = fd >= 0 && lock_marker (fd);
  if (fd >= 0 && !locked && (errno == EAGAIN || errno == EACCES))
    {
      /* Another transaction writing the same commit took the new marker
       * over (above) before it was locked: it removes it when done. */
      close (fd);
      return TRUE;
    }
  size_t len = strlen (MARKER_CONTENT);
  if (!locked || write (fd, MARKER_CONTENT, len) != (ssize_t) len)
    {
      int errsv = errno;
      if (fd >= 0)
        {
          (void) unlinkat (marks->repo_dfd, path, 0);
          close (fd);
        }
      return util_fail (error, "%s: marking commit %s partial (%s): %s", marks->repo_path,
                        checksum, path, g_strerror (errsv));
    }
  hold (marks, checksum, fd);
  return TRUE;
}

gboolean
partial_marks_remove (PartialMarks *marks, GError **error)
{
  while (marks->held->len > 0)
    {
      Held h = g_array_index (marks->held, Held, marks->held->len - 1);
      g_array_set_size (marks->held, marks->held->len - 1);
      g_autofree char *checksum = h.checksum;
      /* Closed, and its lock released, when it goes out of scope: after
       * the marker is gone. */
      util_autofd int fd = h.fd;
      (void) fd;
      g_autofree char *path = marker_path (checksum);
      if (unlinkat (marks->repo_dfd, path, 0) < 0 && errno != ENOENT)
        return util_fail (error, "%s: removing %s: %s", marks->repo_path, path, g_strerror (errno));
    }
  return TRUE;
}

gboolean
partial_is_marked (int repo_dfd, const char *checksum)
{
  g_autofree char *path = marker_path (checksum);
  struct stat st;
  return fstatat (repo_dfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
}

/* ------------------------------------------------------------------------ */
/* Leftovers. */

/* The metadata object CHECKSUM.SUFFIX of the variant type TYPE, or NULL. */
static GVariant *
load_metadata (int repo_dfd, const char *checksum, const char *suffix, const char *type)
{
  char path[OBJECTS_REPO_PATH_MAX];
  objects_repo_path (path, checksum, suffix);
  g_autoptr(GBytes) bytes = util_read_at (repo_dfd, path, 64 * 1024 * 1024, NULL);
  if (bytes == NULL)
    return NULL;
  return g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE (type), bytes, FALSE));
}

typedef struct {
  int repo_dfd;
  const char *file_suffix;
  GHashTable *seen;  /* dirtrees found complete */
} Walk;

/* Is every object of the directory CONTENTS (a dirtree) with metadata
 * META, and of everything under it, in objects/? */
static gboolean
tree_complete (Walk *walk, const char *contents, const char *meta)
{
  if (contents == NULL || meta == NULL || !has_object (walk->repo_dfd, meta, "dirmeta"))
    return FALSE;
  if (g_hash_table_contains (walk->seen, contents))
    return TRUE;
  g_autoptr(GVariant) tree = load_metadata (walk->repo_dfd, contents, "dirtree",
                                            "(a(say)a(sayay))");
  if (tree == NULL)
    return FALSE;
  g_autoptr(GVariant) files = g_variant_get_child_value (tree, 0);
  for (gsize i = 0; i < g_variant_n_children (files); i++)
    {
      g_autoptr(GVariant) bytes = NULL;
      g_variant_get_child (files, i, "(&s@ay)", NULL, &bytes);
      g_autofree char *file = objects_checksum_from_bytes_v (bytes);
      if (file == NULL || !has_object (walk->repo_dfd, file, walk->file_suffix))
        return FALSE;
    }
  g_autoptr(GVariant) dirs = g_variant_get_child_value (tree, 1);
  for (gsize i = 0; i < g_variant_n_children (dirs); i++)
    {
      g_autoptr(GVariant) contents_v = NULL, meta_v = NULL;
      g_variant_get_child (dirs, i, "(&s@ay@ay)", NULL, &contents_v, &meta_v);
      g_autofree char *sub_contents = objects_checksum_from_bytes_v (contents_v);
      g_autofree char *sub_meta = objects_checksum_from_bytes_v (meta_v);
      if (!tree_complete (walk, sub_contents, sub_meta))
        return FALSE;
    }
  g_hash_table_add (walk->seen, g_strdup (contents));
  return TRUE;
}

/* Is every object the commit CHECKSUM names in objects/? */
static gboolean
commit_complete (int repo_dfd, const char *checksum, const char *file_suffix)
{
  g_autoptr(GVariant) commit = load_metadata (repo_dfd, checksum, "commit", OBJECTS_COMMIT_TYPE);
  if (commit == NULL)
    return FALSE;
  g_autoptr(GVariant) contents_v = g_variant_get_child_value (commit, 6);
  g_autoptr(GVariant) meta_v = g_variant_get_child_value (commit, 7);
  g_autofree char *contents = objects_checksum_from_bytes_v (contents_v);
  g_autofree char *meta = objects_checksum_from_bytes_v (meta_v);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  Walk walk = { repo_dfd, file_suffix, seen };
  return tree_complete (&walk, contents, meta);
}

/* Is NAME "CHECKSUM.commitpartial"? */
static gboolean
is_marker_name (const char *name)
{
  return strlen (name) == 64 + strlen (MARKER_SUFFIX) && strspn (name, "0123456789abcdef") == 64
         && g_str_equal (name + 64, MARKER_SUFFIX);
}

gboolean
partial_resolve_leftovers (int repo_dfd, const char *repo_path, const char *file_suffix,
                           gboolean sync, GError **error)
{
  int state_dfd = openat (repo_dfd, "state", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (state_dfd < 0)
    return errno == ENOENT ? TRUE
                           : util_fail (error, "%s: state/: %s", repo_path, g_strerror (errno));
  DIR *dir = fdopendir (state_dfd);
  if (dir == NULL)
    {
      close (state_dfd);
      return util_fail (error, "%s: state/: %s", repo_path, g_strerror (errno));
    }
  g_autoptr(GPtrArray) complete = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) fds = g_array_new (FALSE, FALSE, sizeof (int));
  struct dirent *de;
  while ((de = readdir (dir)) != NULL)
    {
      if (!is_marker_name (de->d_name))
        continue;
      int fd = openat (state_dfd, de->d_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        continue;
      if (!is_ours (fd) || !lock_marker (fd) || !same_file (fd, state_dfd, de->d_name))
        {
          close (fd);
          continue;
        }
      g_autofree char *checksum = g_strndup (de->d_name, 64);
      if (!has_object (repo_dfd, checksum, "commit"))
        (void) unlinkat (state_dfd, de->d_name, 0);
      else if (commit_complete (repo_dfd, checksum, file_suffix))
        {
          g_ptr_array_add (complete, g_strdup (de->d_name));
          g_array_append_val (fds, fd);
          continue;
        }
      close (fd);
    }
  /* The objects were linked in by a run that did not live to sync them. */
  gboolean ok = TRUE;
  if (complete->len > 0 && sync && syncfs (repo_dfd) < 0)
    ok = util_fail (error, "%s: syncing the file system: %s", repo_path, g_strerror (errno));
  for (guint i = 0; i < complete->len; i++)
    {
      if (ok)
        (void) unlinkat (dirfd (dir), complete->pdata[i], 0);
      close (g_array_index (fds, int, i));
    }
  closedir (dir);
  return ok;
}
