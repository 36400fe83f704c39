/* staging.c — the staging directory of the open transaction: regular-file
 * objects written into it directly, and emptied into objects/ without being
 * deleted.
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
 * whole transaction).  Anything in it other than XX/OBJECT files is a layout
 * this code does not know: the caller then lets libostree commit the rest
 * as usual.
 *
 * The writer makes the objects of a bare or bare-user repository as
 * libostree would (a regular file is an O_TMPFILE given its owner, mode,
 * xattrs and mtime 0, then linked in as XX/CHECKSUM.file; a symlink, a
 * dirmeta, dirtree or commit likewise), minus what costs time and gives
 * nothing here: the content arrives in 8 KiB writes after a fallocate(),
 * and every object is looked for in the staging directory and made a
 * directory for. */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sha256.h"
#include "staging.h"
#include "util.h"

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

static gboolean
move_dir (int objects_dfd, int stage_dfd, const char *xx, GError **error)
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
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
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
staging_move_objects (OstreeRepo *repo, int stage_dfd, gboolean *out_known, GError **error)
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
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (!is_object_dir_name (de->d_name) || !is_dir_entry (dir, de))
        {
          *out_known = FALSE;
          return TRUE;
        }
      if (!move_dir (objects_dfd, dirfd (dir), de->d_name, error))
        return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Writing regular-file objects straight into the staging directory. */

/* "XX/REST.file", "XX/REST.dirtree", ...: an object's path under objects/
 * or the staging directory. */
#define OBJECT_PATH_MAX 80

typedef struct {
  int fd;                      /* the object, an O_TMPFILE not linked anywhere yet */
  char path[OBJECT_PATH_MAX];
} Pending;

struct StagingWriter {
  OstreeRepoMode mode;         /* bare or bare-user */
  int repo_dfd;                /* not owned */
  int stage_dfd;
  int objects_dfd;
  GHashTable *staged;          /* paths of the objects written in this transaction */
  gboolean sync;               /* the repository syncs (core.fsync, the default) */
  GArray *pending;             /* of Pending: written, waiting for a syncfs */
  guint max_pending;           /* open files this process can spare; 0: link to staging */
  gboolean link_empty_path;    /* linkat (fd, "", ..., AT_EMPTY_PATH) works */
  struct rlimit saved_nofile;  /* the file limit to put back, when it was raised */
  gboolean raised_nofile;
  guint64 block_size;
  guint64 free_blocks;         /* G_MAXUINT64: no min-free-space limit */
  char *repo_path;             /* for messages */
};

void
staging_writer_free (StagingWriter *w)
{
  if (w == NULL)
    return;
  if (w->stage_dfd >= 0)
    close (w->stage_dfd);
  if (w->objects_dfd >= 0)
    close (w->objects_dfd);
  for (guint i = 0; i < w->pending->len; i++)
    close (g_array_index (w->pending, Pending, i).fd);
  g_array_unref (w->pending);
  if (w->raised_nofile)
    (void) setrlimit (RLIMIT_NOFILE, &w->saved_nofile);
  g_hash_table_unref (w->staged);
  g_free (w->repo_path);
  g_free (w);
}

/* Does REPO ask for anything this writer does not do (fs-verity, objects
 * synced one by one, another repository mode)?  With fsync off, objects go
 * straight into objects/, as libostree puts them then. */
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

static gboolean
has_tmpfile (__fsword_t type)
{
  switch (type)
    {
    case 0xEF53:     /* ext2, ext3, ext4 */
    case 0x58465342: /* xfs */
    case 0x9123683E: /* btrfs */
    case 0x01021994: /* tmpfs */
    case 0xF2F52010: /* f2fs */
      return TRUE;
    default:
      return FALSE;
    }
}

StagingWriter *
staging_writer_new (OstreeRepo *repo, int stage_dfd)
{
  if (!writer_applies (repo))
    return NULL;
  /* Only on file systems known to support O_TMPFILE (a probe would make
   * and delete a file every transaction). */
  struct statfs fs;
  if (fstatfs (stage_dfd, &fs) < 0 || !has_tmpfile (fs.f_type))
    return NULL;

  struct statvfs vfs;
  guint64 reserved = 0;
  if (fstatvfs (ostree_repo_get_dfd (repo), &vfs) < 0
      || !ostree_repo_get_min_free_space_bytes (repo, &reserved, NULL))
    return NULL;

  StagingWriter *w = g_new0 (StagingWriter, 1);
  w->mode = ostree_repo_get_mode (repo);
  w->stage_dfd = fcntl (stage_dfd, F_DUPFD_CLOEXEC, 3);
  w->objects_dfd = openat (ostree_repo_get_dfd (repo), "objects",
                           O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  w->repo_dfd = ostree_repo_get_dfd (repo);
  w->link_empty_path = TRUE;
  w->sync = !ostree_repo_get_disable_fsync (repo);
  w->staged = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  w->pending = g_array_new (FALSE, FALSE, sizeof (Pending));
  /* Written objects wait as open files for the syncfs before they are
   * linked into objects/: as many as the file limit allows, raised towards
   * the hard limit while the writer lives, keeping some for everything
   * else. */
  struct rlimit nofile;
  if (w->sync && getrlimit (RLIMIT_NOFILE, &nofile) == 0)
    {
      rlim_t want = MIN (nofile.rlim_max, (rlim_t) 65536);
      if (nofile.rlim_cur < want)
        {
          struct rlimit raised = { want, nofile.rlim_max };
          if (setrlimit (RLIMIT_NOFILE, &raised) == 0)
            {
              w->saved_nofile = nofile;
              w->raised_nofile = TRUE;
              nofile.rlim_cur = want;
            }
        }
      w->max_pending = nofile.rlim_cur > 512 ? (guint) MIN (nofile.rlim_cur - 256, 65536) : 0;
    }
  w->block_size = vfs.f_bsize > 0 ? vfs.f_bsize : 4096;
  /* As libostree reckons it: what is free (for root) or available (for
   * others), less the reserve min-free-space-* keeps. */
  guint64 free_blocks = getuid () == 0 ? vfs.f_bfree : vfs.f_bavail;
  guint64 reserved_blocks = reserved / w->block_size;
  w->free_blocks = reserved == 0 ? G_MAXUINT64
                   : free_blocks > reserved_blocks ? free_blocks - reserved_blocks : 0;
  w->repo_path = g_file_get_path (ostree_repo_get_path (repo));
  if (w->stage_dfd < 0 || w->objects_dfd < 0)
    {
      staging_writer_free (w);
      return NULL;
    }
  return w;
}

static void
object_path (char path[OBJECT_PATH_MAX], const char *checksum, OstreeObjectType type)
{
  g_snprintf (path, OBJECT_PATH_MAX, "%.2s/%s.%s", checksum, checksum + 2,
              ostree_object_type_to_string (type));
}

static gboolean
write_all (int fd, const guint8 *data, gsize size)
{
  while (size > 0)
    {
      ssize_t n = write (fd, data, size);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      data += n;
      size -= n;
    }
  return TRUE;
}

/* The object's owner, mode and extended attributes, as the repository's
 * mode stores them (the same as libostree: see ostree-repo-commit.c).  MODE
 * is a regular file's permission bits, or S_IFLNK | 0777 for a symlink
 * stored as a regular file (bare-user). */
static gboolean
set_metadata (StagingWriter *w, int fd, guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs)
{
  if (w->mode == OSTREE_REPO_MODE_BARE)
    {
      if (fchown (fd, uid, gid) < 0 || fchmod (fd, mode & 07777) < 0)
        return FALSE;
      if (xattrs != NULL && !util_fd_set_xattrs (fd, xattrs, w->repo_path, NULL))
        return FALSE;
    }
  else
    {
      g_autoptr(GVariant) empty = NULL;
      if (xattrs == NULL)
        empty = g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("(ayay)"), NULL, 0));
      gboolean symlink = S_ISLNK (mode);
      g_autoptr(GVariant) meta = g_variant_ref_sink (
          g_variant_new ("(uuu@a(ayay))", GUINT32_TO_BE (uid), GUINT32_TO_BE (gid),
                         GUINT32_TO_BE (symlink ? mode : S_IFREG | (mode & 07777)),
                         xattrs ? xattrs : empty));
      if (fsetxattr (fd, "user.ostreemeta", g_variant_get_data (meta), g_variant_get_size (meta),
                     0) < 0)
        return FALSE;
      if (fchmod (fd, symlink ? 0644 : (mode & 0775) | S_IRUSR) < 0)
        return FALSE;
    }
  /* libostree dates every object of a bare repository 0. */
  const struct timespec times[2] = { { 0, UTIME_OMIT }, { 0, 0 } };
  return futimens (fd, times) == 0;
}

/* Link the O_TMPFILE FD into DFD as PATH, making its XX directory when it
 * is missing; an object already there is fine. */
static gboolean
link_object (StagingWriter *w, int fd, int dfd, const char *path, const char *what,
             GError **error)
{
  int r = util_link_tmpfile (fd, dfd, path, &w->link_empty_path);
  if (r < 0 && errno == ENOENT && make_object_dir (dfd, path))
    r = util_link_tmpfile (fd, dfd, path, &w->link_empty_path);
  if (r == 0 || errno == EEXIST)
    return TRUE;
  return util_fail (error, "%s: %s object %s: %s", w->repo_path, what, path, g_strerror (errno));
}

/* Is the object at PATH in the repository or this transaction already? */
static gboolean
have_object (StagingWriter *w, const char *path)
{
  struct stat st;
  return g_hash_table_contains (w->staged, path)
         || fstatat (w->objects_dfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Count SIZE bytes against the repository's min-free-space reserve. */
static gboolean
reserve_space (StagingWriter *w, gsize size, GError **error)
{
  if (w->free_blocks == G_MAXUINT64)
    return TRUE;
  guint64 blocks = size / w->block_size + 1;
  if (blocks > w->free_blocks)
    return util_fail (error, "%s: writing %zu more bytes would go below the repository's "
                      "min-free-space setting", w->repo_path, size);
  w->free_blocks -= blocks;
  return TRUE;
}

/* The written object FD (owned) goes into the transaction as PATH: it waits
 * for the syncfs, or is linked into the staging directory at once; with
 * fsync off, into objects/ at once. */
static gboolean
add_object (StagingWriter *w, int fd, const char *path, GError **error)
{
  util_autofd int owned = fd;
  g_hash_table_add (w->staged, g_strdup (path));
  if (!w->sync)
    return link_object (w, owned, w->objects_dfd, path, "storing", error);
  if (w->max_pending == 0)
    return link_object (w, owned, w->stage_dfd, path, "staging", error);

  Pending p = { .fd = owned };
  g_strlcpy (p.path, path, sizeof p.path);
  g_array_append_val (w->pending, p);
  owned = -1;
  /* Out of file descriptors to hold them: sync and link what waits. */
  if (w->pending->len < w->max_pending)
    return TRUE;
  if (syncfs (w->repo_dfd) < 0)
    return util_fail (error, "%s: syncing the file system: %s", w->repo_path, g_strerror (errno));
  return staging_writer_publish (w, error);
}

gboolean
staging_write_regular (StagingWriter *w, const char *checksum, guint32 uid, guint32 gid,
                       guint32 mode, GVariant *xattrs, const guint8 *data, gsize size,
                       GError **error)
{
  char path[OBJECT_PATH_MAX];
  object_path (path, checksum, OSTREE_OBJECT_TYPE_FILE);
  if (have_object (w, path))
    return TRUE;
  if (!reserve_space (w, size, error))
    return FALSE;
  util_autofd int fd = openat (w->stage_dfd, ".", O_WRONLY | O_TMPFILE | O_CLOEXEC, 0644);
  if (fd < 0 || !write_all (fd, data, size) || !set_metadata (w, fd, uid, gid, mode, xattrs))
    return util_fail (error, "%s: writing object %s: %s", w->repo_path, checksum,
                      g_strerror (errno));
  int owned = fd;
  fd = -1;
  return add_object (w, owned, path, error);
}

gboolean
staging_write_symlink (StagingWriter *w, const char *checksum, guint32 uid, guint32 gid,
                       const char *target, GVariant *xattrs, GError **error)
{
  char path[OBJECT_PATH_MAX];
  object_path (path, checksum, OSTREE_OBJECT_TYPE_FILE);
  if (have_object (w, path))
    return TRUE;
  if (w->mode == OSTREE_REPO_MODE_BARE_USER)
    {
      /* A regular file holding the target (and its terminating NUL, as
       * libostree writes it); the rest in user.ostreemeta. */
      gsize size = strlen (target) + 1;
      if (!reserve_space (w, size, error))
        return FALSE;
      util_autofd int fd = openat (w->stage_dfd, ".", O_WRONLY | O_TMPFILE | O_CLOEXEC, 0644);
      if (fd < 0 || !write_all (fd, (const guint8 *) target, size)
          || !set_metadata (w, fd, uid, gid, S_IFLNK | 0777, xattrs))
        return util_fail (error, "%s: writing object %s: %s", w->repo_path, checksum,
                          g_strerror (errno));
      int owned = fd;
      fd = -1;
      return add_object (w, owned, path, error);
    }

  /* bare: the symlink itself, made in the staging directory (and, with
   * fsync off, renamed into objects/ at once) */
  if (!reserve_space (w, 0, error))
    return FALSE;
  int r = symlinkat (target, w->stage_dfd, path);
  if (r < 0 && errno == ENOENT && make_object_dir (w->stage_dfd, path))
    r = symlinkat (target, w->stage_dfd, path);
  if (r < 0 && errno != EEXIST)
    return util_fail (error, "%s: staging object %s: %s", w->repo_path, path, g_strerror (errno));
  /* (libostree leaves a symlink's mtime as it is.) */
  char proc[PATH_MAX];
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d/%s", w->stage_dfd, path);
  if (fchownat (w->stage_dfd, path, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
    return util_fail (error, "%s: staging object %s: %s", w->repo_path, path, g_strerror (errno));
  if (xattrs != NULL && !util_path_set_xattrs (proc, xattrs, w->repo_path, error))
    return FALSE;
  g_hash_table_add (w->staged, g_strdup (path));
  if (w->sync)
    return TRUE;
  if (rename_object (w->stage_dfd, path, w->objects_dfd, path) < 0)
    return util_fail (error, "%s: storing object %s: %s", w->repo_path, path, g_strerror (errno));
  return TRUE;
}

char *
staging_write_metadata (StagingWriter *w, OstreeObjectType type, GVariant *object,
                        GError **error)
{
  g_autoptr(GVariant) sunk = g_variant_ref_sink (object);
  g_autoptr(GVariant) normal = g_variant_get_normal_form (sunk);
  gsize size = g_variant_get_size (normal);
  const guint8 *data = g_variant_get_data (normal);
  g_autoptr(Sha256) sha = sha256_new ();
  sha256_update (sha, data, size);
  g_autofree char *checksum = sha256_finish_hex (sha);

  char path[OBJECT_PATH_MAX];
  object_path (path, checksum, type);
  if (have_object (w, path))
    return g_steal_pointer (&checksum);
  if (!reserve_space (w, size, error))
    return NULL;
  util_autofd int fd = openat (w->stage_dfd, ".", O_WRONLY | O_TMPFILE | O_CLOEXEC, 0644);
  if (fd < 0 || !write_all (fd, data, size) || fchmod (fd, 0644) < 0)
    return util_fail (error, "%s: writing object %s: %s", w->repo_path, path,
                      g_strerror (errno)), NULL;
  int owned = fd;
  fd = -1;
  if (!add_object (w, owned, path, error))
    return NULL;
  return g_steal_pointer (&checksum);
}

gboolean
staging_write_mtree (StagingWriter *w, OstreeMutableTree *mtree, GError **error)
{
  if (ostree_mutable_tree_get_contents_checksum (mtree) != NULL)
    return TRUE;
  if (ostree_mutable_tree_get_metadata_checksum (mtree) == NULL)
    return util_fail (error, "%s: a directory without metadata cannot be committed", w->repo_path);

  GHashTable *subdirs = ostree_mutable_tree_get_subdirs (mtree);
  g_autoptr(GPtrArray) dir_names = util_sorted_keys (subdirs);
  GVariantBuilder dirs;
  g_variant_builder_init (&dirs, G_VARIANT_TYPE ("a(sayay)"));
  for (guint i = 0; i < dir_names->len; i++)
    {
      OstreeMutableTree *child = g_hash_table_lookup (subdirs, dir_names->pdata[i]);
      if (!staging_write_mtree (w, child, error))
        return FALSE;
      g_variant_builder_add (
          &dirs, "(s@ay@ay)", (const char *) dir_names->pdata[i],
          ostree_checksum_to_bytes_v (ostree_mutable_tree_get_contents_checksum (child)),
          ostree_checksum_to_bytes_v (ostree_mutable_tree_get_metadata_checksum (child)));
    }

  GHashTable *files = ostree_mutable_tree_get_files (mtree);
  g_autoptr(GPtrArray) file_names = util_sorted_keys (files);
  GVariantBuilder filesb;
  g_variant_builder_init (&filesb, G_VARIANT_TYPE ("a(say)"));
  for (guint i = 0; i < file_names->len; i++)
    g_variant_builder_add (&filesb, "(s@ay)", (const char *) file_names->pdata[i],
                           ostree_checksum_to_bytes_v (g_hash_table_lookup (files,
                                                                            file_names->pdata[i])));

  g_autoptr(GVariant) tree = g_variant_ref_sink (
      g_variant_new ("(@a(say)@a(sayay))", g_variant_builder_end (&filesb),
                     g_variant_builder_end (&dirs)));
  g_autofree char *checksum = staging_write_metadata (w, OSTREE_OBJECT_TYPE_DIR_TREE, tree, error);
  if (checksum == NULL)
    return FALSE;
  ostree_mutable_tree_set_contents_checksum (mtree, checksum);
  return TRUE;
}

gboolean
staging_writer_publish (StagingWriter *w, GError **error)
{
  while (w->pending->len > 0)
    {
      Pending *p = &g_array_index (w->pending, Pending, w->pending->len - 1);
      util_autofd int fd = p->fd;
      char path[OBJECT_PATH_MAX];
      g_strlcpy (path, p->path, sizeof path);
      g_array_set_size (w->pending, w->pending->len - 1);
      if (!link_object (w, fd, w->objects_dfd, path, "storing", error))
        return FALSE;
    }
  return TRUE;
}
