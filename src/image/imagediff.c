/* imagediff.c — package-aware differences of two images; see imagediff.h. */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "base/deb822.h"
#include "base/debpolicy.h"
#include "base/util.h"
#include "image/imagedb.h"
#include "image/imagediff.h"
#include "store/repo.h"
#include "store/treeread.h"

static void
image_package_free (ImagePackage *p)
{
  g_free (p->name);
  g_free (p->architecture);
  g_free (p->version);
  g_free (p->source);
  g_free (p->sha256);
  g_free (p);
}

void
image_side_free (ImageSide *side)
{
  if (side == NULL)
    return;
  g_free (side->label);
  g_ptr_array_unref (side->packages);
  g_clear_object (&side->root);
  g_free (side);
}

static ImageSide *
image_side_new (const char *label)
{
  ImageSide *side = g_new0 (ImageSide, 1);
  side->label = g_strdup (label);
  side->packages = g_ptr_array_new_with_free_func ((GDestroyNotify) image_package_free);
  return side;
}

static int
compare_name_arch (const char *n1, const char *a1, const char *n2, const char *a2)
{
  int c = strcmp (n1, n2);
  return c != 0 ? c : strcmp (a1, a2);
}

static gint
compare_packages (gconstpointer a, gconstpointer b)
{
  const ImagePackage *x = *(ImagePackage *const *) a, *y = *(ImagePackage *const *) b;
  return compare_name_arch (x->name, x->architecture, y->name, y->architecture);
}

ImageSide *
image_side_from_lockfile (Lockfile *lock, const char *label)
{
  ImageSide *side = image_side_new (label);
  for (guint i = 0; i < lock->packages->len; i++)
    {
      LockPackage *lp = lock->packages->pdata[i];
      ImagePackage *p = g_new0 (ImagePackage, 1);
      p->name = g_strdup (lp->name);
      p->architecture = g_strdup (lp->architecture);
      p->version = g_strdup (lp->version);
      p->source = g_strdup (lp->source);
      p->sha256 = g_strdup (lp->sha256);
      g_ptr_array_add (side->packages, p);
    }
  g_ptr_array_sort (side->packages, compare_packages);
  return side;
}

ImageSide *
image_side_from_ref (OstreeRepo *repo, const char *ref, GCancellable *cancellable, GError **error)
{
  g_autoptr(ImageSide) side = image_side_new (ref);
  g_autoptr(RepoRev) rev = repo_resolve (repo, ref, error);  /* "a" is a ref, not a prefix */
  if (rev == NULL
      || !ostree_repo_read_commit (repo, rev->commit, &side->root, NULL, cancellable, error))
    return NULL;
  g_autoptr(GPtrArray) stanzas = imagedb_read_status (side->root, ref, cancellable, error);
  if (stanzas == NULL)
    return NULL;
  g_autoptr(GPtrArray) present = imagedb_packages (stanzas, IMAGEDB_PRESENT, ref, error);
  if (present == NULL)
    return NULL;
  for (guint i = 0; i < present->len; i++)
    {
      ImagePackage *p = g_new0 (ImagePackage, 1);
      g_ptr_array_add (side->packages, p);
      p->name = deb822_first_line (present->pdata[i], "package");
      p->architecture = deb822_first_line (present->pdata[i], "architecture");
      p->version = deb822_first_line (present->pdata[i], "version");
    }
  g_ptr_array_sort (side->packages, compare_packages);
  return g_steal_pointer (&side);
}

const char *
image_change_kind_name (ImageChangeKind kind)
{
  static const char *const names[] = { "added", "removed", "upgraded", "downgraded", "rebuilt" };
  return names[kind];
}

static void
add_change (GPtrArray *changes, ImageChangeKind kind, const ImagePackage *before,
            const ImagePackage *after)
{
  ImagePackageChange *c = g_new0 (ImagePackageChange, 1);
  *c = (ImagePackageChange) { kind, before, after };
  g_ptr_array_add (changes, c);
}

GPtrArray *
image_diff_packages (ImageSide *a, ImageSide *b)
{
  GPtrArray *changes = g_ptr_array_new_with_free_func (g_free);
  guint i = 0, j = 0;
  while (i < a->packages->len || j < b->packages->len)
    {
      const ImagePackage *x = i < a->packages->len ? a->packages->pdata[i] : NULL;
      const ImagePackage *y = j < b->packages->len ? b->packages->pdata[j] : NULL;
      int order = x == NULL ? 1 : y == NULL ? -1
                  : compare_name_arch (x->name, x->architecture, y->name, y->architecture);
      if (order < 0)
        add_change (changes, IMAGE_CHANGE_REMOVED, x, NULL), i++;
      else if (order > 0)
        add_change (changes, IMAGE_CHANGE_ADDED, NULL, y), j++;
      else
        {
          int v = debpolicy_version_compare (x->version, y->version);
          if (v < 0)
            add_change (changes, IMAGE_CHANGE_UPGRADED, x, y);
          else if (v > 0)
            add_change (changes, IMAGE_CHANGE_DOWNGRADED, x, y);
          else if (x->sha256 != NULL && y->sha256 != NULL && !g_str_equal (x->sha256, y->sha256))
            add_change (changes, IMAGE_CHANGE_REBUILT, x, y);
          i++, j++;
        }
    }
  return changes;
}

/* "VERSION (SOURCE)" for one side of a change. */
static char *
describe (const ImagePackage *p)
{
  return p->source != NULL ? g_strdup_printf ("%s (%s)", p->version, p->source)
                           : g_strdup (p->version);
}

char *
image_diff_packages_text (GPtrArray *changes)
{
  GString *out = g_string_new ("");
  guint counts[IMAGE_CHANGE_REBUILT + 1] = { 0 };
  for (guint i = 0; i < changes->len; i++)
    {
      const ImagePackageChange *c = changes->pdata[i];
      const ImagePackage *p = c->after != NULL ? c->after : c->before;
      g_autofree char *before = c->before != NULL ? describe (c->before) : NULL;
      g_autofree char *after = c->after != NULL ? describe (c->after) : NULL;
      counts[c->kind]++;
      g_string_append_printf (out, "%-10s %s:%s ", image_change_kind_name (c->kind), p->name,
                              p->architecture);
      if (c->kind == IMAGE_CHANGE_REBUILT)
        g_string_append_printf (out, "%s, another .deb (new SHA256)\n", after);
      else if (before != NULL && after != NULL)
        g_string_append_printf (out, "%s -> %s\n", before, after);
      else
        g_string_append_printf (out, "%s\n", before != NULL ? before : after);
    }
  g_string_append_printf (out, "%u added, %u removed, %u upgraded, %u downgraded",
                          counts[IMAGE_CHANGE_ADDED], counts[IMAGE_CHANGE_REMOVED],
                          counts[IMAGE_CHANGE_UPGRADED], counts[IMAGE_CHANGE_DOWNGRADED]);
  if (counts[IMAGE_CHANGE_REBUILT] > 0)
    g_string_append_printf (out, ", %u rebuilt", counts[IMAGE_CHANGE_REBUILT]);
  g_string_append_c (out, '\n');
  return g_string_free (out, FALSE);
}

/* --- files --------------------------------------------------------------- */

void
image_file_change_free (ImageFileChange *change)
{
  g_free (change->path);
  g_free (change->owner);
  g_free (change);
}

/* Where a path a package ships is in the tree: under merged /usr,
 * "/bin/ls" is "/usr/bin/ls" (the top-level link's target). */
static char *
tree_path (GFile *root, const char *shipped, GHashTable *top_links)
{
  const char *rest = shipped + 1;
  gsize len = strcspn (rest, "/");
  g_autofree char *top = g_strndup (rest, len);
  const char *target = g_hash_table_lookup (top_links, top);
  if (target == NULL)
    return g_strdup (shipped);
  return g_strconcat ("/", target, rest + len, NULL);
}

/* The root's symbolic links into usr/ ("bin" -> "usr/bin"). */
static GHashTable *
top_level_links (GFile *root, GCancellable *cancellable)
{
  GHashTable *links = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  static const char *const tops[] = { "bin", "sbin", "lib", "lib32", "lib64", "libx32", "libo32" };
  for (guint i = 0; i < G_N_ELEMENTS (tops); i++)
    {
      g_autoptr(GFile) child = g_file_get_child (root, tops[i]);
      g_autoptr(GFileInfo) info = g_file_query_info (child, "standard::type,standard::symlink-target",
                                                     G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS,
                                                     cancellable, NULL);
      if (info == NULL || g_file_info_get_file_type (info) != G_FILE_TYPE_SYMBOLIC_LINK)
        continue;
      const char *target = g_file_info_get_symlink_target (info);
      while (*target == '/')
        target++;
      if (g_str_has_prefix (target, "usr/"))
        g_hash_table_insert (links, g_strdup (tops[i]), g_strdup (target));
    }
  return links;
}

/* Path in the tree -> the dpkg name of the package whose .list has it (the
 * first in name order when several list it). */
static GHashTable *
owners_of (GFile *root, GCancellable *cancellable, GError **error)
{
  g_autoptr(GHashTable) owners = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GFile) info_dir = g_file_resolve_relative_path (root, "var/lib/dpkg/info");
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GFileEnumerator) e = g_file_enumerate_children (info_dir, "standard::name",
                                                            G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS,
                                                            cancellable, &local_error);
  if (e == NULL)
    return g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND)
             ? g_steal_pointer (&owners)
             : (util_fail (error, "var/lib/dpkg/info: %s", local_error->message), NULL);
  g_autoptr(GPtrArray) lists = g_ptr_array_new_with_free_func (g_free);
  GFileInfo *info;
  while ((info = g_file_enumerator_next_file (e, cancellable, NULL)) != NULL)
    {
      if (g_str_has_suffix (g_file_info_get_name (info), ".list"))
        g_ptr_array_add (lists, g_strdup (g_file_info_get_name (info)));
      g_object_unref (info);
    }
  g_ptr_array_sort (lists, util_compare_strings);
  g_autoptr(GHashTable) top_links = top_level_links (root, cancellable);
  for (guint i = 0; i < lists->len; i++)
    {
      const char *list = lists->pdata[i];
      g_autofree char *path = g_strconcat ("var/lib/dpkg/info/", list, NULL);
      g_autofree char *text = treeread_text (root, path, cancellable, error);
      if (text == NULL && error != NULL && *error != NULL)
        return NULL;
      g_autofree char *owner = g_strndup (list, strlen (list) - strlen (".list"));
      g_auto(GStrv) lines = g_strsplit (text != NULL ? text : "", "\n", -1);
      for (char **l = lines; *l != NULL; l++)
        if ((*l)[0] == '/')
          {
            char *where = tree_path (root, *l, top_links);
            if (g_hash_table_contains (owners, where))
              g_free (where);
            else
              g_hash_table_insert (owners, where, g_strdup (owner));
          }
    }
  return g_steal_pointer (&owners);
}

static gboolean
is_directory (GFile *f, GCancellable *cancellable)
{
  return g_file_query_file_type (f, G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, cancellable)
         == G_FILE_TYPE_DIRECTORY;
}

/* The package a path belongs to: the .list that names it, or for dpkg's
 * own files of a package (var/lib/dpkg/info/NAME.postinst) that package. */
static char *
owner_of (const char *path, GHashTable *owners)
{
  const char *owner = g_hash_table_lookup (owners, path);
  if (owner != NULL)
    return g_strdup (owner);
  if (!g_str_has_prefix (path, "/var/lib/dpkg/info/"))
    return NULL;
  const char *base = path + strlen ("/var/lib/dpkg/info/");
  const char *dot = strrchr (base, '.');
  return dot != NULL && strchr (base, '/') == NULL ? g_strndup (base, dot - base) : NULL;
}

/* F, or everything under a removed directory (ostree_diff_dirs() names a
 * removed directory alone, but an added one with all it holds). */
static void
add_file (GPtrArray *out, char change, GFile *f, GHashTable *owners, GCancellable *cancellable)
{
  if (is_directory (f, cancellable) && change != 'D')
    return;
  if (is_directory (f, cancellable))
    {
      g_autoptr(GFileEnumerator) e = g_file_enumerate_children (f, "standard::name",
                                                                G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS,
                                                                cancellable, NULL);
      GFileInfo *info;
      while (e != NULL && (info = g_file_enumerator_next_file (e, cancellable, NULL)) != NULL)
        {
          g_autoptr(GFile) child = g_file_get_child (f, g_file_info_get_name (info));
          g_object_unref (info);
          add_file (out, change, child, owners, cancellable);
        }
      return;
    }
  ImageFileChange *c = g_new0 (ImageFileChange, 1);
  c->change = change;
  c->path = g_file_get_path (f);
  c->owner = owner_of (c->path, owners);
  g_ptr_array_add (out, c);
}

static gint
compare_file_changes (gconstpointer a, gconstpointer b)
{
  const ImageFileChange *x = *(ImageFileChange *const *) a, *y = *(ImageFileChange *const *) b;
  if ((x->owner == NULL) != (y->owner == NULL))
    return x->owner == NULL ? 1 : -1;
  int c = x->owner != NULL ? strcmp (x->owner, y->owner) : 0;
  return c != 0 ? c : strcmp (x->path, y->path);
}

GPtrArray *
image_diff_files (ImageSide *a, ImageSide *b, GCancellable *cancellable, GError **error)
{
  if (a->root == NULL || b->root == NULL)
    return util_fail (error, "--files compares trees: give two refs (\"%s\" is a lockfile)",
                      a->root == NULL ? a->label : b->label), NULL;
  g_autoptr(GPtrArray) modified = g_ptr_array_new_with_free_func ((GDestroyNotify) ostree_diff_item_unref);
  g_autoptr(GPtrArray) removed = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) added = g_ptr_array_new_with_free_func (g_object_unref);
  if (!ostree_diff_dirs (OSTREE_DIFF_FLAGS_NONE, a->root, b->root, modified, removed, added,
                         cancellable, error))
    return NULL;
  g_autoptr(GHashTable) owners_a = owners_of (a->root, cancellable, error);
  if (owners_a == NULL)
    return NULL;
  g_autoptr(GHashTable) owners_b = owners_of (b->root, cancellable, error);
  if (owners_b == NULL)
    return NULL;

  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) image_file_change_free);
  for (guint i = 0; i < modified->len; i++)
    add_file (out, 'M', ((OstreeDiffItem *) modified->pdata[i])->target, owners_b, cancellable);
  for (guint i = 0; i < removed->len; i++)
    add_file (out, 'D', removed->pdata[i], owners_a, cancellable);
  for (guint i = 0; i < added->len; i++)
    add_file (out, 'A', added->pdata[i], owners_b, cancellable);
  g_ptr_array_sort (out, compare_file_changes);
  return out;
}

char *
image_diff_files_text (GPtrArray *files)
{
  g_autoptr(GString) text = g_string_new (NULL);
  const char *group = NULL;
  gboolean first = TRUE;
  for (guint i = 0; i < files->len; i++)
    {
      const ImageFileChange *f = files->pdata[i];
      const char *owner = f->owner != NULL ? f->owner : "(no package: written by maintainer scripts or hooks)";
      if (first || g_strcmp0 (group, owner) != 0)
        g_string_append_printf (text, "%s:\n", owner);
      group = owner;
      first = FALSE;
      g_string_append_printf (text, "  %c %s\n", f->change, f->path);
    }
  return g_string_free (g_steal_pointer (&text), FALSE);
}

static void
json_side (JsonBuilder *b, const char *member, const ImagePackage *p)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "version");
  json_builder_add_string_value (b, p->version);
  json_builder_set_member_name (b, "source");
  if (p->source != NULL)
    json_builder_add_string_value (b, p->source);
  else
    json_builder_add_null_value (b);
  json_builder_end_object (b);
}

char *
image_diff_to_json (GPtrArray *changes, GPtrArray *files)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "packages");
  json_builder_begin_array (b);
  for (guint i = 0; i < changes->len; i++)
    {
      const ImagePackageChange *c = changes->pdata[i];
      const ImagePackage *p = c->after != NULL ? c->after : c->before;
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "change");
      json_builder_add_string_value (b, image_change_kind_name (c->kind));
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, p->name);
      json_builder_set_member_name (b, "architecture");
      json_builder_add_string_value (b, p->architecture);
      if (c->before != NULL)
        json_side (b, "before", c->before);
      if (c->after != NULL)
        json_side (b, "after", c->after);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  if (files != NULL)
    {
      json_builder_set_member_name (b, "files");
      json_builder_begin_array (b);
      for (guint i = 0; i < files->len; i++)
        {
          const ImageFileChange *f = files->pdata[i];
          const char *change = f->change == 'A' ? "added" : f->change == 'D' ? "removed" : "modified";
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "change");
          json_builder_add_string_value (b, change);
          json_builder_set_member_name (b, "path");
          json_builder_add_string_value (b, f->path);
          json_builder_set_member_name (b, "package");
          if (f->owner != NULL)
            json_builder_add_string_value (b, f->owner);
          else
            json_builder_add_null_value (b);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
  g_autoptr(JsonNode) root = json_builder_get_root (b);
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_root (gen, root);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  return g_strconcat (text, "\n", NULL);
}
