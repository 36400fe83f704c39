/* upper.c — fold an overlayfs upper directory into an OSTree tree. */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <gio/gunixinputstream.h>

#include "store/content.h"
#include "store/repo.h"
#include "barestore/tarentry.h"
#include "sandbox/upper.h"
#include "base/util.h"

typedef struct {
  OstreeRepo *repo;
  StoreSink *sink;
  const UpperOptions *options;
  GHashTable *skip;         /* tree paths */
  const char *opaque_xattr;
  const char *redirect_xattr;
  OstreeMutableTree *pristine;   /* the lower tree as it was, for redirects */
  GString *lower_path;           /* where the entry at hand is in the lower tree */
  GCancellable *cancellable;
} Apply;

/* xattrs that belong to overlayfs or to OSTree's bare-user bookkeeping, not
 * to the file. */
static gboolean
xattr_is_internal (const char *name)
{
  return g_str_has_prefix (name, "trusted.overlay.") || g_str_has_prefix (name, "user.overlay.")
         || g_str_equal (name, "user.ostreemeta");
}

static int
compare_xattr_names (gconstpointer a, gconstpointer b)
{
  const char *const *sa = a;
  const char *const *sb = b;
  return strcmp (*sa, *sb);
}

GVariant *
upper_read_xattrs (const char *path, GError **error)
{
  GVariantBuilder builder;
  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a(ayay)"));

  ssize_t len = llistxattr (path, NULL, 0);
  if (len < 0 && errno != ENOTSUP)
    {
      util_fail (error, "%s: cannot list extended attributes: %s", path, g_strerror (errno));
      return NULL;
    }
  if (len <= 0)
    return g_variant_ref_sink (g_variant_builder_end (&builder));

  g_autofree char *names = g_malloc (len);
  len = llistxattr (path, names, len);
  if (len < 0)
    {
      util_fail (error, "%s: cannot list extended attributes: %s", path, g_strerror (errno));
      return NULL;
    }
  g_autoptr(GPtrArray) sorted = g_ptr_array_new ();
  for (char *n = names; n < names + len; n += strlen (n) + 1)
    if (!xattr_is_internal (n))
      g_ptr_array_add (sorted, n);
  g_ptr_array_sort (sorted, compare_xattr_names);

  for (guint i = 0; i < sorted->len; i++)
    {
      const char *name = sorted->pdata[i];
      ssize_t vlen = lgetxattr (path, name, NULL, 0);
      if (vlen < 0)
        {
          util_fail (error, "%s: cannot read extended attribute %s: %s", path, name,
                     g_strerror (errno));
          return NULL;
        }
      g_autofree guint8 *value = g_malloc (vlen + 1);
      vlen = lgetxattr (path, name, value, vlen);
      if (vlen < 0)
        {
          util_fail (error, "%s: cannot read extended attribute %s: %s", path, name,
                     g_strerror (errno));
          return NULL;
        }
      g_variant_builder_add (&builder, "(@ay@ay)", g_variant_new_bytestring (name),
                             g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, value, vlen, 1));
    }
  return g_variant_ref_sink (g_variant_builder_end (&builder));
}

static gboolean
xattr_present (const char *path, const char *name, const char *want)
{
  char value[8];
  ssize_t len = lgetxattr (path, name, value, sizeof value);
  return len == (ssize_t) strlen (want) && memcmp (value, want, len) == 0;
}

static GVariant *
dirmeta_new (const struct stat *st, GVariant *xattrs)
{
  return g_variant_ref_sink (g_variant_new ("(uuu@a(ayay))", GUINT32_TO_BE (st->st_uid),
                                            GUINT32_TO_BE (st->st_gid),
                                            GUINT32_TO_BE (S_IFDIR | (st->st_mode & 07777)),
                                            xattrs));
}

/* The same owner, mode and xattrs, whatever the order of the xattrs. */
static gboolean
dirmeta_equal (GVariant *a, GVariant *b)
{
  guint32 ua, ga, ma, ub, gb, mb;
  g_autoptr(GVariant) xa = NULL;
  g_autoptr(GVariant) xb = NULL;
  g_variant_get (a, "(uuu@a(ayay))", &ua, &ga, &ma, &xa);
  g_variant_get (b, "(uuu@a(ayay))", &ub, &gb, &mb, &xb);
  if (ua != ub || ga != gb || ma != mb || g_variant_n_children (xa) != g_variant_n_children (xb))
    return FALSE;
  gsize n = g_variant_n_children (xa);
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) child = g_variant_get_child_value (xa, i);
      gboolean found = FALSE;
      for (gsize j = 0; j < n && !found; j++)
        {
          g_autoptr(GVariant) other = g_variant_get_child_value (xb, j);
          found = g_variant_equal (child, other);
        }
      if (!found)
        return FALSE;
    }
  return TRUE;
}

/* An error about the entry at PATH of the tree, its name shown escaped (it
 * may hold any byte a command put there). */
static gboolean
fail_at (GError **error, const char *path, const char *problem)
{
  g_autofree char *shown = util_shown_path (path);
  return util_fail (error, "%s: %s", shown, problem);
}

static gboolean
write_dirmeta (Apply *apply, GVariant *dirmeta, char **out_checksum, GError **error)
{
  *out_checksum = apply->sink->metadata (apply->sink, OBJECTS_DIR_META, dirmeta,
                                         error);
  return *out_checksum != NULL;
}

static gboolean
write_content (StoreSink *sink, GFileInfo *info, GInputStream *input, GVariant *xattrs,
               char **out_checksum, GCancellable *cancellable, GError **error)
{
  *out_checksum = content_write_file (sink, info, xattrs, input, cancellable, error);
  return *out_checksum != NULL;
}

/* A regular file or symlink of the upper directory as a content object. */
static gboolean
write_leaf (Apply *apply, const char *path, const char *host_path, const struct stat *st,
            GVariant *xattrs, char **out_checksum, GError **error)
{
  g_autoptr(GFileInfo) info = g_file_info_new ();
  g_file_info_set_attribute_uint32 (info, "unix::uid", st->st_uid);
  g_file_info_set_attribute_uint32 (info, "unix::gid", st->st_gid);
  g_file_info_set_attribute_uint32 (info, "unix::mode", st->st_mode);

  g_autoptr(GInputStream) input = NULL;
  if (S_ISLNK (st->st_mode))
    {
      g_autofree char *target = g_file_read_link (host_path, error);
      if (target == NULL)
        return FALSE;
      if (!g_utf8_validate (target, -1, NULL))
        return fail_at (error, path, "a symlink whose target is not valid UTF-8, which OSTree "
                        "cannot store");
      g_file_info_set_file_type (info, G_FILE_TYPE_SYMBOLIC_LINK);
      g_file_info_set_size (info, 0);
      g_file_info_set_symlink_target (info, target);
    }
  else
    {
      int fd = open (host_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return util_fail (error, "%s: cannot open: %s", host_path, g_strerror (errno));
      input = g_unix_input_stream_new (fd, TRUE);
      g_file_info_set_file_type (info, G_FILE_TYPE_REGULAR);
      g_file_info_set_size (info, st->st_size);
    }
  return write_content (apply->sink, info, input, xattrs, out_checksum, apply->cancellable,
                        error);
}

static gboolean apply_dir (Apply *apply, OstreeMutableTree *dir, GString *path,
                           GString *host_path, guint *out_n_kept, guint *out_n_skipped,
                           GError **error);

/* Give DIR the metadata DIRMETA, unless what it has says the same: a
 * directory copied up only because something inside changed keeps its
 * dirmeta object. */
static gboolean
update_dirmeta (Apply *apply, OstreeMutableTree *dir, GVariant *dirmeta, GError **error)
{
  const char *old_meta = ostree_mutable_tree_get_metadata_checksum (dir);
  if (old_meta != NULL)
    {
      g_autoptr(GVariant) old = NULL;
      if (!ostree_repo_load_variant (apply->repo, OSTREE_OBJECT_TYPE_DIR_META, old_meta, &old,
                                     error))
        return FALSE;
      if (dirmeta_equal (old, dirmeta))
        return TRUE;
    }
  g_autofree char *meta_csum = NULL;
  if (!write_dirmeta (apply, dirmeta, &meta_csum, error))
    return FALSE;
  ostree_mutable_tree_set_metadata_checksum (dir, meta_csum);
  return TRUE;
}

/* A file or symlink of the upper directory replaces whatever DIR has at
 * NAME. */
static gboolean
apply_leaf (Apply *apply, OstreeMutableTree *dir, const char *name, const char *path,
            const char *host_path, const struct stat *st, GVariant *xattrs,
            OstreeMutableTree *lower_subdir, GError **error)
{
  g_autofree char *csum = NULL;
  if (!write_leaf (apply, path, host_path, st, xattrs, &csum, error))
    return FALSE;
  if (lower_subdir != NULL && !ostree_mutable_tree_remove (dir, name, FALSE, error))
    return FALSE;
  return ostree_mutable_tree_replace_file (dir, name, csum, error);
}

/* The overlay's redirect xattr of a directory, or NULL. */
static gboolean
read_redirect (Apply *apply, const char *host_path, char **out_redirect, GError **error)
{
  char buf[PATH_MAX];
  ssize_t len = lgetxattr (host_path, apply->redirect_xattr, buf, sizeof buf - 1);
  if (len < 0)
    {
      if (errno == ENODATA || errno == ENOTSUP)
        return TRUE;
      return util_fail (error, "%s: cannot read %s: %s", host_path, apply->redirect_xattr,
                        g_strerror (errno));
    }
  buf[len] = '\0';
  *out_redirect = g_strdup (buf);
  return TRUE;
}

/* Fill the new directory SUBDIR (at PATH) with the directory LOWER_PATH of
 * the lower tree as it was: metadata only, lazily. */
static gboolean
fill_from_pristine (Apply *apply, OstreeMutableTree *subdir, const char *lower_path,
                    const char *path, GError **error)
{
  g_autoptr(GPtrArray) parts = util_split_tree_path (lower_path, error);
  if (parts == NULL)
    return FALSE;
  g_autoptr(OstreeMutableTree) from = g_object_ref (apply->pristine);
  for (guint i = 0; i < parts->len; i++)
    {
      g_autofree char *file = NULL;
      g_autoptr(OstreeMutableTree) next = NULL;
      if (!ostree_mutable_tree_lookup (from, parts->pdata[i], &file, &next, NULL) || next == NULL)
        return util_fail (error, "%s: the overlay says it was renamed from %s, which the tree "
                          "does not have as a directory", path, lower_path);
      g_set_object (&from, next);
    }
  const char *contents = ostree_mutable_tree_get_contents_checksum (from);
  const char *meta = ostree_mutable_tree_get_metadata_checksum (from);
  if (contents == NULL || meta == NULL)
    return util_fail (error, "%s: the directory it was renamed from (%s) has no checksum",
                      path, lower_path);
  return ostree_mutable_tree_fill_empty_from_dirtree (subdir, apply->repo, contents, meta);
}

/* A directory of the upper directory: merged into the lower one, or, when
 * opaque or new, replacing whatever DIR has at NAME. */
static gboolean
apply_subdir (Apply *apply, OstreeMutableTree *dir, const char *name, GString *path,
              GString *host_path, const struct stat *st, GVariant *xattrs, gboolean exists,
              OstreeMutableTree *lower_subdir, gboolean *out_kept, gboolean *out_skipped,
              GError **error)
{
  g_autofree char *redirect = NULL;
  if (!read_redirect (apply, host_path->str, &redirect, error))
    return FALSE;
  gboolean opaque = xattr_present (host_path->str, apply->opaque_xattr, "y");
  gboolean is_new = opaque || redirect != NULL || lower_subdir == NULL;
  g_autoptr(OstreeMutableTree) subdir = NULL;
  if (is_new)
    {
      if (exists && !ostree_mutable_tree_remove (dir, name, FALSE, error))
        return FALSE;
      if (!ostree_mutable_tree_ensure_dir (dir, name, &subdir, error))
        return FALSE;
    }
  else
    subdir = g_object_ref (lower_subdir);

  /* A directory renamed with redirect_dir=on: its lower contents are those
   * of the directory it came from, as IN has them. */
  if (redirect != NULL && !opaque)
    {
      if (redirect[0] == '/')
        g_string_assign (apply->lower_path, redirect);
      else
        {
          char *slash = strrchr (apply->lower_path->str, '/');
          g_string_truncate (apply->lower_path, slash - apply->lower_path->str + 1);
          g_string_append (apply->lower_path, redirect);
        }
      if (!fill_from_pristine (apply, subdir, apply->lower_path->str, path->str, error))
        return FALSE;
    }

  g_autoptr(GVariant) dirmeta = dirmeta_new (st, xattrs);
  if (!update_dirmeta (apply, subdir, dirmeta, error))
    return FALSE;

  guint n_kept = 0, n_skipped = 0;
  if (!apply_dir (apply, subdir, path, host_path, &n_kept, &n_skipped, error))
    return FALSE;

  /* A new directory that holds nothing but mount points was made by the
   * sandbox to mount them: it is not the command's. */
  if (is_new && !exists && n_kept == 0 && n_skipped > 0)
    {
      *out_skipped = TRUE;
      return ostree_mutable_tree_remove (dir, name, FALSE, error);
    }
  *out_kept = TRUE;
  return TRUE;
}

/* The entry of the upper directory at PATH (HOST_PATH on the host), named
 * NAME in DIR.  *OUT_SKIPPED when it was left out (a mount point, or
 * scaffolding for one). */
static gboolean
apply_entry_at (Apply *apply, OstreeMutableTree *dir, const char *name, GString *path,
                GString *host_path, gboolean *out_kept, gboolean *out_skipped, GError **error)
{
  if (g_hash_table_contains (apply->skip, path->str))
    {
      *out_skipped = TRUE;
      return TRUE;
    }
  if (!g_utf8_validate (name, -1, NULL))
    return fail_at (error, path->str, "the name is not valid UTF-8, which OSTree cannot store; "
                    "rename it in the command");
  if (path->len >= PATH_MAX || host_path->len >= PATH_MAX)
    return fail_at (error, path->str, "too deep: a path longer than PATH_MAX (4096 bytes), "
                    "which no program can open");
  struct stat st;
  if (lstat (host_path->str, &st) < 0)
    return util_fail (error, "%s: %s", host_path->str, g_strerror (errno));

  if (S_ISCHR (st.st_mode) && st.st_rdev == makedev (0, 0))
    {
      *out_kept = TRUE;  /* a whiteout: a deletion */
      return ostree_mutable_tree_remove (dir, name, TRUE, error);
    }
  if (!S_ISREG (st.st_mode) && !S_ISLNK (st.st_mode) && !S_ISDIR (st.st_mode))
    return util_fail (error, "%s: the command left a %s here, which an OSTree tree cannot "
                      "hold; remove it in the command (or put it under a mount point such as "
                      "/run)", path->str, tarentry_special_name (st.st_mode));

  g_autoptr(GVariant) xattrs = upper_read_xattrs (host_path->str, error);
  if (xattrs == NULL)
    return FALSE;
  if (apply->options->meta_func != NULL
      && !apply->options->meta_func (path->str, host_path->str, &st, &xattrs,
                                     apply->options->meta_data, error))
    return FALSE;

  g_autofree char *file_csum = NULL;
  g_autoptr(OstreeMutableTree) lower_subdir = NULL;
  g_autoptr(GError) lookup_error = NULL;
  gboolean exists = ostree_mutable_tree_lookup (dir, name, &file_csum, &lower_subdir,
                                                &lookup_error);
  if (!exists && !g_error_matches (lookup_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
    {
      g_propagate_error (error, g_steal_pointer (&lookup_error));
      return FALSE;
    }

  if (!S_ISDIR (st.st_mode))
    {
      *out_kept = TRUE;
      return apply_leaf (apply, dir, name, path->str, host_path->str, &st, xattrs,
                         lower_subdir, error);
    }
  return apply_subdir (apply, dir, name, path, host_path, &st, xattrs, exists, lower_subdir,
                       out_kept, out_skipped, error);
}

static gboolean
apply_entry (Apply *apply, OstreeMutableTree *dir, const char *name, GString *path,
             GString *host_path, gboolean *out_kept, gboolean *out_skipped, GError **error)
{
  gsize path_len = path->len, host_len = host_path->len;
  g_autofree char *lower_path = g_strdup (apply->lower_path->str);
  g_string_append_printf (path, "/%s", name);
  g_string_append_printf (host_path, "/%s", name);
  g_string_append_printf (apply->lower_path, "/%s", name);
  *out_kept = *out_skipped = FALSE;
  gboolean ok = apply_entry_at (apply, dir, name, path, host_path, out_kept, out_skipped, error);
  g_string_truncate (path, path_len);
  g_string_truncate (host_path, host_len);
  g_string_assign (apply->lower_path, lower_path);
  return ok;
}

static gboolean
apply_dir (Apply *apply, OstreeMutableTree *dir, GString *path, GString *host_path,
           guint *out_n_kept, guint *out_n_skipped, GError **error)
{
  DIR *d = opendir (host_path->str);
  if (d == NULL)
    return util_fail (error, "%s: cannot read directory: %s", host_path->str, g_strerror (errno));
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  struct dirent *de;
  errno = 0;
  while ((de = readdir (d)) != NULL)
    if (!g_str_equal (de->d_name, ".") && !g_str_equal (de->d_name, ".."))
      g_ptr_array_add (names, g_strdup (de->d_name));
  int saved = errno;
  closedir (d);
  if (saved != 0)
    return util_fail (error, "%s: cannot read directory: %s", host_path->str, g_strerror (saved));
  g_ptr_array_sort (names, compare_xattr_names);

  for (guint i = 0; i < names->len; i++)
    {
      if (g_cancellable_set_error_if_cancelled (apply->cancellable, error))
        return FALSE;
      gboolean kept, skipped;
      if (!apply_entry (apply, dir, names->pdata[i], path, host_path, &kept, &skipped, error))
        return FALSE;
      *out_n_kept += kept;
      *out_n_skipped += skipped;
    }
  return TRUE;
}

gboolean
upper_apply (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root, const char *upper_path,
             const UpperOptions *options, GCancellable *cancellable, GError **error)
{
  g_autoptr(GHashTable) skip = g_hash_table_new (g_str_hash, g_str_equal);
  for (const char *const *p = options->skip_paths; p != NULL && *p != NULL; p++)
    g_hash_table_add (skip, (char *) *p);

  /* ROOT is IN, not yet modified: keep a pristine copy for redirects. */
  g_autoptr(OstreeMutableTree) pristine = ostree_mutable_tree_new_from_checksum (
      repo, ostree_mutable_tree_get_contents_checksum (root),
      ostree_mutable_tree_get_metadata_checksum (root));
  g_autoptr(GString) lower_path = g_string_new ("");
  Apply apply = {
    .repo = repo,
    .sink = sink,
    .pristine = pristine,
    .lower_path = lower_path,
    .options = options,
    .skip = skip,
    .opaque_xattr = options->userxattr ? "user.overlay.opaque" : "trusted.overlay.opaque",
    .redirect_xattr = options->userxattr ? "user.overlay.redirect" : "trusted.overlay.redirect",
    .cancellable = cancellable,
  };

  /* The root itself: the upper directory was given the lower root's owner
   * and mode, so a difference is the command's chmod or chown of "/". */
  struct stat st;
  if (lstat (upper_path, &st) < 0)
    return util_fail (error, "%s: %s", upper_path, g_strerror (errno));
  g_autoptr(GVariant) xattrs = upper_read_xattrs (upper_path, error);
  if (xattrs == NULL)
    return FALSE;
  if (options->meta_func != NULL
      && !options->meta_func ("/", upper_path, &st, &xattrs, options->meta_data, error))
    return FALSE;
  g_autoptr(GVariant) dirmeta = dirmeta_new (&st, xattrs);
  if (!update_dirmeta (&apply, root, dirmeta, error))
    return FALSE;

  g_autoptr(GString) path = g_string_new ("");
  g_autoptr(GString) host_path = g_string_new (upper_path);
  guint n_kept = 0, n_skipped = 0;
  return apply_dir (&apply, root, path, host_path, &n_kept, &n_skipped, error);
}

gboolean
upper_set_file_owner (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root, const char *path,
                      guint32 uid, guint32 gid, guint32 mode, GCancellable *cancellable,
                      GError **error)
{
  g_autoptr(GPtrArray) parts = util_split_tree_path (path, error);
  if (parts == NULL)
    return FALSE;
  if (parts->len == 0)
    return util_fail (error, "\"/\" is not a file");

  g_autoptr(OstreeMutableTree) dir = g_object_ref (root);
  for (guint i = 0; i + 1 < parts->len; i++)
    {
      g_autofree char *csum = NULL;
      g_autoptr(OstreeMutableTree) sub = NULL;
      if (!ostree_mutable_tree_lookup (dir, parts->pdata[i], &csum, &sub, error))
        return FALSE;
      if (sub == NULL)
        return util_fail (error, "%s: not a directory in the tree", path);
      g_set_object (&dir, sub);
    }
  const char *name = parts->pdata[parts->len - 1];
  g_autofree char *csum = NULL;
  g_autoptr(OstreeMutableTree) sub = NULL;
  if (!ostree_mutable_tree_lookup (dir, name, &csum, &sub, error))
    return FALSE;

  if (sub != NULL)
    {
      g_autoptr(GVariant) old = NULL;
      if (!ostree_repo_load_variant (repo, OSTREE_OBJECT_TYPE_DIR_META,
                                     ostree_mutable_tree_get_metadata_checksum (sub), &old, error))
        return FALSE;
      g_autoptr(GVariant) xattrs = g_variant_get_child_value (old, 3);
      struct stat st = { .st_uid = uid, .st_gid = gid, .st_mode = mode };
      g_autoptr(GVariant) dirmeta = dirmeta_new (&st, xattrs);
      g_autofree char *meta_csum = sink->metadata (sink, OBJECTS_DIR_META, dirmeta,
                                                   error);
      if (meta_csum == NULL)
        return FALSE;
      ostree_mutable_tree_set_metadata_checksum (sub, meta_csum);
      return TRUE;
    }

  g_autoptr(GInputStream) input = NULL;
  g_autoptr(GFileInfo) info = NULL;
  g_autoptr(GVariant) xattrs = NULL;
  if (!ostree_repo_load_file (repo, csum, &input, &info, &xattrs, cancellable, error))
    return FALSE;
  g_file_info_set_attribute_uint32 (info, "unix::uid", uid);
  g_file_info_set_attribute_uint32 (info, "unix::gid", gid);
  guint32 old_mode = g_file_info_get_attribute_uint32 (info, "unix::mode");
  g_file_info_set_attribute_uint32 (info, "unix::mode", (old_mode & S_IFMT) | (mode & 07777));
  g_autofree char *new_csum = NULL;
  if (!write_content (sink, info, input, xattrs, &new_csum, cancellable, error))
    return FALSE;
  return ostree_mutable_tree_replace_file (dir, name, new_csum, error);
}
