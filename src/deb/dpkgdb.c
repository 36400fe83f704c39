/* dpkgdb.c — stage 1's dpkg database, assembled in a combined tree. */
#include "config.h"

#include <string.h>

#include "base/deb822.h"
#include "deb/deb.h"
#include "deb/dpkgdb.h"
#include "store/repo.h"
#include "store/tree.h"
#include "store/treeread.h"
#include "base/util.h"

#define DPKG_DIR "var/lib/dpkg"

/* Directories dpkg expects under var/lib/dpkg. */
static const char *const dpkg_dirs[] = { "alternatives", "info", "parts", "triggers", "updates", NULL };

/* Files dpkg expects, empty when no package provides them. */
static const char *const dpkg_empty_files[] = { "available", "diversions", "statoverride", NULL };

/* Always linked into usr/ in a merged-/usr image, and those linked when a
 * package ships something there (lib64 on amd64, for instance). */
static const char *const merged_dirs_always[] = { "bin", "sbin", "lib", NULL };
static const char *const merged_dirs_if_present[] = { "lib32", "lib64", "libx32", "libo32", NULL };

/* var/lib/dpkg/status: the stanzas of DEB_STATUS_DIR, sorted by name,
 * separated by blank lines.  The stanza directory itself goes away. */
static GBytes *
collect_status (OstreeRepo *repo, OstreeMutableTree *root, GCancellable *cancellable,
                GError **error)
{
  g_autoptr(OstreeMutableTree) dir = NULL;
  if (!tree_lookup (root, DEB_STATUS_DIR, NULL, &dir, error))
    return NULL;
  if (dir == NULL)
    {
      util_fail (error, "the tree holds no package status stanzas (%s): is it a union of "
                        "\"apt2ostree unpack-deb\" trees?", DEB_STATUS_DIR);
      return NULL;
    }

  GHashTable *files = ostree_mutable_tree_get_files (dir);
  g_autoptr(GPtrArray) names = util_sorted_keys (files);

  g_autoptr(GString) status = g_string_new ("");
  for (guint i = 0; i < names->len; i++)
    {
      const char *checksum = g_hash_table_lookup (files, names->pdata[i]);
      g_autoptr(GBytes) stanza = repo_read_file (repo, checksum, cancellable, error);
      if (stanza == NULL)
        return NULL;
      gsize len;
      const char *text = g_bytes_get_data (stanza, &len);
      if (status->len > 0)
        g_string_append_c (status, '\n');
      g_string_append_len (status, text, len);
      if (len == 0 || text[len - 1] != '\n')
        g_string_append_c (status, '\n');
    }

  if (!tree_remove (root, DEB_STATUS_DIR, TRUE, FALSE, error))
    return NULL;
  return g_string_free_to_bytes (g_steal_pointer (&status));
}

/* Remove DIR when it is empty (the parents of the stanza directory). */
static gboolean
remove_if_empty (OstreeMutableTree *root, const char *path, GError **error)
{
  g_autoptr(OstreeMutableTree) dir = NULL;
  if (!tree_lookup (root, path, NULL, &dir, error))
    return FALSE;
  if (dir == NULL || g_hash_table_size (ostree_mutable_tree_get_files (dir)) > 0
      || g_hash_table_size (ostree_mutable_tree_get_subdirs (dir)) > 0)
    return TRUE;
  return tree_remove (root, path, TRUE, FALSE, error);
}

static gboolean
put_file (OstreeRepo *repo, OstreeMutableTree *root, const char *path, const char *text,
          gboolean keep_existing, GCancellable *cancellable, GError **error)
{
  g_autofree char *existing = NULL;
  if (keep_existing && !tree_lookup (root, path, &existing, NULL, error))
    return FALSE;
  if (existing != NULL)
    return TRUE;

  g_autoptr(GBytes) data = g_bytes_new (text, strlen (text));
  g_autofree char *checksum = NULL;
  if (!repo_write_regular_file (repo, data, 0, 0, 0644, &checksum, cancellable, error))
    return FALSE;
  return tree_replace_file (root, path, checksum, error);
}

static gboolean
link_merged_usr (OstreeRepo *repo, OstreeMutableTree *root, GCancellable *cancellable,
                 GError **error)
{
  TreeMkdirOptions usr_dir = { 0, 0, 0755, TRUE };
  g_autoptr(GPtrArray) dirs = g_ptr_array_new ();
  for (const char *const *d = merged_dirs_always; *d != NULL; d++)
    g_ptr_array_add (dirs, (char *) *d);
  for (const char *const *d = merged_dirs_if_present; *d != NULL; d++)
    {
      g_autofree char *usr_path = g_strconcat ("usr/", *d, NULL);
      g_autoptr(OstreeMutableTree) present = NULL;
      if (!tree_lookup (root, usr_path, NULL, &present, error))
        return FALSE;
      if (present != NULL)
        g_ptr_array_add (dirs, (char *) *d);
    }

  for (guint i = 0; i < dirs->len; i++)
    {
      const char *name = dirs->pdata[i];
      g_autofree char *usr_path = g_strconcat ("usr/", name, NULL);
      g_autofree char *link = NULL;
      g_autoptr(OstreeMutableTree) top = NULL;
      if (!tree_lookup (root, name, &link, &top, error))
        return FALSE;
      if (top != NULL)
        return util_fail (error, "merged /usr: \"/%s\" is a real directory; a package was "
                                 "unpacked without --merged-usr", name);
      if (!tree_mkdir (repo, root, usr_path, &usr_dir, cancellable, error))
        return FALSE;
      if (link == NULL && !tree_symlink (repo, root, usr_path, name, cancellable, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
dpkgdb_set_aside (OstreeRepo *repo, OstreeMutableTree *root, GPtrArray *conflicts,
                  GPtrArray *dpkg_names, GCancellable *cancellable, GError **error)
{
  if (conflicts->len == 0)
    return TRUE;

  TreeMkdirOptions dir_options = { 0, 0, 0755, TRUE };
  g_autoptr(GString) list = g_string_new ("");
  for (guint i = 0; i < conflicts->len; i++)
    {
      const TreeConflict *conflict = conflicts->pdata[i];
      const char *earlier = dpkg_names->pdata[conflict->earlier];
      const char *later = dpkg_names->pdata[conflict->later];
      g_autofree char *aside = g_strconcat (DPKGDB_SET_ASIDE_DIR "/", later, conflict->path, NULL);
      g_autofree char *aside_dir = g_path_get_dirname (aside);
      if (!tree_mkdir (repo, root, aside_dir, &dir_options, cancellable, error)
          || !tree_replace_file (root, aside, conflict->checksum, error))
        return FALSE;
      g_string_append_printf (list, "%s %s %s\n", conflict->path, earlier, later);
    }
  return put_file (repo, root, DPKGDB_SET_ASIDE_LIST, list->str, FALSE, cancellable, error);
}

gboolean
dpkgdb_assemble (OstreeRepo *repo, OstreeMutableTree *root, const DpkgdbOptions *options,
                 GCancellable *cancellable, GError **error)
{
  g_autoptr(GBytes) status = collect_status (repo, root, cancellable, error);
  if (status == NULL)
    return FALSE;
  if (!remove_if_empty (root, "var/lib/apt2ostree", error))
    return FALSE;

  TreeMkdirOptions dir_options = { 0, 0, 0755, TRUE };
  for (const char *const *d = dpkg_dirs; *d != NULL; d++)
    {
      g_autofree char *path = g_build_filename (DPKG_DIR, *d, NULL);
      if (!tree_mkdir (repo, root, path, &dir_options, cancellable, error))
        return FALSE;
    }

  g_autofree char *status_checksum = NULL;
  if (!repo_write_regular_file (repo, status, 0, 0, 0644, &status_checksum, cancellable, error)
      || !tree_replace_file (root, DPKG_DIR "/status", status_checksum, error))
    return FALSE;

  for (const char *const *f = dpkg_empty_files; *f != NULL; f++)
    {
      g_autofree char *path = g_build_filename (DPKG_DIR, *f, NULL);
      if (!put_file (repo, root, path, "", TRUE, cancellable, error))
        return FALSE;
    }
  g_autofree char *arch_line = g_strconcat (options->arch, "\n", NULL);
  if (!put_file (repo, root, DPKG_DIR "/arch", arch_line, FALSE, cancellable, error)
      || !put_file (repo, root, DPKG_DIR "/info/format", "1\n", FALSE, cancellable, error))
    return FALSE;

  if (options->merged_usr && !link_merged_usr (repo, root, cancellable, error))
    return FALSE;
  return TRUE;
}

GPtrArray *
dpkgdb_read_status (GFile *root, const char *name, GCancellable *cancellable, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *status = treeread_text (root, "var/lib/dpkg/status", cancellable, &local_error);
  if (status == NULL)
    return util_fail (error, "\"%s\" has no var/lib/dpkg/status%s%s: not a Debian image", name,
                      local_error != NULL ? ": " : "",
                      local_error != NULL ? local_error->message : ""), NULL;
  return deb822_parse (status);
}

gboolean
dpkgdb_check_stanza (GHashTable *stanza, const char *name, GError **error)
{
  if (g_hash_table_lookup (stanza, "package") == NULL
      || g_hash_table_lookup (stanza, "version") == NULL
      || g_hash_table_lookup (stanza, "architecture") == NULL)
    return util_fail (error, "\"%s\": var/lib/dpkg/status has a stanza without Package, "
                      "Version or Architecture", name);
  return TRUE;
}
