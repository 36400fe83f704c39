/* leanrepo.c — a bare or bare-user repository without libostree. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "deb/leanrepo.h"
#include "store/refs.h"
#include "store/stagedir.h"
#include "base/util.h"
#include "store/objects.h"
#include "store/writer.h"

struct LeanRepo {
  UnpackRepo base;
  char *path;
  int dfd;
  gboolean bare_user;
  gboolean sync;              /* core.fsync */
  guint percent;              /* core.min-free-space-percent */
  int lock_fd;
  StageDir *stage;            /* the transaction's staging directory */
  ObjectWriter *writer;       /* the open transaction's */
  PartialMarks *marks;        /* its new commits' commitpartial markers */
  DebSink *sink;
  GPtrArray *refs;            /* ref, commit, ...: written at finish */
};

static gboolean
defer (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

static gboolean
defer (GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, UNPACK_ERROR, UNPACK_ERROR_DEFER, message);
  return FALSE;
}

void
lean_repo_free (LeanRepo *repo)
{
  if (repo == NULL)
    return;
  object_writer_free (repo->writer);
  partial_marks_free (repo->marks);
  g_free (repo->sink);
  stage_dir_free (repo->stage);
  util_fd_close (&repo->lock_fd);
  util_fd_close (&repo->dfd);
  g_ptr_array_unref (repo->refs);
  g_free (repo->path);
  g_free (repo);
}

/* The keys of [core] this code knows how to honour; anything else there,
 * or a group other than [core] and [remote "..."], is the commands module's. */
static const char *const known_core_keys[] = {
  "repo_version", "mode", "fsync", "min-free-space-percent", "tmp-expiry-secs",
  "lock-timeout-secs", "add-remotes-config-dir", NULL
};

static gboolean
read_config (LeanRepo *repo, GError **error)
{
  g_autoptr(GKeyFile) config = g_key_file_new ();
  g_autofree char *path = g_build_filename (repo->path, "config", NULL);
  if (!g_key_file_load_from_file (config, path, G_KEY_FILE_NONE, NULL))
    return defer (error, "%s: not read", path);
  g_auto(GStrv) groups = g_key_file_get_groups (config, NULL);
  for (char **g = groups; *g != NULL; g++)
    if (!g_str_equal (*g, "core") && !g_str_has_prefix (*g, "remote \""))
      return defer (error, "config group [%s]", *g);
  g_auto(GStrv) keys = g_key_file_get_keys (config, "core", NULL, NULL);
  if (keys == NULL)
    return defer (error, "no [core]");
  for (char **k = keys; *k != NULL; k++)
    if (!g_strv_contains (known_core_keys, *k))
      return defer (error, "config key core.%s", *k);

  g_autofree char *version = g_key_file_get_value (config, "core", "repo_version", NULL);
  g_autofree char *mode = g_key_file_get_value (config, "core", "mode", NULL);
  if (g_strcmp0 (version, "1") != 0 || mode == NULL
      || !(g_str_equal (mode, "bare") || g_str_equal (mode, "bare-user")))
    return defer (error, "repository version %s, mode %s", version, mode);
  repo->bare_user = g_str_equal (mode, "bare-user");

  g_autoptr(GError) local_error = NULL;
  repo->sync = TRUE;
  if (g_key_file_has_key (config, "core", "fsync", NULL))
    {
      repo->sync = g_key_file_get_boolean (config, "core", "fsync", &local_error);
      if (local_error != NULL)
        return defer (error, "core.fsync: %s", local_error->message);
    }
  /* As libostree reads it: digits only, at most 99; 3 when unset. */
  repo->percent = 3;
  g_autofree char *percent = g_key_file_get_value (config, "core", "min-free-space-percent", NULL);
  if (percent != NULL)
    {
      guint64 value;
      if (*percent == '\0' || strspn (percent, "0123456789") != strlen (percent)
          || !g_ascii_string_to_unsigned (percent, 10, 0, 99, &value, NULL))
        return defer (error, "core.min-free-space-percent=%s", percent);
      repo->percent = value;
    }
  return TRUE;
}

/* Is DIR (under the repository) a directory? */
static gboolean
has_dir (LeanRepo *repo, const char *dir)
{
  struct stat st;
  return fstatat (repo->dfd, dir, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode);
}

static gboolean
lean_read_ref (UnpackRepo *base, const char *ref, char **out_commit, GError **error)
{
  if (!refs_read (((LeanRepo *) base)->dfd, ref, out_commit))
    return defer (error, "ref %s: not a plain ref file", ref);
  return TRUE;
}

static GVariant *
lean_load_commit (UnpackRepo *base, const char *checksum)
{
  LeanRepo *repo = (LeanRepo *) base;
  char rel[OBJECTS_REPO_PATH_MAX];
  objects_repo_path (rel, checksum, objects_type_name (OBJECTS_COMMIT));
  g_autofree char *path = g_build_filename (repo->path, rel, NULL);
  g_autofree char *data = NULL;
  gsize len = 0;
  if (!g_file_get_contents (path, &data, &len, NULL))
    return NULL;
  g_autoptr(GBytes) bytes = g_bytes_new_take (g_steal_pointer (&data), len);
  return g_variant_ref_sink (
      g_variant_new_from_bytes (G_VARIANT_TYPE (OBJECTS_COMMIT_TYPE), bytes, FALSE));
}

/* The shared lock every libostree transaction takes on .lock (an open
 * file description lock, or flock() where those are missing); taken
 * already (a prune holds it exclusively): the commands module waits for it. */
static gboolean
lock_shared (LeanRepo *repo, GError **error)
{
  repo->lock_fd = openat (repo->dfd, ".lock", O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (repo->lock_fd < 0)
    return defer (error, ".lock: %s", g_strerror (errno));
  struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
  if (fcntl (repo->lock_fd, F_OFD_SETLK, &fl) == 0)
    return TRUE;
  if (errno == EINVAL && flock (repo->lock_fd, LOCK_SH | LOCK_NB) == 0)
    return TRUE;
  return defer (error, ".lock: %s", g_strerror (errno));
}

/* The reserve min-free-space-percent keeps, in bytes, as libostree
 * reckons it. */
static guint64
reserved_bytes (LeanRepo *repo)
{
  struct statvfs vfs;
  if (repo->percent == 0 || fstatvfs (repo->dfd, &vfs) < 0)
    return 0;
  guint64 total = (guint64) vfs.f_frsize * vfs.f_blocks;
  return (guint64) ((double) total * (repo->percent / 100.0));
}

static DebSink *
lean_begin (UnpackRepo *base, GError **error)
{
  LeanRepo *repo = (LeanRepo *) base;
  if (!lock_shared (repo, error))
    return NULL;
  g_autoptr(GError) local_error = NULL;
  repo->stage = stage_dir_open (repo->dfd, repo->path, &local_error);
  if (repo->stage == NULL)
    return defer (error, "%s", local_error->message), NULL;
  if (!partial_resolve_leftovers (repo->dfd, repo->path, "file", repo->sync, error))
    return NULL;
  repo->marks = partial_marks_new (repo->dfd, repo->path, repo->sync);
  ObjectWriterConfig config = {
    .repo_dfd = repo->dfd,
    .stage_dfd = stage_dir_fd (repo->stage),
    .bare_user = repo->bare_user,
    .sync = repo->sync,
    .min_free_bytes = reserved_bytes (repo),
    .repo_path = repo->path,
    .marks = repo->marks,
  };
  repo->writer = object_writer_new (&config);
  if (repo->writer == NULL)
    return defer (error, "no writer for this file system"), NULL;
  repo->sink = deb_sink_for_writer (repo->writer);
  return repo->sink;
}

static gboolean
lean_set_ref (UnpackRepo *base, const char *ref, const char *commit, GError **error)
{
  LeanRepo *repo = (LeanRepo *) base;
  g_autofree char *current = NULL;
  if (!refs_read (repo->dfd, ref, &current))
    return defer (error, "ref %s: not a plain ref file", ref);
  if (g_strcmp0 (current, commit) == 0)
    return TRUE;
  g_ptr_array_add (repo->refs, g_strdup (ref));
  g_ptr_array_add (repo->refs, g_strdup (commit));
  return TRUE;
}

static gboolean
sync_repo (LeanRepo *repo, GError **error)
{
  if (repo->sync && syncfs (repo->dfd) < 0)
    return util_fail (error, "%s: syncing the file system: %s", repo->path, g_strerror (errno));
  return TRUE;
}

/* As repo.c's transactions: a syncfs, the objects linked into objects/
 * (the commits last), the refs' new files, a second syncfs, the commits'
 * commitpartial markers removed, the refs renamed into place (without
 * fsync, the same minus the syncs and the markers). */
static gboolean
lean_finish (UnpackRepo *base, GError **error)
{
  LeanRepo *repo = (LeanRepo *) base;
  if (!sync_repo (repo, error) || !object_writer_publish (repo->writer, error))
    return FALSE;
  g_clear_pointer (&repo->writer, object_writer_free);
  g_autoptr(RefsBatch) batch = refs_batch_new (repo->dfd, repo->path);
  for (guint i = 0; i + 1 < repo->refs->len; i += 2)
    if (!refs_batch_stage (batch, repo->refs->pdata[i], repo->refs->pdata[i + 1]))
      return defer (error, "ref %s: not staged", (char *) repo->refs->pdata[i]);
  return sync_repo (repo, error) && partial_marks_remove (repo->marks, error)
         && refs_batch_publish (batch, error);
}

LeanRepo *
lean_repo_open (const char *path, GError **error)
{
  g_autoptr(LeanRepo) repo = g_new0 (LeanRepo, 1);
  repo->base = (UnpackRepo) { lean_read_ref, lean_load_commit, lean_begin, lean_set_ref,
                              lean_finish };
  repo->path = g_strdup (path);
  repo->lock_fd = -1;
  repo->refs = g_ptr_array_new_with_free_func (g_free);
  repo->dfd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (repo->dfd < 0)
    return defer (error, "%s: %s", path, g_strerror (errno)), NULL;
  if (!read_config (repo, error))
    return NULL;
  if (!has_dir (repo, "objects") || !has_dir (repo, "tmp") || !has_dir (repo, "refs/heads")
      || faccessat (repo->dfd, ".", W_OK, AT_EACCESS) < 0)
    return defer (error, "%s: not a writable repository", path), NULL;
  return g_steal_pointer (&repo);
}

UnpackRepo *
lean_repo_unpack_repo (LeanRepo *repo)
{
  return &repo->base;
}
