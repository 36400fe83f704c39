/* writer.c — objects of a bare or bare-user repository, written here.
 *
 * The objects are the ones libostree writes (a regular file is a file given
 * its owner, mode, xattrs and mtime 0; in bare-user the owner, mode and
 * xattrs go into user.ostreemeta, a symlink is a regular file holding its
 * target; dirmeta, dirtree and commit objects are their variants' bytes),
 * minus what costs time and gives nothing here: libostree writes content
 * in 8 KiB writes after a fallocate(), hashes it with GLib's portable
 * SHA-256, looks for every object in its staging directory and makes a
 * directory for it there.
 *
 * With sync (core.fsync, the default) an object is an O_TMPFILE, linked
 * nowhere, until object_writer_publish(), which the caller runs after a
 * syncfs(): then it is linked straight into objects/XX/, so no object ever
 * appears there before its content is on disk.  A bare symlink cannot be an
 * O_TMPFILE: it waits in the staging directory under a name of its own and
 * is renamed into objects/ at the same time (likewise the objects made
 * while the process is short of file descriptors).  Without sync each
 * object goes into objects/ at once, as libostree puts them then. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/sha256.h"
#include "base/util.h"
#include "barestore/writer.h"


typedef struct {
  int fd;                      /* an O_TMPFILE, or -1 for a file in the staging directory */
  char staged[32];             /* its name there */
  char path[OBJECTS_PATH_MAX];
} Pending;

struct ObjectWriter {
  gboolean bare_user;
  int repo_dfd;                /* not owned */
  int stage_dfd;
  int objects_dfd;
  GHashTable *written;         /* paths of the objects this writer made */
  gboolean sync;
  GArray *pending;             /* of Pending: written, waiting for a syncfs */
  guint max_pending;           /* open files this process can spare; 0: none */
  gboolean link_empty_path;    /* linkat (fd, "", ..., AT_EMPTY_PATH) works */
  struct rlimit saved_nofile;  /* the file limit to put back, when it was raised */
  gboolean raised_nofile;
  guint64 block_size;
  guint64 free_blocks;         /* G_MAXUINT64: no min-free-space limit */
  char *repo_path;             /* for messages */
  PartialMarks *marks;         /* not owned; NULL: none */
};

static void
pending_clear (Pending *p)
{
  util_fd_close (&p->fd);
}

void
object_writer_free (ObjectWriter *w)
{
  if (w == NULL)
    return;
  for (guint i = 0; i < w->pending->len; i++)
    {
      Pending *p = &g_array_index (w->pending, Pending, i);
      if (p->fd < 0)
        (void) unlinkat (w->stage_dfd, p->staged, 0);
      pending_clear (p);
    }
  util_fd_close (&w->stage_dfd);
  util_fd_close (&w->objects_dfd);
  g_array_unref (w->pending);
  if (w->raised_nofile)
    (void) setrlimit (RLIMIT_NOFILE, &w->saved_nofile);
  g_hash_table_unref (w->written);
  g_free (w->repo_path);
  g_free (w);
}

/* File descriptors the writer leaves free of the process's limit for
 * everything else: the files made on other threads and not added yet
 * among them. */
#define SPARE_FDS 256
G_STATIC_ASSERT (OBJECT_WRITER_MADE_MAX <= SPARE_FDS / 2);

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

ObjectWriter *
object_writer_new (const ObjectWriterConfig *config)
{
  /* Only on file systems known to support O_TMPFILE (a probe would make
   * and delete a file every time). */
  struct statfs fs;
  struct statvfs vfs;
  if (fstatfs (config->stage_dfd, &fs) < 0 || !has_tmpfile (fs.f_type)
      || fstatvfs (config->repo_dfd, &vfs) < 0)
    return NULL;

  g_autoptr(ObjectWriter) w = g_new0 (ObjectWriter, 1);
  w->bare_user = config->bare_user;
  w->repo_dfd = config->repo_dfd;
  w->stage_dfd = fcntl (config->stage_dfd, F_DUPFD_CLOEXEC, 3);
  w->objects_dfd = openat (config->repo_dfd, "objects", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  w->link_empty_path = TRUE;
  w->sync = config->sync;
  w->written = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  w->pending = g_array_new (FALSE, FALSE, sizeof (Pending));
  w->repo_path = g_strdup (config->repo_path);
  w->marks = config->marks;
  if (w->stage_dfd < 0 || w->objects_dfd < 0)
    return NULL;
  /* Written objects wait as open files for the syncfs: as many as the
   * file limit allows, raised towards the hard limit while the writer
   * lives, keeping SPARE_FDS for everything else. */
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
      w->max_pending = nofile.rlim_cur > 2 * SPARE_FDS
                         ? (guint) MIN (nofile.rlim_cur - SPARE_FDS, 65536) : 0;
    }
  w->block_size = vfs.f_bsize > 0 ? vfs.f_bsize : 4096;
  /* As libostree reckons it: what is free (for root) or available (for
   * others), less the reserve min-free-space-* keeps. */
  guint64 free_blocks = getuid () == 0 ? vfs.f_bfree : vfs.f_bavail;
  guint64 reserved_blocks = config->min_free_bytes / w->block_size;
  w->free_blocks = config->min_free_bytes == 0 ? G_MAXUINT64
                   : free_blocks > reserved_blocks ? free_blocks - reserved_blocks : 0;
  return g_steal_pointer (&w);
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
set_metadata (ObjectWriter *w, int fd, guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs)
{
  if (!w->bare_user)
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

/* Link the O_TMPFILE FD into objects/ as PATH, making its XX directory
 * when it is missing; an object already there is fine. */
static gboolean
link_object (ObjectWriter *w, int fd, const char *path, GError **error)
{
  int r = util_link_tmpfile (fd, w->objects_dfd, path, &w->link_empty_path);
  if (r < 0 && errno == ENOENT && objects_make_dir (w->objects_dfd, path))
    r = util_link_tmpfile (fd, w->objects_dfd, path, &w->link_empty_path);
  if (r == 0 || errno == EEXIST)
    return TRUE;
  return util_fail (error, "%s: storing object %s: %s", w->repo_path, path, g_strerror (errno));
}

/* Rename the staged file NAME into objects/ as PATH (making its XX
 * directory when it is missing). */
static gboolean
move_object (ObjectWriter *w, const char *name, const char *path, GError **error)
{
  int r = renameat (w->stage_dfd, name, w->objects_dfd, path);
  if (r < 0 && errno == ENOENT && objects_make_dir (w->objects_dfd, path))
    r = renameat (w->stage_dfd, name, w->objects_dfd, path);
  if (r == 0)
    return TRUE;
  int errsv = errno;
  (void) unlinkat (w->stage_dfd, name, 0);
  return util_fail (error, "%s: storing object %s: %s", w->repo_path, path, g_strerror (errsv));
}

/* A new file in the staging directory, linked nowhere, to write an object
 * into; -1 with errno set. */
static int
open_object_file (ObjectWriter *w)
{
  return openat (w->stage_dfd, ".", O_WRONLY | O_TMPFILE | O_CLOEXEC, 0644);
}

/* Is the object PATH ("XX/REST.TYPE") in objects/, or written here? */
static gboolean
has_object (ObjectWriter *w, const char *path)
{
  struct stat st;
  return g_hash_table_contains (w->written, path)
         || fstatat (w->objects_dfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Count SIZE bytes against the repository's min-free-space reserve. */
static gboolean
reserve_space (ObjectWriter *w, guint64 size, GError **error)
{
  if (w->free_blocks == G_MAXUINT64)
    return TRUE;
  guint64 blocks = size / w->block_size + 1;
  if (blocks > w->free_blocks)
    return util_fail (error, "%s: writing %" G_GUINT64_FORMAT " more bytes would go below the "
                      "repository's min-free-space setting", w->repo_path, size);
  w->free_blocks -= blocks;
  return TRUE;
}

/* A new name in the staging directory for a file that waits there. */
static gboolean
stage_name (ObjectWriter *w, char name[32], gboolean (*make) (ObjectWriter *, const char *, gpointer),
            gpointer data)
{
  for (int attempt = 0; attempt < 100; attempt++)
    {
      g_snprintf (name, 32, OBJECT_WRITER_STAGE_PREFIX "%08x%08x", g_random_int (),
                  g_random_int ());
      if (make (w, name, data))
        return TRUE;
      if (errno != EEXIST)
        return FALSE;
    }
  return FALSE;
}

static gboolean
link_into_stage (ObjectWriter *w, const char *name, gpointer fd)
{
  gboolean by_fd = w->link_empty_path;
  return util_link_tmpfile (GPOINTER_TO_INT (fd), w->stage_dfd, name, &by_fd) == 0;
}

static gboolean
symlink_into_stage (ObjectWriter *w, const char *name, gpointer target)
{
  return symlinkat (target, w->stage_dfd, name) == 0;
}

/* The written object FD (owned) is PATH: it waits for the syncfs (as an
 * open file, or linked into the staging directory when file descriptors
 * run short), or with sync off goes into objects/ at once. */
static gboolean
add_object (ObjectWriter *w, int fd, const char *path, GError **error)
{
  util_autofd int owned = fd;
  g_hash_table_add (w->written, g_strdup (path));
  if (!w->sync)
    return link_object (w, owned, path, error);

  Pending p = { .fd = -1 };
  g_strlcpy (p.path, path, sizeof p.path);
  if (w->max_pending == 0)
    {
      if (!stage_name (w, p.staged, link_into_stage, GINT_TO_POINTER (owned)))
        return util_fail (error, "%s: staging object %s: %s", w->repo_path, path,
                          g_strerror (errno));
    }
  else
    {
      p.fd = owned;
      owned = -1;
    }
  g_array_append_val (w->pending, p);
  /* Out of file descriptors to hold them: sync and link what waits. */
  if (w->max_pending == 0 || w->pending->len < w->max_pending)
    return TRUE;
  if (syncfs (w->repo_dfd) < 0)
    return util_fail (error, "%s: syncing the file system: %s", w->repo_path, g_strerror (errno));
  return object_writer_publish (w, error);
}

/* The object PATH (CHECKSUM, which is taken) in the open file *FD (taken
 * too), its content written: given its metadata (a content object's owner,
 * MODE and XATTRS; with METADATA_OBJECT mode 0644) and added. */
static char *
finish_object (ObjectWriter *w, int *fd, const char *path, char *checksum,
               gboolean metadata_object, guint32 uid, guint32 gid, guint32 mode,
               GVariant *xattrs, GError **error)
{
  g_autofree char *owned_checksum = checksum;
  util_autofd int owned = *fd;
  *fd = -1;
  if (!(metadata_object ? fchmod (owned, 0644) == 0 : set_metadata (w, owned, uid, gid, mode, xattrs)))
    return util_fail (error, "%s: writing object %s: %s", w->repo_path, path,
                      g_strerror (errno)), NULL;
  int added = owned;
  owned = -1;
  if (!add_object (w, added, path, error))
    return NULL;
  return g_steal_pointer (&owned_checksum);
}

/* Store DATA (SIZE bytes) as the object PATH (CHECKSUM, taken) unless
 * the repository or this writer has it; see finish_object() for the
 * rest. */
static char *
store (ObjectWriter *w, const char *path, char *checksum, gboolean metadata_object, guint32 uid,
       guint32 gid, guint32 mode, GVariant *xattrs, const guint8 *data, gsize size,
       GError **error)
{
  g_autofree char *owned_checksum = checksum;
  if (has_object (w, path))
    return g_steal_pointer (&owned_checksum);
  if (!reserve_space (w, size, error))
    return NULL;
  util_autofd int fd = open_object_file (w);
  if (fd < 0 || !write_all (fd, data, size))
    return util_fail (error, "%s: writing object %s: %s", w->repo_path, path,
                      g_strerror (errno)), NULL;
  return finish_object (w, &fd, path, g_steal_pointer (&owned_checksum), metadata_object, uid, gid,
                        mode, xattrs, error);
}

char *
object_writer_regular (ObjectWriter *w, GHashTable *headers, guint32 uid, guint32 gid,
                       guint32 mode, GVariant *xattrs, const guint8 *data, gsize size,
                       GError **error)
{
  g_autoptr(GBytes) header = objects_regular_header (headers, uid, gid, mode, xattrs, error);
  if (header == NULL)
    return NULL;
  char *checksum = objects_content_checksum (header, data, size);
  char path[OBJECTS_PATH_MAX];
  objects_type_path (path, checksum, OBJECTS_FILE);
  return store (w, path, checksum, FALSE, uid, gid, mode, xattrs, data, size, error);
}

struct ObjectWriterMade {
  int fd;
  guint64 size;
  char checksum[65];
  char path[OBJECTS_PATH_MAX];
};

void
object_writer_made_free (ObjectWriterMade *made)
{
  if (made == NULL)
    return;
  util_fd_close (&made->fd);
  g_free (made);
}

ObjectWriterMade *
object_writer_make_checked (ObjectWriter *w, const char *expected, guint32 uid, guint32 gid,
                            guint32 mode, GVariant *xattrs, const guint8 *data, gsize size,
                            GError **error)
{
  /* (No header cache: it is not shared between threads.) */
  g_autoptr(GBytes) header = objects_regular_header (NULL, uid, gid, mode, xattrs, error);
  if (header == NULL)
    return NULL;
  g_autofree char *checksum = objects_content_checksum (header, data, size);
  if (strcmp (checksum, expected) != 0)
    return util_fail (error, "its content has checksum %s", checksum), NULL;
  g_autoptr(ObjectWriterMade) made = g_new0 (ObjectWriterMade, 1);
  made->size = size;
  g_strlcpy (made->checksum, checksum, sizeof made->checksum);
  objects_type_path (made->path, checksum, OBJECTS_FILE);
  made->fd = open_object_file (w);
  if (made->fd < 0 || !write_all (made->fd, data, size)
      || !set_metadata (w, made->fd, uid, gid, mode, xattrs))
    return util_fail (error, "%s: writing object %s: %s", w->repo_path, made->path,
                      g_strerror (errno)), NULL;
  return g_steal_pointer (&made);
}

/* READ's SIZE bytes added to SHA and written to FD, 256 KiB at a time:
 * refused as soon as READ gives more than SIZE. */
static gboolean
copy_checked (int fd, Sha256 *sha, guint64 size, ObjectWriterRead read, gpointer user_data,
              const char *repo_path, GError **error)
{
  g_autofree guint8 *buf = g_malloc (256 * 1024);
  guint64 done = 0;
  for (;;)
    {
      gssize n = read (user_data, buf, 256 * 1024, error);
      if (n < 0)
        return FALSE;
      if (n == 0)
        break;
      done += n;
      if (done > size)
        return util_fail (error, "longer than its header says (%" G_GUINT64_FORMAT " bytes)", size);
      sha256_update (sha, buf, n);
      if (!write_all (fd, buf, n))
        return util_fail (error, "%s: writing an object: %s", repo_path, g_strerror (errno));
    }
  if (done != size)
    return util_fail (error, "truncated (%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " bytes)",
                      done, size);
  return TRUE;
}

ObjectWriterMade *
object_writer_make_checked_stream (ObjectWriter *w, const char *expected, guint32 uid,
                                   guint32 gid, guint32 mode, GVariant *xattrs, guint64 size,
                                   ObjectWriterRead read, gpointer user_data, GError **error)
{
  g_autoptr(GBytes) header = objects_regular_header (NULL, uid, gid, mode, xattrs, error);
  if (header == NULL)
    return NULL;
  g_autoptr(ObjectWriterMade) made = g_new0 (ObjectWriterMade, 1);
  made->size = size;
  made->fd = open_object_file (w);
  if (made->fd < 0)
    return util_fail (error, "%s: writing an object: %s", w->repo_path, g_strerror (errno)), NULL;
  g_autoptr(Sha256) sha = sha256_new ();
  gsize header_len;
  const guint8 *header_data = g_bytes_get_data (header, &header_len);
  sha256_update (sha, header_data, header_len);
  if (!copy_checked (made->fd, sha, size, read, user_data, w->repo_path, error))
    return NULL;
  g_autofree char *checksum = sha256_finish_hex (sha);
  if (strcmp (checksum, expected) != 0)
    return util_fail (error, "its content has checksum %s", checksum), NULL;
  g_strlcpy (made->checksum, checksum, sizeof made->checksum);
  objects_type_path (made->path, checksum, OBJECTS_FILE);
  if (!set_metadata (w, made->fd, uid, gid, mode, xattrs))
    return util_fail (error, "%s: writing object %s: %s", w->repo_path, made->path,
                      g_strerror (errno)), NULL;
  return g_steal_pointer (&made);
}

char *
object_writer_add_made (ObjectWriter *w, ObjectWriterMade *made, GError **error)
{
  g_autoptr(ObjectWriterMade) owned = made;
  if (has_object (w, owned->path))
    return g_strdup (owned->checksum);
  /* (Counted once written: what runs past the reserve is at most the
   * files made and not added yet.) */
  if (!reserve_space (w, owned->size, error))
    return NULL;
  int fd = owned->fd;
  owned->fd = -1;
  if (!add_object (w, fd, owned->path, error))
    return NULL;
  return g_strdup (owned->checksum);
}

char *
object_writer_regular_stream (ObjectWriter *w, guint32 uid, guint32 gid, guint32 mode,
                              GVariant *xattrs, guint64 size, ObjectWriterRead read,
                              gpointer user_data, GError **error)
{
  g_autoptr(GBytes) header = objects_regular_header (NULL, uid, gid, mode, xattrs, error);
  if (header == NULL || !reserve_space (w, size, error))
    return NULL;
  util_autofd int fd = open_object_file (w);
  if (fd < 0)
    return util_fail (error, "%s: writing an object: %s", w->repo_path, g_strerror (errno)), NULL;
  g_autoptr(Sha256) sha = sha256_new ();
  gsize header_len;
  const guint8 *header_data = g_bytes_get_data (header, &header_len);
  sha256_update (sha, header_data, header_len);
  if (!copy_checked (fd, sha, size, read, user_data, w->repo_path, error))
    return NULL;
  g_autofree char *checksum = sha256_finish_hex (sha);
  char path[OBJECTS_PATH_MAX];
  objects_type_path (path, checksum, OBJECTS_FILE);
  if (has_object (w, path))
    return g_steal_pointer (&checksum);
  return finish_object (w, &fd, path, g_steal_pointer (&checksum), FALSE, uid, gid, mode, xattrs,
                        error);
}

char *
object_writer_symlink (ObjectWriter *w, guint32 uid, guint32 gid, const char *target,
                       GVariant *xattrs, GError **error)
{
  g_autoptr(GBytes) header = objects_file_header (uid, gid, S_IFLNK | 0777, target, xattrs, error);
  if (header == NULL)
    return NULL;
  g_autofree char *checksum = objects_content_checksum (header, NULL, 0);
  char path[OBJECTS_PATH_MAX];
  objects_type_path (path, checksum, OBJECTS_FILE);
  /* bare-user: a regular file holding the target (and its terminating
   * NUL, as libostree writes it); the rest in user.ostreemeta. */
  if (w->bare_user)
    return store (w, path, g_steal_pointer (&checksum), FALSE, uid, gid, S_IFLNK | 0777, xattrs,
                  (const guint8 *) target, strlen (target) + 1, error);
  if (has_object (w, path))
    return g_steal_pointer (&checksum);

  /* bare: the symlink itself, made in the staging directory (libostree
   * leaves a symlink's mtime as it is). */
  if (!reserve_space (w, 0, error))
    return NULL;
  Pending p = { .fd = -1 };
  g_strlcpy (p.path, path, sizeof p.path);
  if (!stage_name (w, p.staged, symlink_into_stage, (gpointer) target))
    return util_fail (error, "%s: staging object %s: %s", w->repo_path, path,
                      g_strerror (errno)), NULL;
  char proc[PATH_MAX];
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d/%s", w->stage_dfd, p.staged);
  if (fchownat (w->stage_dfd, p.staged, uid, gid, AT_SYMLINK_NOFOLLOW) < 0
      || (xattrs != NULL && !util_path_set_xattrs (proc, xattrs, w->repo_path, NULL)))
    {
      int errsv = errno;
      (void) unlinkat (w->stage_dfd, p.staged, 0);
      return util_fail (error, "%s: staging object %s: %s", w->repo_path, path,
                        g_strerror (errsv)), NULL;
    }
  g_hash_table_add (w->written, g_strdup (path));
  if (!w->sync)
    {
      if (!move_object (w, p.staged, path, error))
        return NULL;
      return g_steal_pointer (&checksum);
    }
  g_array_append_val (w->pending, p);
  return g_steal_pointer (&checksum);
}

/* The detached metadata DETACHED (sunk) of the commit CHECKSUM, as
 * libostree stores it: its normal form in objects/XX/REST.commitmeta. */
static gboolean
store_detached (ObjectWriter *w, const char *checksum, GVariant *detached, GError **error)
{
  g_autoptr(GVariant) normal = g_variant_get_normal_form (detached);
  char path[OBJECTS_PATH_MAX];
  objects_path (path, checksum, "commitmeta");
  g_autofree char *stored = store (w, path, g_strdup (checksum), TRUE, 0, 0, 0, NULL,
                                   g_variant_get_data (normal), g_variant_get_size (normal),
                                   error);
  return stored != NULL;
}

char *
object_writer_metadata (ObjectWriter *w, ObjectsType type, GVariant *object, GVariant *detached,
                        GError **error)
{
  g_autoptr(GVariant) sunk = g_variant_ref_sink (object);
  g_autoptr(GVariant) sunk_detached = detached != NULL ? g_variant_ref_sink (detached) : NULL;
  g_autoptr(GVariant) normal = g_variant_get_normal_form (sunk);
  gsize size = g_variant_get_size (normal);
  const guint8 *data = g_variant_get_data (normal);
  g_autoptr(Sha256) sha = sha256_new ();
  sha256_update (sha, data, size);
  char *checksum = sha256_finish_hex (sha);
  char path[OBJECTS_PATH_MAX];
  objects_type_path (path, checksum, type);
  if (sunk_detached != NULL && !store_detached (w, checksum, sunk_detached, error))
    {
      g_free (checksum);
      return NULL;
    }
  if (type == OBJECTS_COMMIT && w->marks != NULL && !partial_marks_add (w->marks, checksum, error))
    {
      g_free (checksum);
      return NULL;
    }
  return store (w, path, checksum, TRUE, 0, 0, 0, NULL, data, size, error);
}

gboolean
object_writer_publish (ObjectWriter *w, GError **error)
{
  /* In the order written (see writer.h); on failure the objects not yet
   * in objects/ stay pending, for object_writer_free() to drop. */
  guint done = 0;
  gboolean ok = TRUE;
  for (; ok && done < w->pending->len; done++)
    {
      Pending *p = &g_array_index (w->pending, Pending, done);
      if (p->fd >= 0)
        {
          ok = link_object (w, p->fd, p->path, error);
          pending_clear (p);
        }
      else
        ok = move_object (w, p->staged, p->path, error);
    }
  g_array_remove_range (w->pending, 0, done);
  return ok;
}
