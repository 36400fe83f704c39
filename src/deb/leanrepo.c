/* leanrepo.c — a bare or bare-user repository without libostree: what
 * the lean path must check itself (libostree's open does it for the
 * commands module), over the store's own transaction (barestore/txn.c). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deb/leanrepo.h"
#include "barestore/objects.h"
#include "barestore/refs.h"
#include "barestore/txn.h"
#include "base/util.h"

struct LeanRepo {
  UnpackRepo base;
  char *path;
  int dfd;
  StoreTxnSettings settings;
  StoreTxn *txn;
};

#define defer(error, ...) util_fail_code ((error), UNPACK_ERROR, UNPACK_ERROR_DEFER, __VA_ARGS__)

/* The store's "not here" is the commands module's to run. */
static gboolean
defer_not_here (GError **error, GError *local_error)
{
  if (g_error_matches (local_error, STORE_TXN_ERROR, STORE_TXN_ERROR_NOT_HERE))
    return defer (error, "%s", local_error->message);
  g_propagate_error (error, g_error_copy (local_error));
  return FALSE;
}

void
lean_repo_free (LeanRepo *repo)
{
  if (repo == NULL)
    return;
  store_txn_free (repo->txn);
  util_fd_close (&repo->dfd);
  g_free (repo->path);
  g_free (repo);
}

/* The keys of [core] this path honours or may ignore (libostree's open
 * would not act on them either); anything else there, or a group other
 * than [core] and [remote "..."], is the commands module's. */
static const char *const known_core_keys[] = {
  "repo_version", "mode", "fsync", "per-object-fsync", "min-free-space-percent",
  "min-free-space-size", "tmp-expiry-secs", "lock-timeout-secs", "add-remotes-config-dir", NULL
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
  g_autoptr(GError) local_error = NULL;
  if (!store_txn_settings_read (config, &repo->settings, &local_error))
    return defer_not_here (error, local_error);
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

/* The transaction, its lock taken without waiting: a prune holding it
 * exclusively is the commands module's to wait for. */
static StoreSink *
lean_begin (UnpackRepo *base, GError **error)
{
  LeanRepo *repo = (LeanRepo *) base;
  g_autoptr(GError) local_error = NULL;
  repo->txn = store_txn_begin (repo->dfd, repo->path, &repo->settings, STORE_TXN_LOCK_TRY,
                               &local_error);
  if (repo->txn == NULL)
    return defer_not_here (error, local_error), NULL;
  return store_txn_sink (repo->txn);
}

static gboolean
lean_set_ref (UnpackRepo *base, const char *ref, const char *commit, GError **error)
{
  LeanRepo *repo = (LeanRepo *) base;
  g_autofree char *current = NULL;
  if (!refs_read (repo->dfd, ref, &current))
    return defer (error, "ref %s: not a plain ref file", ref);
  if (g_strcmp0 (current, commit) != 0)
    store_txn_set_ref (repo->txn, ref, commit);
  return TRUE;
}

static gboolean
lean_finish (UnpackRepo *base, GError **error)
{
  LeanRepo *repo = (LeanRepo *) base;
  g_autoptr(GError) local_error = NULL;
  if (!store_txn_finish (repo->txn, NULL, &local_error))
    return defer_not_here (error, local_error);
  return TRUE;
}

LeanRepo *
lean_repo_open (const char *path, GError **error)
{
  g_autoptr(LeanRepo) repo = g_new0 (LeanRepo, 1);
  repo->base = (UnpackRepo) { lean_read_ref, lean_load_commit, lean_begin, lean_set_ref,
                              lean_finish };
  repo->path = g_strdup (path);
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

gboolean
lean_repo_run (const UnpackArgs *args, UnpackFetch fetch, GError **error)
{
  /* (Refs beyond what the file limit spares are libostree's to write.) */
  if (args->jobs->len > refs_max_staged ())
    return defer (error, "%u refs", args->jobs->len);
  g_autoptr(LeanRepo) repo = lean_repo_open (args->repo, error);
  return repo != NULL && unpack_run (&repo->base, args, fetch, error);
}
