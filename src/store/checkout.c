/* checkout.c — hardlink checkout of a bare repository's tree. */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <gio/gunixoutputstream.h>

#include "store/checkout.h"
#include "barestore/objects.h"
#include "base/scratch.h"
#include "base/util.h"

/* The checkout runs on a few threads: each directory is a task that links
 * its files, creates its subdirectories (queued as tasks of their own) and
 * then gives itself its mode (and, as root, its owner and xattrs).
 * Hardlinking is one system call per file, so two cores do it in about half
 * the time. */
typedef struct {
  OstreeRepo *repo;
  gboolean user;           /* bare-user: what ostree's checkout mode USER gives */
  int objects_dfd;
  char *objects_path;      /* for getxattr(), which has no *at() form */
  GCancellable *cancellable;
  GThreadPool *pool;
  GMutex lock;             /* guards what follows */
  GCond idle;
  guint pending;           /* directories queued or being filled */
  GError *error;           /* the first failure; the remaining tasks are skipped */
  GHashTable *dirmetas;    /* checksum -> GVariant */
} Checkout;

typedef struct {
  char *path;              /* the directory, already created */
  char contents[OSTREE_SHA256_STRING_LEN + 1];
  char meta[OSTREE_SHA256_STRING_LEN + 1];
} DirTask;


/* The symlink NAME in DFD dated 0, as OSTree dates every file object of a
 * bare repository, instead of when it was made: a program that records
 * the times of what it reads (man-db's index holds each man page's, and
 * many are symlinks) then records the same in every repository.  A bare
 * repository's symlink objects keep the time they were written, which
 * their hardlinks share: dating one dates the object itself (its content
 * and the commits that name it do not change), so each is dated once.
 * FALSE with errno set when it cannot be. */
static gboolean
date_symlink (int dfd, const char *name)
{
  const struct timespec times[2] = { { 0, UTIME_OMIT }, { 0, 0 } };
  return utimensat (dfd, name, times, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The object has reached the filesystem's link limit: a copy instead. */
static gboolean
copy_object (Checkout *co, const char *checksum, int dfd, const char *name, const char *path,
             GError **error)
{
  g_autoptr(GInputStream) input = NULL;
  g_autoptr(GFileInfo) info = NULL;
  g_autoptr(GVariant) xattrs = NULL;
  if (!ostree_repo_load_file (co->repo, checksum, &input, &info, &xattrs, co->cancellable, error))
    return FALSE;
  guint32 uid = g_file_info_get_attribute_uint32 (info, "unix::uid");
  guint32 gid = g_file_info_get_attribute_uint32 (info, "unix::gid");
  guint32 mode = g_file_info_get_attribute_uint32 (info, "unix::mode");
  if (g_file_info_get_file_type (info) == G_FILE_TYPE_SYMBOLIC_LINK)
    {
      if (symlinkat (g_file_info_get_symlink_target (info), dfd, name) < 0
          || fchownat (dfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
        return util_fail (error, "%s: %s", path, g_strerror (errno));
      if (!date_symlink (dfd, name))
        return util_fail (error, "%s: %s", path, g_strerror (errno));
      return TRUE;
    }
  int fd = openat (dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  g_autoptr(GOutputStream) out = g_unix_output_stream_new (fd, TRUE);
  if (g_output_stream_splice (out, input, 0, co->cancellable, error) < 0)
    return FALSE;
  if (fchown (fd, uid, gid) < 0 || fchmod (fd, mode & 07777) < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  return xattrs == NULL || util_fd_set_xattrs (fd, xattrs, path, error);
}

/* Up to LEN bytes of FD into BUF, fewer only at the end of the file:
 * how many, or -1 (errno set). */
static ssize_t
read_full (int fd, char *buf, gsize len)
{
  gsize got = 0;
  while (got < len)
    {
      ssize_t n = read (fd, buf + got, len - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      if (n == 0)
        break;
      got += n;
    }
  return got;
}

/* Copy the object's bytes (no metadata) into the new file FD. */
static gboolean
copy_bytes (Checkout *co, const char *object, int fd, const char *path, GError **error)
{
  util_autofd int src = openat (co->objects_dfd, object, O_RDONLY | O_CLOEXEC);
  if (src < 0)
    return util_fail (error, "objects/%s: %s", object, g_strerror (errno));
  char buf[65536];
  for (;;)
    {
      ssize_t n = read_full (src, buf, sizeof buf);
      if (n < 0)
        return util_fail (error, "objects/%s: cannot read: %s", object, g_strerror (errno));
      if (n == 0)
        return TRUE;
      for (ssize_t done = 0; done < n;)
        {
          ssize_t w = write (fd, buf + done, n - done);
          if (w < 0 && errno == EINTR)
            continue;
          if (w < 0)
            return util_fail (error, "%s: cannot write: %s", path, g_strerror (errno));
          done += w;
        }
    }
}

/* bare-user: a file of its own with the object's content and the stored
 * MODE, less what a user cannot keep (setuid, setgid), readable by its
 * owner — what ostree's checkout mode USER makes of such a file. */
static gboolean
copy_user (Checkout *co, const char *object, gboolean empty, guint32 mode, int dfd,
           const char *name, const char *path, GError **error)
{
  int fd = openat (dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  gboolean ok = empty || copy_bytes (co, object, fd, path, error);
  if (ok && fchmod (fd, (mode & 07777 & ~(S_ISUID | S_ISGID)) | S_IRUSR) < 0)
    ok = util_fail (error, "%s: %s", path, g_strerror (errno));
  close (fd);
  return ok;
}

/* bare-user: a symlink is stored as a regular file holding its target. */
static gboolean
symlink_user (Checkout *co, const char *object, int dfd, const char *name, const char *path,
              GError **error)
{
  util_autofd int src = openat (co->objects_dfd, object, O_RDONLY | O_CLOEXEC);
  if (src < 0)
    return util_fail (error, "objects/%s: %s", object, g_strerror (errno));
  char target[PATH_MAX + 1];
  ssize_t len = read_full (src, target, sizeof target);
  if (len < 0)
    return util_fail (error, "objects/%s: cannot read: %s", object, g_strerror (errno));
  if (len == 0 || (gsize) len >= sizeof target)
    return util_fail (error, "objects/%s: not a symlink target", object);
  target[len] = '\0';
  if (symlinkat (target, dfd, name) < 0 || !date_symlink (dfd, name))
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  return TRUE;
}

/* bare-user: the mode OSTree stores for the file object at ABS_OBJECT, from
 * its user.ostreemeta xattr ((uuua(ayay)), big-endian). */
static gboolean
read_user_mode (const char *abs_object, guint32 *out_mode, GError **error)
{
  guint8 small[256];
  g_autofree guint8 *big = NULL;
  guint8 *data = small;
  ssize_t len = lgetxattr (abs_object, "user.ostreemeta", small, sizeof small);
  if (len < 0 && errno == ERANGE)
    {
      len = lgetxattr (abs_object, "user.ostreemeta", NULL, 0);
      if (len > 0)
        {
          data = big = g_malloc (len);
          len = lgetxattr (abs_object, "user.ostreemeta", big, len);
        }
    }
  if (len < 0)
    return util_fail (error, "%s: cannot read its user.ostreemeta: %s (not a bare-user "
                      "object?)", abs_object, g_strerror (errno));
  g_autoptr(GVariant) meta = g_variant_ref_sink (
      g_variant_new_from_data (G_VARIANT_TYPE ("(uuua(ayay))"), data, len, FALSE, NULL, NULL));
  guint32 mode = 0;
  g_variant_get_child (meta, 2, "u", &mode);
  *out_mode = GUINT32_FROM_BE (mode);
  return TRUE;
}

/* bare-user: regular files are hardlinked to their objects, whose mode is
 * the stored one less setuid, setgid and write for others; symlinks are
 * made, and a file that is empty or unreadable by its owner is a copy, as
 * ostree's checkout does (so that fakeroot, which knows files by inode,
 * does not see all empty files as one). */
static gboolean
checkout_file_user (Checkout *co, const char *object, const char *abs_object, int dfd,
                    const char *dir_path, const char *name, GError **error)
{
  guint32 mode = 0;
  if (!read_user_mode (abs_object, &mode, error))
    return FALSE;
  g_autofree char *path = NULL;
  if (S_ISLNK (mode))
    {
      path = g_build_filename (dir_path, name, NULL);
      return symlink_user (co, object, dfd, name, path, error);
    }
  struct stat st;
  if (fstatat (co->objects_dfd, object, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return util_fail (error, "objects/%s: %s", object, g_strerror (errno));
  if (!S_ISREG (mode) || !S_ISREG (st.st_mode))
    return util_fail (error, "objects/%s: not a regular file", object);
  gboolean empty = st.st_size == 0;
  if (!empty && (mode & S_IRUSR) != 0)
    {
      if (linkat (co->objects_dfd, object, dfd, name, 0) == 0)
        return TRUE;
      if (errno != EMLINK)
        {
          path = g_build_filename (dir_path, name, NULL);
          return util_fail (error, "%s: cannot hardlink the object %s: %s", path, object,
                            g_strerror (errno));
        }
    }
  path = g_build_filename (dir_path, name, NULL);
  return copy_user (co, object, empty, mode, dfd, name, path, error);
}

/* bare: the object is the file, owner, mode and xattrs included. */
static gboolean
checkout_file_bare (Checkout *co, const char *checksum, const char *object, int dfd,
                    const char *dir_path, const char *name, GError **error)
{
  if (linkat (co->objects_dfd, object, dfd, name, 0) == 0)
    {
      /* (a symlink object written before, not dated yet) */
      struct stat st;
      if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0
          && (!S_ISLNK (st.st_mode) || (st.st_mtim.tv_sec == 0 && st.st_mtim.tv_nsec == 0)
              || date_symlink (dfd, name)))
        return TRUE;
      g_autofree char *path = g_build_filename (dir_path, name, NULL);
      return util_fail (error, "%s: %s", path, g_strerror (errno));
    }
  g_autofree char *path = g_build_filename (dir_path, name, NULL);
  if (errno != EMLINK)
    return util_fail (error, "%s: cannot hardlink the object %s: %s", path, checksum,
                      g_strerror (errno));
  /* Rare: one copy at a time, libostree's reading included. */
  g_mutex_lock (&co->lock);
  gboolean copied = copy_object (co, checksum, dfd, name, path, error);
  g_mutex_unlock (&co->lock);
  return copied;
}

/* A metadata object of the bare repository, read as it is stored. */
static GVariant *
read_metadata (Checkout *co, const char *checksum, const char *suffix, const GVariantType *type,
               GError **error)
{
  char rel[OBJECTS_PATH_MAX];
  objects_path (rel, checksum, suffix);
  g_autoptr(GBytes) bytes = util_read_at (co->objects_dfd, rel, G_MAXSIZE, error);
  if (bytes == NULL)
    return g_prefix_error (error, "objects/"), NULL;
  return g_variant_ref_sink (g_variant_new_from_bytes (type, bytes, FALSE));
}

static GVariant *
load_dirmeta (Checkout *co, const char *checksum, GError **error)
{
  g_mutex_lock (&co->lock);
  GVariant *meta = g_hash_table_lookup (co->dirmetas, checksum);
  if (meta != NULL)
    g_variant_ref (meta);
  g_mutex_unlock (&co->lock);
  if (meta != NULL)
    return meta;
  meta = read_metadata (co, checksum, "dirmeta", G_VARIANT_TYPE ("(uuua(ayay))"), error);
  if (meta == NULL)
    return NULL;
  g_mutex_lock (&co->lock);
  g_hash_table_replace (co->dirmetas, g_strdup (checksum), g_variant_ref (meta));
  g_mutex_unlock (&co->lock);
  return meta;
}

static gboolean
checkout_failed (Checkout *co)
{
  g_mutex_lock (&co->lock);
  gboolean failed = co->error != NULL;
  g_mutex_unlock (&co->lock);
  return failed;
}

static void
queue_dir (Checkout *co, char *path, const guint8 *contents, const guint8 *meta)
{
  DirTask *task = g_new0 (DirTask, 1);
  task->path = path;
  ostree_checksum_inplace_from_bytes (contents, task->contents);
  ostree_checksum_inplace_from_bytes (meta, task->meta);
  g_mutex_lock (&co->lock);
  co->pending++;
  g_mutex_unlock (&co->lock);
  g_thread_pool_push (co->pool, task, NULL);
}

/* Fill the directory DFD (at PATH) from the dirtree CONTENTS, queue its
 * subdirectories, and give it the metadata META. */
static gboolean
checkout_dir (Checkout *co, int dfd, const char *path, const char *contents, const char *meta,
              GError **error)
{
  if (g_cancellable_set_error_if_cancelled (co->cancellable, error))
    return FALSE;
  g_autoptr(GVariant) dirtree = read_metadata (co, contents, "dirtree",
                                               G_VARIANT_TYPE ("(a(say)a(sayay))"), error);
  if (dirtree == NULL)
    return FALSE;
  g_autoptr(GVariant) files = g_variant_get_child_value (dirtree, 0);
  g_autoptr(GVariant) dirs = g_variant_get_child_value (dirtree, 1);

  /* objects/ as an absolute path, then "ab/cdef….file" written in place */
  gsize prefix = strlen (co->objects_path) + 1;
  g_autofree char *abs_object = g_malloc (prefix + OBJECTS_PATH_MAX);
  memcpy (abs_object, co->objects_path, prefix - 1);
  abs_object[prefix - 1] = '/';
  char *object = abs_object + prefix;
  gsize n = g_variant_n_children (files);
  for (gsize i = 0; i < n; i++)
    {
      const char *name;
      g_autoptr(GVariant) csum_v = NULL;
      g_variant_get_child (files, i, "(&s@ay)", &name, &csum_v);
      const guint8 *csum = ostree_checksum_bytes_peek_validate (csum_v, error);
      if (csum == NULL)
        return FALSE;
      char checksum[OSTREE_SHA256_STRING_LEN + 1];
      ostree_checksum_inplace_from_bytes (csum, checksum);
      objects_type_path (object, checksum, OBJECTS_FILE);
      if (co->user ? !checkout_file_user (co, object, abs_object, dfd, path, name, error)
                   : !checkout_file_bare (co, checksum, object, dfd, path, name, error))
        return FALSE;
    }

  n = g_variant_n_children (dirs);
  for (gsize i = 0; i < n; i++)
    {
      const char *name;
      g_autoptr(GVariant) tree_v = NULL;
      g_autoptr(GVariant) meta_v = NULL;
      g_variant_get_child (dirs, i, "(&s@ay@ay)", &name, &tree_v, &meta_v);
      const guint8 *tree_csum = ostree_checksum_bytes_peek_validate (tree_v, error);
      const guint8 *meta_csum = tree_csum ? ostree_checksum_bytes_peek_validate (meta_v, error) : NULL;
      if (meta_csum == NULL)
        return FALSE;
      char *sub_path = g_build_filename (path, name, NULL);
      if (mkdirat (dfd, name, 0700) < 0)
        {
          util_fail (error, "%s: %s", sub_path, g_strerror (errno));
          g_free (sub_path);
          return FALSE;
        }
      queue_dir (co, sub_path, tree_csum, meta_csum);
    }

  g_autoptr(GVariant) dirmeta = load_dirmeta (co, meta, error);
  if (dirmeta == NULL)
    return FALSE;
  guint32 uid, gid, mode;
  g_autoptr(GVariant) xattrs = NULL;
  g_variant_get (dirmeta, "(uuu@a(ayay))", &uid, &gid, &mode, &xattrs);
  mode = GUINT32_FROM_BE (mode);
  if (!co->user)
    {
      if (!util_fd_set_xattrs (dfd, xattrs, path, error))
        return FALSE;
      if (fchown (dfd, GUINT32_FROM_BE (uid), GUINT32_FROM_BE (gid)) < 0)
        return util_fail (error, "%s: %s", path, g_strerror (errno));
    }
  /* Not root, the owner keeps reading and searching every directory: the
   * tasks of its subdirectories open them by path, and so does fakeroot's
   * scan.  The command sees the stored mode all the same (fakeroot's). */
  guint32 perms = co->user ? (mode & 07777) | S_IRUSR | S_IXUSR : mode & 07777;
  if (fchmod (dfd, perms) < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  /* The time ostree's checkout gives directories (files have their
   * objects'), so that a command sees the same tree every time. */
  const struct timespec times[2] = { { 0, UTIME_OMIT }, { 0, 0 } };
  if (futimens (dfd, times) < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  return TRUE;
}

static void
run_dir_task (gpointer data, gpointer user_data)
{
  DirTask *task = data;
  Checkout *co = user_data;
  g_autoptr(GError) local_error = NULL;
  if (!checkout_failed (co))
    {
      int fd = open (task->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        util_fail (&local_error, "%s: %s", task->path, g_strerror (errno));
      else
        {
          (void) checkout_dir (co, fd, task->path, task->contents, task->meta, &local_error);
          close (fd);
        }
    }
  g_free (task->path);
  g_free (task);

  g_mutex_lock (&co->lock);
  if (local_error != NULL && co->error == NULL)
    co->error = g_steal_pointer (&local_error);
  if (--co->pending == 0)
    g_cond_signal (&co->idle);
  g_mutex_unlock (&co->lock);
}

/* Start a checkout of REPO's objects: its thread pool, ready for
 * queue_dir(). */
static gboolean
checkout_begin (Checkout *co, OstreeRepo *repo, GCancellable *cancellable, GError **error)
{
  OstreeRepoMode mode = ostree_repo_get_mode (repo);
  g_return_val_if_fail (mode == OSTREE_REPO_MODE_BARE || mode == OSTREE_REPO_MODE_BARE_USER,
                        FALSE);
  int objects_dfd = openat (ostree_repo_get_dfd (repo), "objects",
                            O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (objects_dfd < 0)
    return util_fail (error, "the repository's objects directory: %s", g_strerror (errno));
  g_autofree char *repo_path = g_file_get_path (ostree_repo_get_path (repo));
  *co = (Checkout) {
    .repo = repo,
    .user = mode == OSTREE_REPO_MODE_BARE_USER,
    .objects_dfd = objects_dfd,
    .objects_path = g_build_filename (repo_path, "objects", NULL),
    .cancellable = cancellable,
    .dirmetas = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                       (GDestroyNotify) g_variant_unref),
  };
  g_mutex_init (&co->lock);
  g_cond_init (&co->idle);
  guint threads = CLAMP (g_get_num_processors (), 1, 4);
  co->pool = g_thread_pool_new (run_dir_task, co, threads, FALSE, NULL);
  return TRUE;
}

/* Wait for every queued directory, end the checkout, and say whether all
 * went well (ERROR_SO_FAR is a failure of the caller's own, or NULL). */
static gboolean
checkout_end (Checkout *co, GError *error_so_far, GError **error)
{
  g_mutex_lock (&co->lock);
  while (co->pending > 0)
    g_cond_wait (&co->idle, &co->lock);
  g_mutex_unlock (&co->lock);
  g_thread_pool_free (co->pool, FALSE, TRUE);

  g_mutex_clear (&co->lock);
  g_cond_clear (&co->idle);
  g_hash_table_unref (co->dirmetas);
  g_free (co->objects_path);
  close (co->objects_dfd);
  if (error_so_far != NULL)
    {
      g_clear_error (&co->error);
      g_propagate_error (error, error_so_far);
      return FALSE;
    }
  if (co->error != NULL)
    {
      g_propagate_error (error, co->error);
      return FALSE;
    }
  return TRUE;
}

gboolean
checkout_hardlinks (OstreeRepo *repo, const char *contents, const char *meta, const char *path,
                    GCancellable *cancellable, GError **error)
{
  guint8 contents_csum[OSTREE_SHA256_DIGEST_LEN], meta_csum[OSTREE_SHA256_DIGEST_LEN];
  ostree_checksum_inplace_to_bytes (contents, contents_csum);
  ostree_checksum_inplace_to_bytes (meta, meta_csum);
  if (mkdir (path, 0700) < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  Checkout co;
  if (!checkout_begin (&co, repo, cancellable, error))
    return FALSE;
  queue_dir (&co, g_strdup (path), contents_csum, meta_csum);
  return checkout_end (&co, NULL, error);
}

/* --- bringing a checkout from one tree to another --- */

/* A subdirectory as a dirtree names it: its contents and metadata. */
typedef struct {
  char contents[OSTREE_SHA256_STRING_LEN + 1];
  char meta[OSTREE_SHA256_STRING_LEN + 1];
} DirPair;

static gboolean
dir_pair_equal (const DirPair *a, const DirPair *b)
{
  return strcmp (a->contents, b->contents) == 0 && strcmp (a->meta, b->meta) == 0;
}

/* The entries of the dirtree CONTENTS: files (name -> checksum) and
 * directories (name -> DirPair). */
static gboolean
dirtree_entries (Checkout *co, const char *contents, GHashTable **out_files,
                 GHashTable **out_dirs, GError **error)
{
  g_autoptr(GVariant) dirtree = read_metadata (co, contents, "dirtree",
                                               G_VARIANT_TYPE ("(a(say)a(sayay))"), error);
  if (dirtree == NULL)
    return FALSE;
  g_autoptr(GHashTable) files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  GVariantIter iter;
  const char *name;
  GVariant *a, *b;
  g_autoptr(GVariant) file_list = g_variant_get_child_value (dirtree, 0);
  g_variant_iter_init (&iter, file_list);
  while (g_variant_iter_loop (&iter, "(&s@ay)", &name, &a))
    g_hash_table_insert (files, g_strdup (name), ostree_checksum_from_bytes_v (a));
  g_autoptr(GVariant) dir_list = g_variant_get_child_value (dirtree, 1);
  g_variant_iter_init (&iter, dir_list);
  while (g_variant_iter_loop (&iter, "(&s@ay@ay)", &name, &a, &b))
    {
      DirPair *pair = g_new (DirPair, 1);
      ostree_checksum_inplace_from_bytes (ostree_checksum_bytes_peek (a), pair->contents);
      ostree_checksum_inplace_from_bytes (ostree_checksum_bytes_peek (b), pair->meta);
      g_hash_table_insert (dirs, g_strdup (name), pair);
    }
  *out_files = g_steal_pointer (&files);
  *out_dirs = g_steal_pointer (&dirs);
  return TRUE;
}

/* A directory whose metadata changed: its new owner and mode (the same
 * xattrs only: a change of those is not brought over). */
static gboolean
update_dirmeta (Checkout *co, int dfd, const char *path, const char *from_meta,
                const char *to_meta, GError **error)
{
  g_autoptr(GVariant) from = load_dirmeta (co, from_meta, error);
  g_autoptr(GVariant) to = from != NULL ? load_dirmeta (co, to_meta, error) : NULL;
  if (to == NULL)
    return FALSE;
  guint32 uid, gid, mode, old_uid, old_gid, old_mode;
  g_autoptr(GVariant) xattrs = NULL;
  g_autoptr(GVariant) old_xattrs = NULL;
  g_variant_get (to, "(uuu@a(ayay))", &uid, &gid, &mode, &xattrs);
  g_variant_get (from, "(uuu@a(ayay))", &old_uid, &old_gid, &old_mode, &old_xattrs);
  if (!g_variant_equal (xattrs, old_xattrs))
    return util_fail (error, "%s: its extended attributes changed", path);
  if (fchown (dfd, GUINT32_FROM_BE (uid), GUINT32_FROM_BE (gid)) < 0
      || fchmod (dfd, GUINT32_FROM_BE (mode) & 07777) < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  return TRUE;
}

static gboolean update_dir (Checkout *co, int dfd, const char *path, const char *from_contents,
                            const char *from_meta, const char *to_contents, const char *to_meta,
                            GError **error);

/* What left the directory DFD: files gone or changed, directories gone. */
static gboolean
update_remove (Checkout *co, int dfd, const char *path, GHashTable *from_files,
               GHashTable *from_dirs, GHashTable *to_files, GHashTable *to_dirs,
               gboolean *changed, GError **error)
{
  GHashTableIter iter;
  gpointer name, value;
  g_hash_table_iter_init (&iter, from_files);
  while (g_hash_table_iter_next (&iter, &name, &value))
    {
      const char *to = g_hash_table_lookup (to_files, name);
      if (to != NULL && g_str_equal (to, value))
        continue;
      if (unlinkat (dfd, name, 0) < 0)
        return util_fail (error, "%s/%s: %s", path, (char *) name, g_strerror (errno));
      *changed = TRUE;
    }
  g_hash_table_iter_init (&iter, from_dirs);
  while (g_hash_table_iter_next (&iter, &name, &value))
    {
      if (g_hash_table_contains (to_dirs, name))
        continue;
      g_autofree char *sub = g_build_filename (path, name, NULL);
      if (!scratch_rm_rf (sub, error))
        return FALSE;
      *changed = TRUE;
    }
  return TRUE;
}

/* What arrived in the directory DFD, and the subdirectories that changed. */
static gboolean
update_add (Checkout *co, int dfd, const char *path, GHashTable *from_files,
            GHashTable *from_dirs, GHashTable *to_files, GHashTable *to_dirs, gboolean *changed,
            GError **error)
{
  GHashTableIter iter;
  gpointer name, value;
  g_hash_table_iter_init (&iter, to_files);
  while (g_hash_table_iter_next (&iter, &name, &value))
    {
      const char *from = g_hash_table_lookup (from_files, name);
      if (from != NULL && g_str_equal (from, value))
        continue;
      char object[OBJECTS_PATH_MAX];
      objects_type_path (object, value, OBJECTS_FILE);
      if (!checkout_file_bare (co, value, object, dfd, path, name, error))
        return FALSE;
      *changed = TRUE;
    }
  g_hash_table_iter_init (&iter, to_dirs);
  while (g_hash_table_iter_next (&iter, &name, &value))
    {
      const DirPair *from = g_hash_table_lookup (from_dirs, name);
      const DirPair *to = value;
      g_autofree char *sub = g_build_filename (path, name, NULL);
      if (from == NULL)
        {
          guint8 tree[OSTREE_SHA256_DIGEST_LEN], meta[OSTREE_SHA256_DIGEST_LEN];
          ostree_checksum_inplace_to_bytes (to->contents, tree);
          ostree_checksum_inplace_to_bytes (to->meta, meta);
          if (mkdirat (dfd, name, 0700) < 0)
            return util_fail (error, "%s: %s", sub, g_strerror (errno));
          queue_dir (co, g_steal_pointer (&sub), tree, meta);
          *changed = TRUE;
          continue;
        }
      if (dir_pair_equal (from, to))
        continue;
      int sub_dfd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub_dfd < 0)
        return util_fail (error, "%s: %s", sub, g_strerror (errno));
      gboolean ok = update_dir (co, sub_dfd, sub, from->contents, from->meta, to->contents,
                                to->meta, error);
      close (sub_dfd);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

static gboolean
update_dir (Checkout *co, int dfd, const char *path, const char *from_contents,
            const char *from_meta, const char *to_contents, const char *to_meta, GError **error)
{
  if (g_cancellable_set_error_if_cancelled (co->cancellable, error))
    return FALSE;
  g_autoptr(GHashTable) from_files = NULL, from_dirs = NULL, to_files = NULL, to_dirs = NULL;
  if (!dirtree_entries (co, from_contents, &from_files, &from_dirs, error)
      || !dirtree_entries (co, to_contents, &to_files, &to_dirs, error))
    return FALSE;
  gboolean changed = FALSE;
  if (!update_remove (co, dfd, path, from_files, from_dirs, to_files, to_dirs, &changed, error)
      || !update_add (co, dfd, path, from_files, from_dirs, to_files, to_dirs, &changed, error))
    return FALSE;
  if (!g_str_equal (from_meta, to_meta))
    {
      if (!update_dirmeta (co, dfd, path, from_meta, to_meta, error))
        return FALSE;
      changed = TRUE;
    }
  /* As a checkout has it (checkout_dir). */
  const struct timespec times[2] = { { 0, UTIME_OMIT }, { 0, 0 } };
  if (changed && futimens (dfd, times) < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  return TRUE;
}

gboolean
checkout_update (OstreeRepo *repo, const char *path, const char *from_contents,
                 const char *from_meta, const char *to_contents, const char *to_meta,
                 GCancellable *cancellable, GError **error)
{
  if (ostree_repo_get_mode (repo) != OSTREE_REPO_MODE_BARE)
    return util_fail (error, "%s: only a checkout of a bare repository can be updated", path);
  int dfd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  Checkout co;
  if (!checkout_begin (&co, repo, cancellable, error))
    {
      close (dfd);
      return FALSE;
    }
  GError *local_error = NULL;
  (void) update_dir (&co, dfd, path, from_contents, from_meta, to_contents, to_meta,
                     &local_error);
  close (dfd);
  return checkout_end (&co, local_error, error);
}

/* --- fingerprint --- */

/* One entry into SUM: what any change to it in place would move. */
static void
fingerprint_entry (GChecksum *sum, const char *name, const struct stat *st)
{
  /* A file hardlinked to an object shares its inode with every other
   * checkout of it, whose links and unlinks move its ctime: its own
   * changes are the object's.  A directory, and a file of its own (a
   * copy), have their ctime moved by any change to them, their entries
   * included, and by nothing else.  (On a filesystem that keeps whole
   * seconds only, a change in the second the fingerprint was taken goes
   * unseen unless it moves a size, a link count or an inode number.) */
  gboolean own = S_ISDIR (st->st_mode) || st->st_nlink == 1;
  guint64 fields[] = {
    st->st_ino, st->st_mode, st->st_uid, st->st_gid, st->st_size,
    S_ISDIR (st->st_mode) ? st->st_nlink : 0,
    own ? (guint64) st->st_ctim.tv_sec : 0, own ? (guint64) st->st_ctim.tv_nsec : 0,
  };
  g_checksum_update (sum, (const guchar *) name, strlen (name) + 1);
  g_checksum_update (sum, (const guchar *) fields, sizeof fields);
}

static gboolean
fingerprint_dir (GChecksum *sum, int dfd, const char *path, GError **error)
{
  int fd = dup (dfd);
  DIR *dir = fd >= 0 ? fdopendir (fd) : NULL;
  if (dir == NULL)
    {
      if (fd >= 0)
        close (fd);
      return util_fail (error, "%s: %s", path, g_strerror (errno));
    }
  gboolean ok = TRUE;
  struct dirent *de;
  while (ok && (errno = 0, de = readdir (dir)) != NULL)
    {
      if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, ".."))
        continue;
      struct stat st;
      if (fstatat (dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          ok = util_fail (error, "%s/%s: %s", path, de->d_name, g_strerror (errno));
          break;
        }
      fingerprint_entry (sum, de->d_name, &st);
      if (!S_ISDIR (st.st_mode))
        continue;
      g_autofree char *sub = g_build_filename (path, de->d_name, NULL);
      int sub_dfd = openat (dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub_dfd < 0)
        ok = util_fail (error, "%s: %s", sub, g_strerror (errno));
      else
        {
          ok = fingerprint_dir (sum, sub_dfd, sub, error);
          close (sub_dfd);
        }
    }
  if (ok && de == NULL && errno != 0)
    ok = util_fail (error, "%s: %s", path, g_strerror (errno));
  closedir (dir);
  return ok;
}

char *
checkout_fingerprint (const char *path, GError **error)
{
  int dfd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (dfd < 0 || fstat (dfd, &st) < 0)
    {
      int errsv = errno;
      if (dfd >= 0)
        close (dfd);
      return util_fail (error, "%s: %s", path, g_strerror (errsv)), NULL;
    }
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  fingerprint_entry (sum, "", &st);
  gboolean ok = fingerprint_dir (sum, dfd, path, error);
  close (dfd);
  return ok ? g_strdup (g_checksum_get_string (sum)) : NULL;
}
