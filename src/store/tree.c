/* tree.c — metadata-only operations on OSTree trees.
 *
 * Trees are OstreeMutableTrees loaded lazily from dirtree checksums.  A
 * subtree that an operation does not reach stays a (contents, metadata)
 * checksum pair and is written back as such, and files are only ever moved
 * around by checksum: nothing here opens a file object. */
#include "config.h"

#include <string.h>

#include "store/content.h"
#include "store/tree.h"
#include "base/util.h"

typedef enum { ENTRY_NONE, ENTRY_FILE, ENTRY_DIR } EntryKind;

/* Look NAME up in DIR; a missing entry is not an error. */
static gboolean
lookup_entry (OstreeMutableTree *dir, const char *name, EntryKind *out_kind,
              char **out_file_checksum, OstreeMutableTree **out_subdir, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *file_checksum = NULL;
  g_autoptr(OstreeMutableTree) subdir = NULL;

  if (!ostree_mutable_tree_lookup (dir, name, &file_checksum, &subdir, &local_error))
    {
      if (!g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      *out_kind = ENTRY_NONE;
      return TRUE;
    }

  *out_kind = subdir != NULL ? ENTRY_DIR : ENTRY_FILE;
  if (out_file_checksum != NULL)
    *out_file_checksum = g_steal_pointer (&file_checksum);
  if (out_subdir != NULL)
    *out_subdir = g_steal_pointer (&subdir);
  return TRUE;
}

/* Attach the stored directory (CONTENTS, META) as NAME in DIR, lazily. */
static gboolean
attach_dirtree (OstreeMutableTree *dir, const char *name, OstreeRepo *repo, const char *contents,
                const char *meta, GError **error)
{
  g_autoptr(OstreeMutableTree) subdir = NULL;
  if (!ostree_mutable_tree_ensure_dir (dir, name, &subdir, error))
    return FALSE;
  if (!ostree_mutable_tree_fill_empty_from_dirtree (subdir, repo, contents, meta))
    return util_fail (error, "internal error: cannot attach directory \"%s\"", name);
  return TRUE;
}

/* Make the new, empty directory DST a copy of SRC by checksums, writing
 * nothing: a subdirectory unchanged since it was loaded is attached by its
 * dirtree, lazily; a changed one is copied entry by entry. */
static gboolean
copy_dir (OstreeMutableTree *dst, OstreeMutableTree *src, OstreeRepo *repo, GError **error)
{
  const char *meta = ostree_mutable_tree_get_metadata_checksum (src);
  const char *contents = ostree_mutable_tree_get_contents_checksum (src);
  if (meta == NULL)
    return util_fail (error, "a directory without metadata cannot be moved");
  if (contents != NULL)
    return ostree_mutable_tree_fill_empty_from_dirtree (dst, repo, contents, meta)
           || util_fail (error, "internal error: cannot copy a directory");
  ostree_mutable_tree_set_metadata_checksum (dst, meta);
  GHashTableIter iter;
  gpointer name, value;
  g_hash_table_iter_init (&iter, ostree_mutable_tree_get_files (src));
  while (g_hash_table_iter_next (&iter, &name, &value))
    if (!ostree_mutable_tree_replace_file (dst, name, value, error))
      return FALSE;
  g_hash_table_iter_init (&iter, ostree_mutable_tree_get_subdirs (src));
  while (g_hash_table_iter_next (&iter, &name, &value))
    {
      g_autoptr(OstreeMutableTree) sub = NULL;
      if (!ostree_mutable_tree_ensure_dir (dst, name, &sub, error)
          || !copy_dir (sub, value, repo, error))
        return FALSE;
    }
  return TRUE;
}

OstreeMutableTree *
tree_load (OstreeRepo *repo, const RepoRev *rev)
{
  return ostree_mutable_tree_new_from_checksum (repo, rev->root_contents, rev->root_meta);
}

/* Walk COMPONENTS[0..n) from ROOT, each of which must be a directory.
 * With PARENTS_META, missing directories are created with that dirmeta. */
static gboolean
walk_dirs (OstreeMutableTree *root, GPtrArray *components, guint n, const char *parents_meta,
           OstreeMutableTree **out_dir, GError **error)
{
  g_autoptr(OstreeMutableTree) dir = g_object_ref (root);
  for (guint i = 0; i < n; i++)
    {
      const char *name = components->pdata[i];
      EntryKind kind;
      g_autoptr(OstreeMutableTree) next = NULL;
      if (!lookup_entry (dir, name, &kind, NULL, &next, error))
        return FALSE;

      if (kind == ENTRY_FILE)
        {
          g_autofree char *where = util_join_tree_path (components, i + 1);
          return util_fail (error, "\"%s\" is not a directory", where);
        }
      if (kind == ENTRY_NONE)
        {
          if (parents_meta == NULL)
            {
              g_autofree char *where = util_join_tree_path (components, i + 1);
              return util_fail (error, "\"%s\": no such directory", where);
            }
          if (!ostree_mutable_tree_ensure_dir (dir, name, &next, error))
            return FALSE;
          ostree_mutable_tree_set_metadata_checksum (next, parents_meta);
        }
      g_set_object (&dir, next);
    }
  *out_dir = g_steal_pointer (&dir);
  return TRUE;
}

/* Split PATH, refusing the root: the operations below name an entry. */
static GPtrArray *
split_entry_path (const char *path, GError **error)
{
  g_autoptr(GPtrArray) components = util_split_tree_path (path, error);
  if (components == NULL)
    return NULL;
  if (components->len == 0)
    {
      util_fail (error, "\"%s\": the root of a tree cannot be used here", path);
      return NULL;
    }
  return g_steal_pointer (&components);
}

/* ---- combine ------------------------------------------------------------ */

typedef struct {
  OstreeRepo *repo;
  GPtrArray *revs;          /* RepoRev* */
  guint current;            /* index in revs of the tree being merged */
  TreeCombineFlags flags;
  GPtrArray *path;          /* components of the directory being merged */
  GPtrArray *conflicts;     /* TreeConflict*, with TREE_COMBINE_SET_ASIDE */
} Combine;

void
tree_conflict_free (TreeConflict *conflict)
{
  g_free (conflict->path);
  g_free (conflict->checksum);
  g_free (conflict);
}

/* The index of the first tree before the current one that has PATH: the
 * one whose entry the current tree clashes with. */
static guint
earlier_owner (Combine *c, const char *path)
{
  for (guint i = 0; i < c->current; i++)
    {
      const RepoRev *rev = c->revs->pdata[i];
      g_autofree char *file = NULL, *contents = NULL, *meta = NULL;
      if (tree_find (c->repo, rev, path, &file, &contents, &meta, NULL))
        return i;
    }
  return 0;
}

static char *
combine_path (Combine *c, const char *name)
{
  g_ptr_array_add (c->path, (char *) name);
  char *path = util_join_tree_path (c->path, c->path->len);
  g_ptr_array_remove_index (c->path, c->path->len - 1);
  return path;
}

/* EARLIER and LATER are the kinds of entry the two trees have at NAME. */
static gboolean
combine_conflict (Combine *c, const char *name, EntryKind earlier, EntryKind later, GError **error)
{
  g_autofree char *path = combine_path (c, name);
  const char *earlier_name = ((const RepoRev *) c->revs->pdata[earlier_owner (c, path)])->name;
  const char *later_name = ((const RepoRev *) c->revs->pdata[c->current])->name;

  g_autofree char *clash = NULL;
  if (earlier == later)
    clash = g_strdup_printf ("differs between \"%s\" and \"%s\"", earlier_name, later_name);
  else if (earlier == ENTRY_DIR)
    clash = g_strdup_printf ("is a directory in \"%s\" but not in \"%s\"", earlier_name, later_name);
  else
    clash = g_strdup_printf ("is a directory in \"%s\" but not in \"%s\"", later_name, earlier_name);
  if (c->flags & TREE_COMBINE_SET_ASIDE)
    return util_fail (error, "\"%s\" %s", path, clash);
  return util_fail (error, "\"%s\" %s; use --later-wins to let the later tree win", path, clash);
}

static gboolean combine_dir (Combine *c, OstreeMutableTree *dst, const char *contents,
                             GError **error);

static gboolean
combine_file (Combine *c, OstreeMutableTree *dst, const char *name, const char *checksum,
              GError **error)
{
  EntryKind kind;
  g_autofree char *existing = NULL;
  if (!lookup_entry (dst, name, &kind, &existing, NULL, error))
    return FALSE;

  if (kind == ENTRY_FILE && g_str_equal (existing, checksum))
    return TRUE;
  if (kind == ENTRY_FILE && (c->flags & TREE_COMBINE_SET_ASIDE))
    {
      TreeConflict *conflict = g_new0 (TreeConflict, 1);
      conflict->path = combine_path (c, name);
      conflict->earlier = earlier_owner (c, conflict->path);
      conflict->later = c->current;
      conflict->checksum = g_strdup (checksum);
      g_ptr_array_add (c->conflicts, conflict);
      return TRUE;
    }
  if (kind != ENTRY_NONE && !(c->flags & TREE_COMBINE_LATER_WINS))
    return combine_conflict (c, name, kind, ENTRY_FILE, error);
  if (kind == ENTRY_DIR && !ostree_mutable_tree_remove (dst, name, FALSE, error))
    return FALSE;
  return ostree_mutable_tree_replace_file (dst, name, checksum, error);
}

static gboolean
combine_subdir (Combine *c, OstreeMutableTree *dst, const char *name, const char *contents,
                const char *meta, GError **error)
{
  EntryKind kind;
  g_autoptr(OstreeMutableTree) existing = NULL;
  if (!lookup_entry (dst, name, &kind, NULL, &existing, error))
    return FALSE;

  if (kind == ENTRY_NONE)
    return attach_dirtree (dst, name, c->repo, contents, meta, error);

  if (kind == ENTRY_FILE)
    {
      if (!(c->flags & TREE_COMBINE_LATER_WINS))
        return combine_conflict (c, name, ENTRY_FILE, ENTRY_DIR, error);
      if (!ostree_mutable_tree_remove (dst, name, FALSE, error))
        return FALSE;
      return attach_dirtree (dst, name, c->repo, contents, meta, error);
    }

  /* Identical subtrees (common: /usr/share/doc in many packages) cost one
   * comparison. */
  if (g_strcmp0 (ostree_mutable_tree_get_contents_checksum (existing), contents) == 0
      && g_strcmp0 (ostree_mutable_tree_get_metadata_checksum (existing), meta) == 0)
    return TRUE;

  if (c->flags & TREE_COMBINE_LATER_WINS)
    ostree_mutable_tree_set_metadata_checksum (existing, meta);

  g_ptr_array_add (c->path, (char *) name);
  gboolean ok = combine_dir (c, existing, contents, error);
  g_ptr_array_remove_index (c->path, c->path->len - 1);
  return ok;
}

/* Merge the stored directory CONTENTS into DST. */
static gboolean
combine_dir (Combine *c, OstreeMutableTree *dst, const char *contents, GError **error)
{
  g_autoptr(GVariant) dirtree = NULL;
  if (!ostree_repo_load_variant (c->repo, OSTREE_OBJECT_TYPE_DIR_TREE, contents, &dirtree, error))
    return FALSE;

  g_autoptr(GVariant) files = g_variant_get_child_value (dirtree, 0);
  GVariantIter iter;
  const char *name;
  GVariant *csum_v;
  g_variant_iter_init (&iter, files);
  while (g_variant_iter_loop (&iter, "(&s@ay)", &name, &csum_v))
    {
      char checksum[OSTREE_SHA256_STRING_LEN + 1];
      ostree_checksum_inplace_from_bytes (ostree_checksum_bytes_peek (csum_v), checksum);
      if (!combine_file (c, dst, name, checksum, error))
        return FALSE;
    }

  g_autoptr(GVariant) dirs = g_variant_get_child_value (dirtree, 1);
  GVariant *meta_v;
  g_variant_iter_init (&iter, dirs);
  while (g_variant_iter_loop (&iter, "(&s@ay@ay)", &name, &csum_v, &meta_v))
    {
      char sub_contents[OSTREE_SHA256_STRING_LEN + 1];
      char sub_meta[OSTREE_SHA256_STRING_LEN + 1];
      ostree_checksum_inplace_from_bytes (ostree_checksum_bytes_peek (csum_v), sub_contents);
      ostree_checksum_inplace_from_bytes (ostree_checksum_bytes_peek (meta_v), sub_meta);
      if (!combine_subdir (c, dst, name, sub_contents, sub_meta, error))
        return FALSE;
    }
  return TRUE;
}

OstreeMutableTree *
tree_combine (OstreeRepo *repo, GPtrArray *revs, TreeCombineFlags flags, GPtrArray *out_conflicts,
              GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (revs->len > 0, NULL);
  g_return_val_if_fail (!(flags & TREE_COMBINE_SET_ASIDE) || out_conflicts != NULL, NULL);

  const RepoRev *first = revs->pdata[0];
  g_autoptr(OstreeMutableTree) result = tree_load (repo, first);
  g_autoptr(GPtrArray) path = g_ptr_array_new ();
  Combine c = { repo, revs, 0, flags, path, out_conflicts };

  for (c.current = 1; c.current < revs->len; c.current++)
    {
      const RepoRev *top = revs->pdata[c.current];
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      if (flags & TREE_COMBINE_LATER_WINS)
        ostree_mutable_tree_set_metadata_checksum (result, top->root_meta);
      if (!combine_dir (&c, result, top->root_contents, error))
        return NULL;
    }
  return g_steal_pointer (&result);
}

/* ---- edits ---------------------------------------------------------------- */

gboolean
tree_mkdir (StoreSink *sink, OstreeMutableTree *root, const char *path,
            const TreeMkdirOptions *options, GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) components = split_entry_path (path, error);
  if (components == NULL)
    return FALSE;

  g_autofree char *parents_meta = NULL;
  if (options->parents)
    {
      parents_meta = sink->metadata (sink, OBJECTS_DIR_META,
                                     objects_dirmeta_new (0, 0, 0755, NULL), error);
      if (parents_meta == NULL)
        return FALSE;
    }
  g_autofree char *meta = sink->metadata (
      sink, OBJECTS_DIR_META, objects_dirmeta_new (options->uid, options->gid, options->mode, NULL),
      error);
  if (meta == NULL)
    return FALSE;

  g_autoptr(OstreeMutableTree) parent = NULL;
  if (!walk_dirs (root, components, components->len - 1, parents_meta, &parent, error))
    return FALSE;

  const char *name = components->pdata[components->len - 1];
  g_autofree char *where = util_join_tree_path (components, components->len);
  EntryKind kind;
  if (!lookup_entry (parent, name, &kind, NULL, NULL, error))
    return FALSE;
  if (kind == ENTRY_DIR && options->parents)
    return TRUE;
  if (kind != ENTRY_NONE)
    return util_fail (error, "\"%s\" already exists", where);

  g_autoptr(OstreeMutableTree) dir = NULL;
  if (!ostree_mutable_tree_ensure_dir (parent, name, &dir, error))
    return FALSE;
  ostree_mutable_tree_set_metadata_checksum (dir, meta);
  return TRUE;
}

/* The parent directory of an entry that must not exist yet. */
static gboolean
parent_of_new_entry (OstreeMutableTree *root, GPtrArray *components, OstreeMutableTree **out_parent,
                     GError **error)
{
  if (!walk_dirs (root, components, components->len - 1, NULL, out_parent, error))
    return FALSE;
  EntryKind kind;
  if (!lookup_entry (*out_parent, components->pdata[components->len - 1], &kind, NULL, NULL, error))
    return FALSE;
  if (kind != ENTRY_NONE)
    {
      g_autofree char *where = util_join_tree_path (components, components->len);
      return util_fail (error, "\"%s\" already exists", where);
    }
  return TRUE;
}

gboolean
tree_symlink (StoreSink *sink, OstreeMutableTree *root, const char *target,
              const char *linkpath, GCancellable *cancellable, GError **error)
{
  if (*target == '\0')
    return util_fail (error, "a symlink target cannot be empty");
  g_autoptr(GPtrArray) components = split_entry_path (linkpath, error);
  if (components == NULL)
    return FALSE;
  g_autoptr(OstreeMutableTree) parent = NULL;
  if (!parent_of_new_entry (root, components, &parent, error))
    return FALSE;

  /* (content_write_file() refuses a target that is not UTF-8.) */
  g_autoptr(GFileInfo) info = content_symlink_info (0, 0, target);
  g_autofree char *checksum = content_write_file (sink, info, NULL, NULL, cancellable, error);
  if (checksum == NULL)
    return FALSE;
  return ostree_mutable_tree_replace_file (parent, components->pdata[components->len - 1],
                                           checksum, error);
}

gboolean
tree_move (OstreeRepo *repo, OstreeMutableTree *root, const char *src, const char *dst,
           GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) from = split_entry_path (src, error);
  if (from == NULL)
    return FALSE;
  g_autoptr(GPtrArray) to = split_entry_path (dst, error);
  if (to == NULL)
    return FALSE;

  g_autofree char *from_path = util_join_tree_path (from, from->len);
  g_autofree char *to_path = util_join_tree_path (to, to->len);
  if (g_str_has_prefix (to_path, from_path) && to_path[strlen (from_path)] == '/')
    return util_fail (error, "cannot move \"%s\" into itself (\"%s\")", from_path, to_path);

  g_autoptr(OstreeMutableTree) src_parent = NULL;
  if (!walk_dirs (root, from, from->len - 1, NULL, &src_parent, error))
    return FALSE;
  const char *src_name = from->pdata[from->len - 1];
  EntryKind kind;
  g_autofree char *file_checksum = NULL;
  g_autoptr(OstreeMutableTree) subdir = NULL;
  if (!lookup_entry (src_parent, src_name, &kind, &file_checksum, &subdir, error))
    return FALSE;
  if (kind == ENTRY_NONE)
    return util_fail (error, "\"%s\": no such file or directory", from_path);

  g_autoptr(OstreeMutableTree) dst_parent = NULL;
  if (!parent_of_new_entry (root, to, &dst_parent, error))
    return FALSE;
  /* (SUBDIR, held here, survives its removal from the tree.) */
  if (!ostree_mutable_tree_remove (src_parent, src_name, FALSE, error))
    return FALSE;

  const char *dst_name = to->pdata[to->len - 1];
  if (kind == ENTRY_FILE)
    return ostree_mutable_tree_replace_file (dst_parent, dst_name, file_checksum, error);
  g_autoptr(OstreeMutableTree) moved = NULL;
  return ostree_mutable_tree_ensure_dir (dst_parent, dst_name, &moved, error)
         && copy_dir (moved, subdir, repo, error);
}

gboolean
tree_remove (OstreeMutableTree *root, const char *path, gboolean recursive, gboolean force,
             GError **error)
{
  g_autoptr(GPtrArray) components = split_entry_path (path, error);
  if (components == NULL)
    return FALSE;
  g_autofree char *where = util_join_tree_path (components, components->len);

  g_autoptr(OstreeMutableTree) parent = NULL;
  g_autoptr(GError) walk_error = NULL;
  if (!walk_dirs (root, components, components->len - 1, NULL, &parent, &walk_error))
    {
      if (force)
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&walk_error));
      return FALSE;
    }

  const char *name = components->pdata[components->len - 1];
  EntryKind kind;
  if (!lookup_entry (parent, name, &kind, NULL, NULL, error))
    return FALSE;
  if (kind == ENTRY_NONE)
    return force ? TRUE : util_fail (error, "\"%s\": no such file or directory (--force ignores it)", where);
  if (kind == ENTRY_DIR && !recursive)
    return util_fail (error, "\"%s\" is a directory (use --recursive)", where);
  return ostree_mutable_tree_remove (parent, name, FALSE, error);
}

gboolean
tree_graft (OstreeMutableTree *root, const char *path, OstreeRepo *repo, const RepoRev *from,
            GError **error)
{
  g_autoptr(GPtrArray) components = split_entry_path (path, error);
  if (components == NULL)
    return FALSE;
  g_autoptr(OstreeMutableTree) parent = NULL;
  if (!parent_of_new_entry (root, components, &parent, error))
    return FALSE;
  return attach_dirtree (parent, components->pdata[components->len - 1], repo,
                         from->root_contents, from->root_meta, error);
}

gboolean
tree_lookup (OstreeMutableTree *root, const char *path, char **out_file_checksum,
             OstreeMutableTree **out_dir, GError **error)
{
  g_autoptr(GPtrArray) components = util_split_tree_path (path, error);
  if (components == NULL)
    return FALSE;

  g_autoptr(OstreeMutableTree) dir = g_object_ref (root);
  g_autofree char *file = NULL;
  for (guint i = 0; i < components->len; i++)
    {
      EntryKind kind;
      g_autoptr(OstreeMutableTree) next = NULL;
      g_clear_pointer (&file, g_free);
      if (!lookup_entry (dir, components->pdata[i], &kind, &file, &next, error))
        return FALSE;
      if (kind == ENTRY_FILE && i + 1 < components->len)
        {
          g_autofree char *where = util_join_tree_path (components, i + 1);
          return util_fail (error, "\"%s\" is not a directory", where);
        }
      g_set_object (&dir, next);
      if (kind == ENTRY_NONE)
        break;
    }

  if (out_file_checksum != NULL)
    *out_file_checksum = g_steal_pointer (&file);
  if (out_dir != NULL)
    *out_dir = g_steal_pointer (&dir);
  return TRUE;
}

gboolean
tree_read_file (OstreeRepo *repo, OstreeMutableTree *root, const char *path, GBytes **out_bytes,
                GCancellable *cancellable, GError **error)
{
  g_autofree char *checksum = NULL;
  *out_bytes = NULL;
  if (!tree_lookup (root, path, &checksum, NULL, error))
    return FALSE;
  if (checksum == NULL)
    return TRUE;
  *out_bytes = repo_read_file (repo, checksum, cancellable, error);
  return *out_bytes != NULL;
}

gboolean
tree_replace_file (OstreeMutableTree *root, const char *path, const char *checksum, GError **error)
{
  g_autoptr(GPtrArray) components = split_entry_path (path, error);
  if (components == NULL)
    return FALSE;
  g_autoptr(OstreeMutableTree) parent = NULL;
  if (!walk_dirs (root, components, components->len - 1, NULL, &parent, error))
    return FALSE;
  const char *name = components->pdata[components->len - 1];
  EntryKind kind;
  if (!lookup_entry (parent, name, &kind, NULL, NULL, error))
    return FALSE;
  if (kind == ENTRY_DIR)
    {
      g_autofree char *where = util_join_tree_path (components, components->len);
      return util_fail (error, "\"%s\" is a directory", where);
    }
  return ostree_mutable_tree_replace_file (parent, name, checksum, error);
}

/* ---- lookups in stored trees --------------------------------------------- */

/* NAME in the stored dirtree CONTENTS: its file checksum, or its directory
 * checksums.  Returns FALSE (no error set) when absent. */
static gboolean
dirtree_lookup (OstreeRepo *repo, const char *contents, const char *name, char **out_file,
                char **out_contents, char **out_meta, GError **error)
{
  g_autoptr(GVariant) dirtree = NULL;
  if (!ostree_repo_load_variant (repo, OSTREE_OBJECT_TYPE_DIR_TREE, contents, &dirtree, error))
    return FALSE;

  g_autoptr(GVariant) files = g_variant_get_child_value (dirtree, 0);
  gsize n = g_variant_n_children (files);
  for (gsize i = 0; i < n; i++)
    {
      const char *entry;
      g_autoptr(GVariant) csum = NULL;
      g_variant_get_child (files, i, "(&s@ay)", &entry, &csum);
      if (g_str_equal (entry, name))
        {
          *out_file = ostree_checksum_from_bytes_v (csum);
          return TRUE;
        }
    }

  g_autoptr(GVariant) dirs = g_variant_get_child_value (dirtree, 1);
  n = g_variant_n_children (dirs);
  for (gsize i = 0; i < n; i++)
    {
      const char *entry;
      g_autoptr(GVariant) csum = NULL;
      g_autoptr(GVariant) meta = NULL;
      g_variant_get_child (dirs, i, "(&s@ay@ay)", &entry, &csum, &meta);
      if (g_str_equal (entry, name))
        {
          *out_contents = ostree_checksum_from_bytes_v (csum);
          *out_meta = ostree_checksum_from_bytes_v (meta);
          return TRUE;
        }
    }
  return FALSE;
}

gboolean
tree_find (OstreeRepo *repo, const RepoRev *rev, const char *path, char **out_file_checksum,
           char **out_dir_contents, char **out_dir_meta, GError **error)
{
  g_autoptr(GPtrArray) components = util_split_tree_path (path, error);
  if (components == NULL)
    return FALSE;

  g_autofree char *contents = g_strdup (rev->root_contents);
  g_autofree char *meta = g_strdup (rev->root_meta);
  g_autofree char *file = NULL;
  for (guint i = 0; i < components->len; i++)
    {
      g_autofree char *next_contents = NULL, *next_meta = NULL;
      g_autoptr(GError) local_error = NULL;
      g_clear_pointer (&file, g_free);
      if (!dirtree_lookup (repo, contents, components->pdata[i], &file, &next_contents, &next_meta,
                           &local_error))
        {
          if (local_error != NULL)
            {
              g_propagate_error (error, g_steal_pointer (&local_error));
              return FALSE;
            }
          g_autofree char *where = util_join_tree_path (components, i + 1);
          return util_fail (error, "\"%s\": no such file or directory", where);
        }
      if (file != NULL && i + 1 < components->len)
        {
          g_autofree char *where = util_join_tree_path (components, i + 1);
          return util_fail (error, "\"%s\" is not a directory", where);
        }
      g_free (contents);
      contents = g_steal_pointer (&next_contents);
      g_free (meta);
      meta = g_steal_pointer (&next_meta);
    }

  if (file != NULL)
    *out_file_checksum = g_steal_pointer (&file);
  else
    {
      *out_dir_contents = g_steal_pointer (&contents);
      *out_dir_meta = g_steal_pointer (&meta);
    }
  return TRUE;
}
