/* publish.c — refs into a served archive repository; see publish.h. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "store/publish.h"
#include "store/repo.h"

/* The archive repository at DEST, made when missing (under the publish
 * lock, so two publishers starting on a new directory make it once); a
 * repository of another mode is refused (a web server serves archive
 * repositories). */
static OstreeRepo *
open_destination (const char *dest, GCancellable *cancellable, GError **error)
{
  g_autoptr(GFile) file = g_file_new_for_path (dest);
  g_autoptr(OstreeRepo) repo = ostree_repo_new (file);
  g_autofree char *config = g_build_filename (dest, "config", NULL);
  g_autoptr(GError) local_error = NULL;
  if (!g_file_test (config, G_FILE_TEST_EXISTS))
    {
      if (!ostree_repo_create (repo, OSTREE_REPO_MODE_ARCHIVE, cancellable, &local_error))
        return util_fail (error, "%s: cannot create an archive repository: %s", dest,
                          local_error->message), NULL;
    }
  else if (!ostree_repo_open (repo, cancellable, &local_error))
    return util_fail (error, "%s: %s", dest, local_error->message), NULL;
  if (ostree_repo_get_mode (repo) != OSTREE_REPO_MODE_ARCHIVE)
    return util_fail (error, "%s is not an archive repository: publish writes what a web server "
                      "serves; give a new directory", dest), NULL;
  return g_steal_pointer (&repo);
}

/* The first symlink at or below PATH (NULL: none), not following any. */
static char *
find_symlink (const char *path, GError **error)
{
  struct stat st;
  if (lstat (path, &st) < 0)
    return errno == ENOENT ? NULL : (util_fail (error, "%s: %s", path, g_strerror (errno)), NULL);
  if (S_ISLNK (st.st_mode))
    return g_strdup (path);
  if (!S_ISDIR (st.st_mode))
    return NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GDir) dir = g_dir_open (path, 0, &local_error);
  if (dir == NULL)
    return util_fail (error, "%s: %s", path, local_error->message), NULL;
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      char *found = find_symlink (child, error);
      if (found != NULL || (error != NULL && *error != NULL))
        return found;
    }
  return NULL;
}

/* DEST as the publish leaves it must hold no symlink where the repository
 * keeps its files: libostree would write through one (a ref, an object,
 * the summary landing where it points), and a web server would serve what
 * it points at. */
static gboolean
check_no_symlinks (const char *dest, GError **error)
{
  static const char *const entries[] = {
    "config", "summary", "summary.sig", "objects", "refs", "tmp", "state", "extensions",
    "deltas", NULL
  };
  for (const char *const *e = entries; *e != NULL; e++)
    {
      g_autofree char *path = g_build_filename (dest, *e, NULL);
      g_autoptr(GError) local_error = NULL;
      g_autofree char *link = find_symlink (path, &local_error);
      if (local_error != NULL)
        return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
      if (link != NULL)
        return util_fail (error, "%s is a symlink: publish writes into the repository's own "
                          "directories only; remove it (nothing was published)", link);
    }
  return TRUE;
}

/* REFS, each checked, or all of SRC's refs when REFS names none; sorted. */
static GPtrArray *
refs_to_publish (OstreeRepo *src, const char *const *refs, GCancellable *cancellable,
                 GError **error)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  for (const char *const *r = refs; r != NULL && *r != NULL; r++)
    {
      g_autofree char *commit = repo_read_ref (src, *r);
      if (commit == NULL)
        return util_fail (error, "no ref \"%s\" in the repository", *r), NULL;
      g_ptr_array_add (out, g_strdup (*r));
    }
  if (out->len == 0)
    {
      g_autoptr(GHashTable) all = NULL;
      if (!ostree_repo_list_refs (src, NULL, &all, cancellable, error))
        return NULL;
      GHashTableIter it;
      gpointer key;
      g_hash_table_iter_init (&it, all);
      while (g_hash_table_iter_next (&it, &key, NULL))
        g_ptr_array_add (out, g_strdup (key));
    }
  g_ptr_array_sort (out, util_compare_strings);
  return g_steal_pointer (&out);
}

/* Pull REFS from SRC into DEST: objects first, then the refs. */
static gboolean
pull_refs (OstreeRepo *src, OstreeRepo *dest, GPtrArray *refs, GCancellable *cancellable,
           GError **error)
{
  g_autofree char *src_path = g_file_get_path (ostree_repo_get_path (src));
  g_autofree char *abs = g_canonicalize_filename (src_path, NULL);
  g_autofree char *url = g_strconcat ("file://", abs, NULL);
  GVariantBuilder options;
  g_variant_builder_init (&options, G_VARIANT_TYPE ("a{sv}"));
  g_variant_builder_add (&options, "{sv}", "refs",
                         g_variant_new_strv ((const char *const *) refs->pdata, refs->len));
  g_variant_builder_add (&options, "{sv}", "gpg-verify", g_variant_new_boolean (FALSE));
  g_variant_builder_add (&options, "{sv}", "gpg-verify-summary", g_variant_new_boolean (FALSE));
  g_autoptr(GVariant) opts = g_variant_ref_sink (g_variant_builder_end (&options));
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_pull_with_options (dest, url, opts, NULL, cancellable, &local_error))
    return util_fail (error, "copying the refs: %s", local_error->message);
  return TRUE;
}

static gboolean
sign (OstreeRepo *dest, GPtrArray *refs, const PublishOptions *opts, GCancellable *cancellable,
      GError **error)
{
  for (guint i = 0; i < refs->len; i++)
    {
      g_autofree char *commit = repo_read_ref (dest, refs->pdata[i]);
      g_autoptr(GError) local_error = NULL;
      if (commit != NULL
          && !ostree_repo_sign_commit (dest, commit, opts->gpg_key_id, opts->gpg_homedir,
                                       cancellable, &local_error)
          && !g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_EXISTS))
        return util_fail (error, "signing %s (%s) with key %s: %s", (char *) refs->pdata[i],
                          commit, opts->gpg_key_id, local_error->message);
    }
  return TRUE;
}

gboolean
publish_refs (OstreeRepo *src, const char *const *refs, const char *dest,
              const PublishOptions *opts, guint *out_count, GCancellable *cancellable,
              GError **error)
{
  g_autoptr(GPtrArray) names = refs_to_publish (src, refs, cancellable, error);
  if (names == NULL)
    return FALSE;
  if (names->len == 0)
    return util_fail (error, "the repository has no refs to publish");
  if (g_mkdir_with_parents (dest, 0755) != 0)
    return util_fail (error, "%s: %s", dest, g_strerror (errno));
  g_autofree char *lock_path = g_build_filename (dest, ".apt2ostree-publish.lock", NULL);
  int lock_fd = open (lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (lock_fd < 0 || flock (lock_fd, LOCK_EX) != 0)
    {
      int saved = errno;
      if (lock_fd >= 0)
        close (lock_fd);
      return util_fail (error, "%s: %s", lock_path, g_strerror (saved));
    }
  g_autoptr(OstreeRepo) repo = NULL;
  if (!check_no_symlinks (dest, error)
      || (repo = open_destination (dest, cancellable, error)) == NULL)
    return close (lock_fd), FALSE;
  gboolean ok = pull_refs (src, repo, names, cancellable, error)
                && (opts->gpg_key_id == NULL || sign (repo, names, opts, cancellable, error));
  g_autoptr(GError) local_error = NULL;
  if (ok && !ostree_repo_regenerate_summary (repo, NULL, cancellable, &local_error))
    ok = util_fail (error, "%s: writing the summary: %s", dest, local_error->message);
  const char *key_ids[] = { opts->gpg_key_id, NULL };
  if (ok && opts->gpg_key_id != NULL
      && !ostree_repo_add_gpg_signature_summary (repo, key_ids, opts->gpg_homedir, cancellable,
                                                 &local_error))
    ok = util_fail (error, "%s: signing the summary with key %s: %s", dest, opts->gpg_key_id,
                    local_error->message);
  close (lock_fd);  /* releases the lock */
  if (ok)
    *out_count = names->len;
  return ok;
}
