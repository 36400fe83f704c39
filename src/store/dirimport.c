/* dirimport.c — a directory into a tree; see dirimport.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixinputstream.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/util.h"
#include "store/content.h"
#include "store/dirimport.h"
#include "store/repo.h"
#include "barestore/tarentry.h"

/* The extended attributes of PATH (not followed), sorted by name as
 * libostree sorts them, so the same files give the same checksums. */
static GVariant *
read_xattrs (const char *path, GError **error)
{
  GVariantBuilder builder;
  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a(ayay)"));
  ssize_t size = llistxattr (path, NULL, 0);
  if (size < 0 && (errno == ENOTSUP || errno == ENODATA))
    size = 0;
  if (size < 0)
    {
      util_fail (error, "%s: cannot list extended attributes: %s", path, g_strerror (errno));
      return NULL;
    }
  g_autofree char *names = g_malloc (size + 1);
  size = size > 0 ? llistxattr (path, names, size) : 0;
  if (size < 0)
    {
      util_fail (error, "%s: cannot list extended attributes: %s", path, g_strerror (errno));
      return NULL;
    }

  g_autoptr(GPtrArray) sorted = g_ptr_array_new ();
  for (char *name = names; name < names + size; name += strlen (name) + 1)
    g_ptr_array_add (sorted, name);
  g_ptr_array_sort (sorted, util_compare_strings);
  for (guint i = 0; i < sorted->len; i++)
    {
      const char *name = sorted->pdata[i];
      ssize_t len = lgetxattr (path, name, NULL, 0);
      g_autofree char *value = len >= 0 ? g_malloc (len + 1) : NULL;
      if (len > 0)
        len = lgetxattr (path, name, value, len);
      if (len < 0)
        {
          g_variant_builder_clear (&builder);
          util_fail (error, "%s: cannot read extended attribute %s: %s", path, name,
                     g_strerror (errno));
          return NULL;
        }
      g_variant_builder_add (&builder, "(@ay@ay)", g_variant_new_bytestring (name),
                             g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, value, len, 1));
    }
  return g_variant_ref_sink (g_variant_builder_end (&builder));
}

static GFileInfo *
file_info_from_stat (const struct stat *st)
{
  GFileInfo *info = g_file_info_new ();
  g_file_info_set_attribute_uint32 (info, "unix::uid", st->st_uid);
  g_file_info_set_attribute_uint32 (info, "unix::gid", st->st_gid);
  g_file_info_set_attribute_uint32 (info, "unix::mode", st->st_mode);
  g_file_info_set_file_type (info, S_ISDIR (st->st_mode) ? G_FILE_TYPE_DIRECTORY
                                   : S_ISLNK (st->st_mode) ? G_FILE_TYPE_SYMBOLIC_LINK
                                   : G_FILE_TYPE_REGULAR);
  g_file_info_set_size (info, S_ISREG (st->st_mode) ? st->st_size : 0);
  return info;
}

typedef struct {
  StoreSink *sink;         /* where the objects go */
  GString *path;           /* on disk */
  gsize root_len;          /* where the path inside the tree starts */
  GPtrArray *skipped;      /* "PATH (fifo)" */
} DirImport;

static gboolean
import_file (DirImport *im, const struct stat *st, OstreeMutableTree *parent, const char *name,
             GCancellable *cancellable, GError **error)
{
  const char *path = im->path->str;
  g_autoptr(GFileInfo) info = file_info_from_stat (st);
  g_autoptr(GInputStream) data = NULL;
  if (S_ISLNK (st->st_mode))
    {
      g_autofree char *target = g_file_read_link (path, error);
      if (target == NULL)
        return FALSE;
      if (!g_utf8_validate (target, -1, NULL))
        {
          g_autofree char *shown = util_shown_path (path);
          return util_fail (error, "%s: a symlink whose target is not valid UTF-8, which OSTree "
                            "cannot store", shown);
        }
      g_file_info_set_attribute_byte_string (info, "standard::symlink-target", target);
    }
  else
    {
      int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return util_fail (error, "%s: cannot read: %s", path, g_strerror (errno));
      data = g_unix_input_stream_new (fd, TRUE);
    }
  g_autoptr(GVariant) xattrs = read_xattrs (path, error);
  if (xattrs == NULL)
    return FALSE;

  g_autofree char *checksum = content_write_file (im->sink, info, xattrs, data, cancellable, error);
  if (checksum == NULL)
    {
      g_prefix_error (error, "%s: ", path);
      return FALSE;
    }
  return ostree_mutable_tree_replace_file (parent, name, checksum, error);
}

/* The directory at im->path, its metadata and everything below it.
 * Device nodes, fifos and sockets are left out (OSTree cannot store them)
 * and listed in im->skipped. */
static gboolean
import_dir (DirImport *im, const struct stat *st, OstreeMutableTree *mtree,
            GCancellable *cancellable, GError **error)
{
  g_autoptr(GFileInfo) info = file_info_from_stat (st);
  g_autoptr(GVariant) xattrs = read_xattrs (im->path->str, error);
  if (xattrs == NULL)
    return FALSE;
  /* ostree_create_directory_metadata() gives a full (not floating) reference. */
  g_autoptr(GVariant) dirmeta = ostree_create_directory_metadata (info, xattrs);
  g_autofree char *checksum = im->sink->metadata (im->sink, OBJECTS_DIR_META, dirmeta, error);
  if (checksum == NULL)
    return FALSE;
  ostree_mutable_tree_set_metadata_checksum (mtree, checksum);

  g_autoptr(GError) local_error = NULL;
  g_autoptr(GDir) dir = g_dir_open (im->path->str, 0, &local_error);
  if (dir == NULL)
    return util_fail (error, "%s", local_error->message);
  gsize len = im->path->len;
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_string_append_printf (im->path, "/%s", name);
      struct stat child;
      gboolean ok;
      if (!g_utf8_validate (name, -1, NULL))
        {
          g_autofree char *shown = util_shown_path (im->path->str);
          ok = util_fail (error, "%s: the name is not valid UTF-8, which OSTree cannot store",
                          shown);
        }
      else if (lstat (im->path->str, &child) < 0)
        ok = util_fail (error, "%s: %s", im->path->str, g_strerror (errno));
      else if (S_ISDIR (child.st_mode))
        {
          g_autoptr(OstreeMutableTree) subdir = NULL;
          ok = ostree_mutable_tree_ensure_dir (mtree, name, &subdir, error)
               && import_dir (im, &child, subdir, cancellable, error);
        }
      else if (S_ISREG (child.st_mode) || S_ISLNK (child.st_mode))
        ok = import_file (im, &child, mtree, name, cancellable, error);
      else
        {
          g_ptr_array_add (im->skipped, g_strdup_printf ("%s (%s)", im->path->str + im->root_len,
                                                         tarentry_special_name (child.st_mode)));
          ok = TRUE;
        }
      g_string_truncate (im->path, len);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

gboolean
dirimport_to_mtree (StoreSink *sink, const char *dir, OstreeMutableTree *mtree,
                    GPtrArray *skipped, GCancellable *cancellable, GError **error)
{
  g_autoptr(GString) path = g_string_new (dir);
  while (path->len > 1 && path->str[path->len - 1] == '/')
    g_string_truncate (path, path->len - 1);
  DirImport im = { sink, path, path->len, skipped };
  struct stat st;
  if (stat (dir, &st) < 0)
    return util_fail (error, "%s: %s", dir, g_strerror (errno));
  return import_dir (&im, &st, mtree, cancellable, error);
}
