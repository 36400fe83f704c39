/* dpkgdb.c — stage 1's dpkg database, assembled in a combined tree. */
#include "config.h"

#include <string.h>

#include "base/pathfilter.h"
#include "deb/deb.h"
#include "deb/dpkgdb.h"
#include "store/repo.h"
#include "store/tree.h"
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

/* Two stanza file names, NAME:ARCH, in dpkg's order for its status file:
 * by package name, then by architecture ("foo" before "foo-doc", which
 * comparing the whole file names would reverse: '-' sorts before ':'). */
static gint
compare_stanza_names (gconstpointer a, gconstpointer b)
{
  const char *x = *(const char *const *) a;
  const char *y = *(const char *const *) b;
  size_t x_len = strcspn (x, ":");
  size_t y_len = strcspn (y, ":");
  int by_name = strncmp (x, y, MIN (x_len, y_len));
  if (by_name != 0)
    return by_name;
  if (x_len != y_len)
    return x_len < y_len ? -1 : 1;
  return strcmp (x + x_len, y + y_len);
}

/* var/lib/dpkg/status: the stanzas of DEB_STATUS_DIR in dpkg's order,
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
  g_ptr_array_sort (names, compare_stanza_names);

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
put_file (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root, const char *path,
          const char *text,
          gboolean keep_existing, GCancellable *cancellable, GError **error)
{
  g_autofree char *existing = NULL;
  if (keep_existing && !tree_lookup (root, path, &existing, NULL, error))
    return FALSE;
  if (existing != NULL)
    return TRUE;

  g_autofree char *checksum = sink->regular (sink, NULL, 0, 0, 0644, NULL, (const guint8 *) text,
                                             strlen (text), error);
  if (checksum == NULL)
    return FALSE;
  return tree_replace_file (root, path, checksum, error);
}

static gboolean
link_merged_usr (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root,
                 GCancellable *cancellable, GError **error)
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
      if (!tree_mkdir (sink, root, usr_path, &usr_dir, cancellable, error))
        return FALSE;
      if (link == NULL && !tree_symlink (sink, root, usr_path, name, cancellable, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
dpkgdb_set_aside (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root, GPtrArray *conflicts,
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
      if (!tree_mkdir (sink, root, aside_dir, &dir_options, cancellable, error)
          || !tree_replace_file (root, aside, conflict->checksum, error))
        return FALSE;
      g_string_append_printf (list, "%s %s %s\n", conflict->path, earlier, later);
    }
  return put_file (repo, sink, root, DPKGDB_SET_ASIDE_LIST, list->str, FALSE, cancellable, error);
}

gboolean
dpkgdb_assemble (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root,
                 const DpkgdbOptions *options,
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
      if (!tree_mkdir (sink, root, path, &dir_options, cancellable, error))
        return FALSE;
    }

  g_autofree char *status_checksum = sink->regular (
      sink, NULL, 0, 0, 0644, NULL, g_bytes_get_data (status, NULL), g_bytes_get_size (status),
      error);
  if (status_checksum == NULL
      || !tree_replace_file (root, DPKG_DIR "/status", status_checksum, error))
    return FALSE;

  for (const char *const *f = dpkg_empty_files; *f != NULL; f++)
    {
      g_autofree char *path = g_build_filename (DPKG_DIR, *f, NULL);
      if (!put_file (repo, sink, root, path, "", TRUE, cancellable, error))
        return FALSE;
    }
  g_autofree char *arch_line = g_strconcat (options->arch, "\n", NULL);
  if (!put_file (repo, sink, root, DPKG_DIR "/arch", arch_line, FALSE, cancellable, error)
      || !put_file (repo, sink, root, DPKG_DIR "/info/format", "1\n", FALSE, cancellable, error))
    return FALSE;

  if (options->merged_usr && !link_merged_usr (repo, sink, root, cancellable, error))
    return FALSE;
  return TRUE;
}

/* Path filters (pathfilter.h) over a stage-1 tree.  dpkg decides on the
 * path a package ships ("/bin/sh"), so the tree path is found the way
 * deb.c's merged-/usr rewrite made it ("usr/bin/sh"). */
static char *
filter_tree_path (const char *shipped, gboolean merged_usr)
{
  static const char *const merged[] = { "bin", "sbin", "lib", "lib32", "lib64", "libx32", NULL };
  const char *rel = shipped + strspn (shipped, "/");
  g_autofree char *first = g_strndup (rel, strcspn (rel, "/"));
  if (merged_usr && g_strv_contains (merged, first))
    return g_strconcat ("usr/", rel, NULL);
  return g_strdup (rel);
}

/* Is the file object CHECKSUM a symlink?  (Read only when an include rule
 * could keep it.) */
static gboolean
filter_is_symlink (OstreeRepo *repo, const char *checksum, gboolean *out_symlink,
                   GCancellable *cancellable, GError **error)
{
  g_autoptr(GFileInfo) info = NULL;
  if (!ostree_repo_load_file (repo, checksum, NULL, &info, NULL, cancellable, error))
    return FALSE;
  *out_symlink = g_file_info_get_file_type (info) == G_FILE_TYPE_SYMBOLIC_LINK;
  return TRUE;
}

/* Does dpkg leave the shipped PATH, at TREE_PATH in ROOT, out?  An entry
 * the tree does not have (a device node OSTree cannot store) is left alone. */
static gboolean
filter_excludes_entry (OstreeRepo *repo, OstreeMutableTree *root, const char *const *rules,
                       const char *path, const char *tree_path, gboolean *out_excluded,
                       GCancellable *cancellable, GError **error)
{
  *out_excluded = pathfilter_excludes (rules, path, FALSE);
  if (!*out_excluded || !pathfilter_may_reinclude (rules, path))
    return TRUE;
  g_autofree char *checksum = NULL;
  g_autoptr(OstreeMutableTree) dir = NULL;
  g_autoptr(GError) lookup_error = NULL;
  if (!tree_lookup (root, tree_path, &checksum, &dir, &lookup_error) || (checksum == NULL && dir == NULL))
    {
      *out_excluded = FALSE;
      return TRUE;
    }
  gboolean symlink = FALSE;
  if (checksum != NULL && !filter_is_symlink (repo, checksum, &symlink, cancellable, error))
    return FALSE;
  *out_excluded = pathfilter_excludes (rules, path, dir != NULL || symlink);
  return TRUE;
}

/* Every path of every info/PKG.list: into EXCLUDED when dpkg leaves it out
 * for that package, into KEPT (tree path -> package) when it unpacks it. */
static gboolean
filter_classify (OstreeRepo *repo, OstreeMutableTree *root, const char *const *rules,
                 gboolean merged_usr, GHashTable *excluded, GHashTable *kept,
                 GCancellable *cancellable, GError **error)
{
  g_autoptr(OstreeMutableTree) info = NULL;
  if (!tree_lookup (root, DPKG_DIR "/info", NULL, &info, error))
    return FALSE;
  GHashTable *files = info != NULL ? ostree_mutable_tree_get_files (info) : NULL;
  g_autoptr(GPtrArray) names = files != NULL ? util_sorted_keys (files) : g_ptr_array_new ();
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      if (!g_str_has_suffix (name, ".list"))
        continue;
      g_autoptr(GBytes) list = repo_read_file (repo, g_hash_table_lookup (files, name), cancellable,
                                               error);
      if (list == NULL)
        return FALSE;
      g_autofree char *text = g_strndup (g_bytes_get_data (list, NULL), g_bytes_get_size (list));
      g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
      for (char **line = lines; *line != NULL; line++)
        {
          if (**line != '/' || strcmp (*line, "/.") == 0)
            continue;
          g_autofree char *tree_path = filter_tree_path (*line, merged_usr);
          gboolean out;
          if (!filter_excludes_entry (repo, root, rules, *line, tree_path, &out, cancellable, error))
            return FALSE;
          if (out)
            g_hash_table_add (excluded, g_steal_pointer (&tree_path));
          else
            g_hash_table_insert (kept, g_steal_pointer (&tree_path),
                                 g_strndup (name, strlen (name) - strlen (".list")));
        }
    }
  return TRUE;
}

static int
compare_reversed (gconstpointer a, gconstpointer b)
{
  return -strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Remove PATH, excluded for every package that ships it.  Deepest first,
 * so a directory is empty unless something kept is left in it: then dpkg,
 * which never made the directory, could not have unpacked that. */
static gboolean
filter_remove (OstreeMutableTree *root, const char *path, GHashTable *kept, GError **error)
{
  g_autofree char *checksum = NULL;
  g_autoptr(OstreeMutableTree) dir = NULL;
  g_autoptr(GError) lookup_error = NULL;
  if (!tree_lookup (root, path, &checksum, &dir, &lookup_error) || (checksum == NULL && dir == NULL))
    return TRUE;
  if (dir != NULL)
    {
      g_autoptr(GPtrArray) left = util_sorted_keys (ostree_mutable_tree_get_files (dir));
      g_autoptr(GPtrArray) subdirs = util_sorted_keys (ostree_mutable_tree_get_subdirs (dir));
      const char *child = left->len > 0 ? left->pdata[0] : subdirs->len > 0 ? subdirs->pdata[0] : NULL;
      if (child != NULL)
        {
          g_autofree char *child_path = g_strconcat (path, "/", child, NULL);
          const char *owner = g_hash_table_lookup (kept, child_path);
          g_autofree char *whose = owner != NULL ? g_strdup_printf ("package %s", owner)
                                                 : g_strdup ("from no package");
          return util_fail (error, "path filters: /%s is excluded but /%s (%s) is not: dpkg "
                            "would fail to unpack it; exclude /%s/* too, or include /%s",
                            path, child_path, whose, path, path);
        }
    }
  return tree_remove (root, path, TRUE, FALSE, error);
}

gboolean
dpkgdb_filter_paths (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root,
                     const char *const *rules,
                     gboolean merged_usr, GCancellable *cancellable, GError **error)
{
  if (rules == NULL || rules[0] == NULL)
    return TRUE;
  g_autoptr(GHashTable) excluded = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) kept = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  if (!filter_classify (repo, root, rules, merged_usr, excluded, kept, cancellable, error))
    return FALSE;

  g_autoptr(GPtrArray) paths = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer path;
  g_hash_table_iter_init (&iter, excluded);
  while (g_hash_table_iter_next (&iter, &path, NULL))
    if (!g_hash_table_contains (kept, path))
      g_ptr_array_add (paths, path);
  g_ptr_array_sort (paths, compare_reversed);
  for (guint i = 0; i < paths->len; i++)
    if (!filter_remove (root, paths->pdata[i], kept, error))
      return FALSE;

  /* The same rules for dpkg in the image, so what apt installs there later
   * is filtered too. */
  TreeMkdirOptions dir_options = { 0, 0, 0755, TRUE };
  g_autofree char *cfg = pathfilter_dpkg_cfg (rules);
  g_autofree char *cfg_dir = g_path_get_dirname (DPKGDB_PATH_FILTERS_CFG);
  return tree_mkdir (sink, root, cfg_dir, &dir_options, cancellable, error)
         && put_file (repo, sink, root, DPKGDB_PATH_FILTERS_CFG, cfg, FALSE, cancellable, error);
}

gboolean
dpkgdb_filter_conflicts (OstreeRepo *repo, GPtrArray *conflicts, const char *const *rules,
                         GCancellable *cancellable, GError **error)
{
  for (guint i = conflicts->len; rules != NULL && rules[0] != NULL && i > 0; i--)
    {
      const TreeConflict *conflict = conflicts->pdata[i - 1];
      gboolean symlink = FALSE;
      if (pathfilter_may_reinclude (rules, conflict->path)
          && !filter_is_symlink (repo, conflict->checksum, &symlink, cancellable, error))
        return FALSE;
      if (pathfilter_excludes (rules, conflict->path, symlink))
        g_ptr_array_remove_index (conflicts, i - 1);
    }
  return TRUE;
}
