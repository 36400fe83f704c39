/* tarentry.c — tar entries as OSTree tree entries: kinds, owners, modes,
 * link targets, extended attributes, paths, the names of the file types
 * OSTree cannot store, and the hardlink table.  See tarentry.h. */
#include "config.h"

#include <archive.h>
#include <string.h>
#include <sys/stat.h>

#include "barestore/tarentry.h"
#include "base/util.h"

/* libarchive's file types are the Linux ones, so one table serves both
 * archive entries and stat(). */
G_STATIC_ASSERT (AE_IFREG == S_IFREG && AE_IFDIR == S_IFDIR && AE_IFLNK == S_IFLNK);
G_STATIC_ASSERT (AE_IFCHR == S_IFCHR && AE_IFBLK == S_IFBLK && AE_IFIFO == S_IFIFO
                 && AE_IFSOCK == S_IFSOCK);

void
tarentry_get (struct archive_entry *entry, TarEntry *out)
{
  out->type = archive_entry_filetype (entry);
  out->uid = archive_entry_uid (entry);
  out->gid = archive_entry_gid (entry);
  out->mode = archive_entry_perm (entry) & 07777;
  out->hardlink = archive_entry_hardlink (entry);
  out->symlink = NULL;
  if (out->hardlink != NULL)
    out->kind = TARENTRY_HARDLINK;
  else if (out->type == AE_IFDIR)
    out->kind = TARENTRY_DIR;
  else if (out->type == AE_IFREG)
    out->kind = TARENTRY_REGULAR;
  else if (out->type == AE_IFLNK)
    {
      out->kind = TARENTRY_SYMLINK;
      out->symlink = archive_entry_symlink (entry);
    }
  else
    out->kind = TARENTRY_SPECIAL;
}

const char *
tarentry_special_name (guint32 mode)
{
  static const struct {
    guint32 type;
    const char *name;
  } special_files[] = {
    { S_IFCHR, "character device" },
    { S_IFBLK, "block device" },
    { S_IFIFO, "fifo" },
    { S_IFSOCK, "socket" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (special_files); i++)
    if ((mode & S_IFMT) == special_files[i].type)
      return special_files[i].name;
  return "unknown file type";
}

typedef struct {
  const char *name;
  const void *value;
  size_t size;
} Xattr;

static int
compare_xattrs (gconstpointer a, gconstpointer b)
{
  return strcmp (((const Xattr *) a)->name, ((const Xattr *) b)->name);
}

GVariant *
tarentry_xattrs (struct archive_entry *entry)
{
  if (archive_entry_xattr_reset (entry) == 0)
    return NULL;
  g_autoptr(GArray) xattrs = g_array_new (FALSE, FALSE, sizeof (Xattr));
  Xattr x;
  while (archive_entry_xattr_next (entry, &x.name, &x.value, &x.size) == ARCHIVE_OK)
    g_array_append_val (xattrs, x);
  /* Stable: of two equal names, the one libarchive lists first (it lists
   * the last added first) stays in front and is kept. */
  g_array_sort (xattrs, compare_xattrs);

  GVariantBuilder builder;
  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a(ayay)"));
  for (guint i = 0; i < xattrs->len; i++)
    {
      const Xattr *xi = &g_array_index (xattrs, Xattr, i);
      if (i > 0 && g_str_equal (xi->name, g_array_index (xattrs, Xattr, i - 1).name))
        continue;
      g_variant_builder_add (&builder, "(@ay@ay)", g_variant_new_bytestring (xi->name),
                             g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, xi->value, xi->size, 1));
    }
  return g_variant_ref_sink (g_variant_builder_end (&builder));
}

void
tarentry_set_xattrs (struct archive_entry *entry, GVariant *xattrs)
{
  if (xattrs == NULL)
    return;
  for (gsize i = 0; i < g_variant_n_children (xattrs); i++)
    {
      const char *name;
      g_autoptr(GVariant) value = NULL;
      g_variant_get_child (xattrs, i, "(^&ay@ay)", &name, &value);
      gsize size;
      const void *data = g_variant_get_fixed_array (value, &size, 1);
      archive_entry_xattr_add_entry (entry, name, data, size);
    }
}

GPtrArray *
tarentry_components (const char *pathname, const char **out_problem)
{
  if (pathname[0] == '/')
    {
      *out_problem = "has an absolute path";
      return NULL;
    }
  *out_problem = util_tree_path_problem (pathname);
  if (*out_problem != NULL)
    return NULL;
  /* No "..", so splitting cannot fail. */
  return util_split_tree_path (pathname, NULL);
}

/* ------------------------------------------------------------------------ */

struct TarEntryLinks {
  GHashTable *files;     /* tree path -> content checksum */
  GHashTable *skipped;   /* tree paths */
};

TarEntryLinks *
tarentry_links_new (void)
{
  TarEntryLinks *links = g_new0 (TarEntryLinks, 1);
  links->files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  links->skipped = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return links;
}

void
tarentry_links_free (TarEntryLinks *links)
{
  if (links == NULL)
    return;
  g_hash_table_unref (links->files);
  g_hash_table_unref (links->skipped);
  g_free (links);
}

void
tarentry_links_add_file (TarEntryLinks *links, const char *path, const char *checksum)
{
  g_hash_table_insert (links->files, g_strdup (path), g_strdup (checksum));
}

void
tarentry_links_add_skipped (TarEntryLinks *links, const char *path)
{
  g_hash_table_add (links->skipped, g_strdup (path));
}

TarEntryLinkTarget
tarentry_links_lookup (TarEntryLinks *links, const char *path, const char **out_checksum)
{
  *out_checksum = NULL;
  if (g_hash_table_contains (links->skipped, path))
    return TARENTRY_LINK_SKIPPED;
  *out_checksum = g_hash_table_lookup (links->files, path);
  return *out_checksum != NULL ? TARENTRY_LINK_FILE : TARENTRY_LINK_MISSING;
}
