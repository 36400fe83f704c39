/* incremental.c — the plan of an incremental stage 2: which packages of
 * the previous configured image leave, which .debs are unpacked over it. */
#include "config.h"

#include <string.h>

#include "base/deb822.h"
#include "base/util.h"
#include "graph/incremental.h"
#include "image/imagedb.h"
#include "store/repo.h"
#include "store/tree.h"

void
incremental_plan_free (IncrementalPlan *plan)
{
  g_free (plan->prev);
  g_clear_pointer (&plan->purge, g_ptr_array_unref);
  g_clear_pointer (&plan->debs, g_ptr_array_unref);
  g_free (plan->fallback);
  g_free (plan);
}

/* The files of REV's var/lib/dpkg/info: name -> content checksum. */
static GHashTable *
info_checksums (OstreeRepo *repo, const RepoRev *rev, GError **error)
{
  g_autofree char *file = NULL, *contents = NULL, *meta = NULL;
  if (!tree_find (repo, rev, "var/lib/dpkg/info", &file, &contents, &meta, error))
    return g_prefix_error (error, "%s: ", rev->name), NULL;
  if (contents == NULL)
    return util_fail (error, "%s: var/lib/dpkg/info is not a directory", rev->name), NULL;
  g_autoptr(GVariant) dirtree = NULL;
  if (!ostree_repo_load_variant (repo, OSTREE_OBJECT_TYPE_DIR_TREE, contents, &dirtree, error))
    return NULL;
  g_autoptr(GHashTable) sums = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GVariant) files = g_variant_get_child_value (dirtree, 0);
  GVariantIter iter;
  const char *name;
  GVariant *csum;
  g_variant_iter_init (&iter, files);
  while (g_variant_iter_loop (&iter, "(&s@ay)", &name, &csum))
    g_hash_table_insert (sums, g_strdup (name), ostree_checksum_from_bytes_v (csum));
  return g_steal_pointer (&sums);
}

/* The packages REV's dpkg database has (not merely their conffiles):
 * "name:arch" -> the stanza. */
static GHashTable *
installed_packages (OstreeRepo *repo, const RepoRev *rev, GPtrArray **out_stanzas,
                    GCancellable *cancellable, GError **error)
{
  g_autoptr(GFile) root = NULL;
  if (!ostree_repo_read_commit (repo, rev->commit, &root, NULL, cancellable, error))
    return NULL;
  *out_stanzas = imagedb_read_status (root, rev->name, cancellable, error);
  if (*out_stanzas == NULL)
    return NULL;
  g_autoptr(GHashTable) installed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < (*out_stanzas)->len; i++)
    {
      GHashTable *stanza = (*out_stanzas)->pdata[i];
      g_autofree char *name = deb822_first_line (stanza, "package");
      g_autofree char *arch = deb822_first_line (stanza, "architecture");
      g_autofree char *status = deb822_first_line (stanza, "status");
      if (name == NULL || arch == NULL || status == NULL
          || g_str_has_suffix (status, " not-installed") || g_str_has_suffix (status, " config-files"))
        continue;
      g_hash_table_insert (installed, g_strconcat (name, ":", arch, NULL), stanza);
    }
  return g_steal_pointer (&installed);
}

/* Do A and B hold the same file at PATH? */
static gboolean
same_file (OstreeRepo *repo, const RepoRev *a, const RepoRev *b, const char *path)
{
  g_autofree char *file_a = NULL, *file_b = NULL, *contents = NULL, *meta = NULL;
  if (!tree_find (repo, a, path, &file_a, &contents, &meta, NULL))
    return FALSE;
  g_clear_pointer (&contents, g_free);
  g_clear_pointer (&meta, g_free);
  if (!tree_find (repo, b, path, &file_b, &contents, &meta, NULL))
    return FALSE;
  return file_a != NULL && g_strcmp0 (file_a, file_b) == 0;
}

/* Where PACKAGE's .deb is on this machine, or NULL. */
static char *
deb_path (LockPackage *package, const char *lock_path, const char *debs_dir)
{
  if (package->path != NULL)
    {
      g_auto(GStrv) urls = lockfile_local_package_urls (lock_path, package);
      char *path = urls != NULL && urls[0] != NULL ? g_filename_from_uri (urls[0], NULL, NULL)
                                                   : NULL;
      if (path != NULL && g_file_test (path, G_FILE_TEST_IS_REGULAR))
        return path;
      g_free (path);
    }
  char *path = g_build_filename (debs_dir, package->sha256, NULL);
  if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return path;
  g_free (path);
  return NULL;
}

/* Does PACKAGE (dpkg name DPKG_NAME) need unpacking over the image whose
 * database has INSTALLED and info files PREV_INFO? */
static gboolean
package_changed (LockPackage *package, const char *dpkg_name, GHashTable *installed,
                 GHashTable *prev_info, GHashTable *new_info)
{
  g_autofree char *key = g_strconcat (package->name, ":", package->architecture, NULL);
  GHashTable *stanza = g_hash_table_lookup (installed, key);
  if (stanza == NULL)
    return TRUE;
  g_autofree char *version = deb822_first_line (stanza, "version");
  g_autofree char *status = deb822_first_line (stanza, "status");
  if (g_strcmp0 (version, package->version) != 0 || !g_str_has_suffix (status, " installed"))
    return TRUE;
  g_autofree char *md5sums = g_strconcat (dpkg_name, ".md5sums", NULL);
  return g_strcmp0 (g_hash_table_lookup (prev_info, md5sums),
                    g_hash_table_lookup (new_info, md5sums)) != 0;
}

/* The .debs to unpack, in LOCK's install order; the keys of the packages
 * LOCK has go into KEPT. */
static gboolean
plan_unpacks (IncrementalPlan *plan, Lockfile *lock, const char *lock_path, const char *debs_dir,
              GHashTable *installed, GHashTable *prev_info, GHashTable *new_info,
              GHashTable *kept, GError **error)
{
  for (guint i = 0; i < lock->install_order->len && plan->fallback == NULL; i++)
    {
      g_auto(GStrv) parts = g_strsplit (lock->install_order->pdata[i], ":", 2);
      LockPackage *package = lockfile_lookup_package (lock, parts[0], parts[1]);
      if (package == NULL)
        return util_fail (error, "%s: install-order names \"%s\", which is not among the packages",
                          lock_path, (char *) lock->install_order->pdata[i]);
      g_hash_table_add (kept, g_strconcat (package->name, ":", package->architecture, NULL));
      g_autofree char *dpkg_name = g_strcmp0 (package->multi_arch, "same") == 0
                                   ? g_strconcat (package->name, ":", package->architecture, NULL)
                                   : g_strdup (package->name);
      if (!package_changed (package, dpkg_name, installed, prev_info, new_info))
        continue;
      char *path = deb_path (package, lock_path, debs_dir);
      if (path == NULL)
        plan->fallback = g_strdup_printf ("the .deb of %s %s is not in %s", package->name,
                                          package->version, debs_dir);
      else
        g_ptr_array_add (plan->debs, path);
    }
  return TRUE;
}

IncrementalPlan *
incremental_plan (OstreeRepo *repo, const char *prev, const char *stage1, Lockfile *lock,
                  const char *lock_path, const char *debs_dir, GCancellable *cancellable,
                  GError **error)
{
  g_autoptr(RepoRev) prev_rev = repo_resolve (repo, prev, error);
  g_autoptr(RepoRev) stage1_rev = prev_rev != NULL ? repo_resolve (repo, stage1, error) : NULL;
  if (stage1_rev == NULL)
    return NULL;
  g_autoptr(GPtrArray) stanzas = NULL;
  g_autoptr(GHashTable) installed = installed_packages (repo, prev_rev, &stanzas, cancellable,
                                                        error);
  if (installed == NULL)
    return NULL;
  g_autoptr(GHashTable) prev_info = info_checksums (repo, prev_rev, error);
  g_autoptr(GHashTable) new_info = prev_info != NULL ? info_checksums (repo, stage1_rev, error) : NULL;
  if (new_info == NULL)
    return NULL;

  g_autoptr(IncrementalPlan) plan = g_new0 (IncrementalPlan, 1);
  plan->prev = g_strdup (prev_rev->commit);
  plan->purge = g_ptr_array_new_with_free_func (g_free);
  plan->debs = g_ptr_array_new_with_free_func (g_free);
  if (!same_file (repo, prev_rev, stage1_rev, "var/lib/dpkg/arch"))
    {
      plan->fallback = g_strdup ("the previous image has another dpkg architecture list");
      return g_steal_pointer (&plan);
    }
  g_autoptr(GHashTable) kept = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (!plan_unpacks (plan, lock, lock_path, debs_dir, installed, prev_info, new_info, kept, error))
    return NULL;

  /* In the status file's order (sorted by name), so the plan is stable. */
  for (guint i = 0; i < stanzas->len; i++)
    {
      GHashTable *stanza = stanzas->pdata[i];
      g_autofree char *name = deb822_first_line (stanza, "package");
      g_autofree char *arch = deb822_first_line (stanza, "architecture");
      g_autofree char *key = g_strconcat (name, ":", arch, NULL);
      if (g_hash_table_lookup (installed, key) == stanza && !g_hash_table_contains (kept, key))
        g_ptr_array_add (plan->purge, g_str_equal (arch, "all") ? g_strdup (name)
                                                                : g_strdup (key));
    }
  g_ptr_array_add (plan->purge, NULL);
  g_ptr_array_add (plan->debs, NULL);
  return g_steal_pointer (&plan);
}

gboolean
incremental_configure (OstreeRepo *repo, const Stage2Options *options, const char *lock_path,
                       const char *debs_dir, char **out_fallback, char **out_commit,
                       GCancellable *cancellable, GError **error)
{
  g_autofree char *prev = repo_read_ref (repo, options->out_ref);
  if (prev == NULL)
    return TRUE;
  g_autoptr(Lockfile) lock = lockfile_load (lock_path, error);
  if (lock == NULL)
    return FALSE;
  g_autoptr(IncrementalPlan) plan = incremental_plan (repo, prev, options->in, lock, lock_path,
                                                      debs_dir, cancellable, error);
  if (plan == NULL)
    return FALSE;
  if (plan->fallback != NULL)
    {
      *out_fallback = g_strdup (plan->fallback);
      return TRUE;
    }
  if (plan->purge->len == 1 && plan->debs->len == 1)
    {
      /* The image already has these very packages: it stays as it is. */
      *out_commit = g_steal_pointer (&prev);
      return TRUE;
    }
  Stage2Incremental incremental = {
    .prev = plan->prev,
    .purge = (const char *const *) plan->purge->pdata,
    .debs = (const char *const *) plan->debs->pdata,
  };
  return stage2_configure_incremental (repo, options, &incremental, out_commit, cancellable,
                                       error);
}
