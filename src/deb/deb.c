/* deb.c — one .deb into one OSTree tree: data.tar's entries as the tree,
 * debmeta's files added, then the commit.  The container and its
 * decompression are debfile.c's, the dpkg metadata debmeta.c's, what a tar
 * entry is store/tarentry's.  File content goes straight from the
 * decompressor into content objects, the tree is built in memory and
 * written as dirtree objects: all through a StoreSink, so this module needs
 * GLib and libarchive only. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "deb/deb.h"
#include "deb/debfile.h"
#include "deb/debmeta.h"
#include "barestore/linkgroups.h"
#include "barestore/objects.h"
#include "barestore/tarentry.h"
#include "base/util.h"

/* ------------------------------------------------------------------------ */
/* The tree, built in memory and written as dirtree objects at the end. */

typedef struct DebDir DebDir;
struct DebDir {
  char *meta;         /* dirmeta checksum */
  GHashTable *files;  /* name -> content checksum */
  GHashTable *dirs;   /* name -> DebDir */
};

static void
deb_dir_free (DebDir *dir)
{
  if (dir == NULL)
    return;
  g_free (dir->meta);
  g_hash_table_unref (dir->files);
  g_hash_table_unref (dir->dirs);
  g_free (dir);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DebDir, deb_dir_free)

static DebDir *
deb_dir_new (const char *meta)
{
  DebDir *dir = g_new0 (DebDir, 1);
  dir->meta = g_strdup (meta);
  dir->files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  dir->dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                     (GDestroyNotify) deb_dir_free);
  return dir;
}

/* Write the dirtree objects of DIR and everything under it; returns DIR's. */
static char *
deb_dir_write (StoreSink *sink, DebDir *dir, GError **error)
{
  g_autoptr(GHashTable) contents = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  g_autoptr(GHashTable) meta = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter iter;
  gpointer name, child;
  g_hash_table_iter_init (&iter, dir->dirs);
  while (g_hash_table_iter_next (&iter, &name, &child))
    {
      char *checksum = deb_dir_write (sink, child, error);
      if (checksum == NULL)
        return NULL;
      g_hash_table_insert (contents, name, checksum);
      g_hash_table_insert (meta, name, ((DebDir *) child)->meta);
    }
  return sink->metadata (sink, OBJECTS_DIR_TREE, objects_dirtree_new (dir->files, contents, meta),
                         error);
}

/* ------------------------------------------------------------------------ */
/* The unpacking state. */

/* Files larger than this are not held in memory but streamed. */
#define DEB_MAX_INLINE (64 * 1024 * 1024)

typedef struct {
  StoreSink *sink;
  const char *name;                 /* the .deb, for messages */
  const DebUnpackOptions *opts;
  DebDir *root;
  const char *member;               /* the ar member being read, for messages */
  guint8 *file_buf;                 /* a whole regular file, grown as needed */
  gsize file_buf_size;

  char *default_dirmeta;            /* 0755 root:root */
  GHashTable *dirmeta_cache;        /* "uid:gid:mode" -> checksum */
  GHashTable *headers;              /* for sink->regular() */

  DebMeta *meta;                    /* control.tar, conffiles, the .list file */
  TarEntryLinks *links;             /* final paths of files and of entries not stored */
  GHashTable *symlinks;             /* final paths of symlinks */
  GHashTable *explicit_dirs;        /* final paths whose dirmeta came from an entry */
  LinkGroups *hardlinks;            /* final paths data.tar links together */
  GPtrArray *skipped;               /* shipped path, kind, ... */
} DebUnpack;

static void
deb_unpack_clear (DebUnpack *u)
{
  g_free (u->default_dirmeta);
  g_clear_pointer (&u->root, deb_dir_free);
  g_free (u->file_buf);
  g_clear_pointer (&u->dirmeta_cache, g_hash_table_unref);
  g_clear_pointer (&u->headers, g_hash_table_unref);
  g_clear_pointer (&u->meta, debmeta_free);
  g_clear_pointer (&u->links, tarentry_links_free);
  g_clear_pointer (&u->symlinks, g_hash_table_unref);
  g_clear_pointer (&u->explicit_dirs, g_hash_table_unref);
  g_clear_pointer (&u->hardlinks, linkgroups_free);
  g_clear_pointer (&u->skipped, g_ptr_array_unref);
}

static gboolean
deb_fail (DebUnpack *u, GError **error, const char *format, ...) G_GNUC_PRINTF (3, 4);

/* "FILE: MESSAGE" */
static gboolean
deb_fail (DebUnpack *u, GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  return util_fail (error, "%s: %s", u->name, message);
}

/* ------------------------------------------------------------------------ */
/* Objects. */

static char *
write_dirmeta (DebUnpack *u, guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs,
               GError **error)
{
  g_autofree char *key = NULL;
  if (xattrs == NULL)
    {
      key = g_strdup_printf ("%u:%u:%o", uid, gid, mode);
      const char *cached = g_hash_table_lookup (u->dirmeta_cache, key);
      if (cached != NULL)
        return g_strdup (cached);
    }

  char *checksum = u->sink->metadata (u->sink, OBJECTS_DIR_META,
                                      objects_dirmeta_new (uid, gid, mode, xattrs), error);
  if (checksum != NULL && key != NULL)
    g_hash_table_insert (u->dirmeta_cache, g_steal_pointer (&key), g_strdup (checksum));
  return checksum;
}

/* ------------------------------------------------------------------------ */
/* Paths. */

/* An archive member's path as components: "./usr/bin/x" -> usr, bin, x.
 * Absolute paths and ".." are refused: a .deb must not write outside its
 * tree (dpkg would take "/etc/x" as "etc/x", but dpkg-deb never builds such
 * a name); so is every name util_tree_path_problem() refuses, a newline
 * first, as dpkg does. */
static GPtrArray *
entry_components (DebUnpack *u, const char *what, const char *pathname, GError **error)
{
  const char *problem;
  GPtrArray *components = tarentry_components (pathname, &problem);
  if (components == NULL)
    {
      g_autofree char *shown = util_shown_path (pathname);
      deb_fail (u, error, "%s entry \"%s\" %s", what, shown, problem);
    }
  return components;
}

static gboolean
is_usr_merged_dir (const char *name)
{
  static const char *const dirs[] = { "bin", "sbin", "lib", "lib32", "lib64", "libx32", NULL };
  return g_strv_contains (dirs, name);
}

/* Is the entry one of the top-level links of a merged /usr ("./bin", a
 * symlink)?  From Debian trixie on (DEP 17) base-files ships them itself. */
static gboolean
is_merged_usr_link (GPtrArray *shipped, mode_t type)
{
  return type == AE_IFLNK && shipped->len == 1 && is_usr_merged_dir (shipped->pdata[0]);
}

/* The path in the tree: with merged /usr, bin/x becomes usr/bin/x; the
 * link /bin itself stays where it is. */
static GPtrArray *
final_components (DebUnpack *u, GPtrArray *shipped, mode_t type)
{
  GPtrArray *final = g_ptr_array_new_with_free_func (g_free);
  if (u->opts->merged_usr && shipped->len > 0 && is_usr_merged_dir (shipped->pdata[0])
      && !is_merged_usr_link (shipped, type))
    g_ptr_array_add (final, g_strdup ("usr"));
  for (guint i = 0; i < shipped->len; i++)
    g_ptr_array_add (final, g_strdup (shipped->pdata[i]));
  return final;
}

/* The directory named by the first N components of FINAL, made as needed:
 * new directories get 0755 root:root until an entry says otherwise.  A file
 * or symlink of the package in the way is an error.  Returns a borrowed
 * subtree of u->root. */
static DebDir *
ensure_parents (DebUnpack *u, GPtrArray *final, guint n, const char *pathname, GError **error)
{
  DebDir *dir = u->root;
  for (guint i = 0; i < n; i++)
    {
      const char *name = final->pdata[i];
      DebDir *sub = g_hash_table_lookup (dir->dirs, name);
      if (sub != NULL)
        {
          dir = sub;
          continue;
        }
      if (g_hash_table_contains (dir->files, name))
        {
          g_autofree char *where = util_join_tree_path (final, i + 1);
          if (g_hash_table_contains (u->symlinks, where))
            return deb_fail (u, error, "entry \"%s\" would land under the symlink \"%s\" of the "
                             "same package", pathname, where), NULL;
          return deb_fail (u, error, "entry \"%s\" would land under \"%s\", which the package "
                           "ships as a file", pathname, where), NULL;
        }
      DebDir *created = deb_dir_new (u->default_dirmeta);
      g_hash_table_insert (dir->dirs, g_strdup (name), created);
      dir = created;  /* owned by its parent */
    }
  return dir;
}

/* Put a file object at FINAL in the tree; the same path twice is fine only
 * with the same content (e.g. /bin/x and /usr/bin/x under merged /usr). */
static gboolean
place_file (DebUnpack *u, GPtrArray *final, const char *pathname, const char *checksum,
            GError **error)
{
  DebDir *dir = ensure_parents (u, final, final->len - 1, pathname, error);
  if (dir == NULL)
    return FALSE;
  const char *name = final->pdata[final->len - 1];
  g_autofree char *path = util_join_tree_path (final, final->len);
  if (g_hash_table_contains (dir->dirs, name))
    return deb_fail (u, error, "entry \"%s\" is a file, but the package also ships \"%s\" as a "
                     "directory", pathname, path);
  const char *existing = g_hash_table_lookup (dir->files, name);
  if (existing != NULL && !g_str_equal (existing, checksum))
    return deb_fail (u, error, "entry \"%s\" lands on \"%s\", which an earlier entry of the "
                     "package already holds with other content", pathname, path);
  g_hash_table_insert (dir->files, g_strdup (name), g_strdup (checksum));
  tarentry_links_add_file (u->links, path, checksum);
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* data.tar entries. */

/* Leave out the entry at SHIPPED (FINAL in the tree), recorded as KIND. */
static void
skip_entry (DebUnpack *u, GPtrArray *shipped, GPtrArray *final, const char *kind)
{
  g_autofree char *path = util_join_tree_path (final, final->len);
  tarentry_links_add_skipped (u->links, path);
  g_ptr_array_add (u->skipped, util_join_tree_path (shipped, shipped->len));
  g_ptr_array_add (u->skipped, g_strdup (kind));
}

static gboolean
unpack_directory (DebUnpack *u, struct archive_entry *entry, const TarEntry *te,
                  GPtrArray *final, const char *pathname, GError **error)
{
  DebDir *dir = u->root;
  if (final->len > 0)
    {
      DebDir *parent = ensure_parents (u, final, final->len - 1, pathname, error);
      if (parent == NULL)
        return FALSE;
      const char *name = final->pdata[final->len - 1];
      if (g_hash_table_contains (parent->files, name))
        {
          g_autofree char *path = util_join_tree_path (final, final->len);
          return deb_fail (u, error, "entry \"%s\" is a directory, but the package also ships "
                           "\"%s\" as a file", pathname, path);
        }
      dir = ensure_parents (u, final, final->len, pathname, error);
      if (dir == NULL)
        return FALSE;
    }

  /* The first entry that names a directory decides its metadata, as with
   * dpkg, which leaves an existing directory alone. */
  g_autofree char *path = util_join_tree_path (final, final->len);
  if (g_hash_table_contains (u->explicit_dirs, path))
    return TRUE;
  g_autoptr(GVariant) xattrs = tarentry_xattrs (entry);
  g_autofree char *meta = write_dirmeta (u, te->uid, te->gid, te->mode, xattrs, error);
  if (meta == NULL)
    return FALSE;
  g_free (dir->meta);
  dir->meta = g_steal_pointer (&meta);
  g_hash_table_add (u->explicit_dirs, g_steal_pointer (&path));
  return TRUE;
}

static gboolean
unpack_hardlink (DebUnpack *u, const TarEntry *te, GPtrArray *shipped, GPtrArray *final,
                 const char *pathname, GError **error)
{
  const char *target = te->hardlink;
  g_autoptr(GPtrArray) target_shipped = entry_components (u, "hard link target of", target, error);
  if (target_shipped == NULL)
    return FALSE;
  g_autoptr(GPtrArray) target_final = final_components (u, target_shipped, AE_IFREG);
  g_autofree char *target_path = util_join_tree_path (target_final, target_final->len);

  const char *checksum;
  TarEntryLinkTarget found = tarentry_links_lookup (u->links, target_path, &checksum);
  if (found == TARENTRY_LINK_SKIPPED)
    {
      skip_entry (u, shipped, final, "hard link to a skipped entry");
      return TRUE;
    }
  if (found == TARENTRY_LINK_MISSING)
    return deb_fail (u, error, "hard link \"%s\" points to \"%s\", which is not an earlier file "
                     "of the package", pathname, target);

  /* A conffile that is a hard link has its target's content. */
  g_autofree char *shipped_path = util_join_tree_path (shipped, shipped->len);
  g_autofree char *target_shipped_path = util_join_tree_path (target_shipped, target_shipped->len);
  if (!debmeta_conffile_hardlink (u->meta, shipped_path, target_shipped_path, target, error))
    return FALSE;
  if (debmeta_wants_md5sums (u->meta))
    debmeta_md5sum_hardlink (u->meta, shipped_path, target_shipped_path);

  g_autofree char *copy = g_strdup (checksum);
  if (!place_file (u, final, pathname, copy, error))
    return FALSE;
  g_autofree char *path = util_join_tree_path (final, final->len);
  linkgroups_link (u->hardlinks, target_path, path);
  return TRUE;
}

/* Read the current entry's SIZE bytes into u->file_buf. */
static gboolean
read_whole_entry (DebUnpack *u, struct archive *a, gsize size, GChecksum *md5, GError **error)
{
  /* One byte more than SIZE, so reading past the end is noticed. */
  if (size + 1 > u->file_buf_size)
    {
      g_free (u->file_buf);
      u->file_buf_size = MAX (size + 1, 2 * u->file_buf_size);
      u->file_buf = g_malloc (u->file_buf_size);
    }
  gsize done = 0;
  for (;;)
    {
      la_ssize_t n = archive_read_data (a, u->file_buf + done, MAX (size - done, 1));
      if (n < 0)
        return util_fail (error, "%s", archive_error_string (a));
      if (n == 0)
        break;
      done += n;
      if (done > size)
        return util_fail (error, "longer than its header says (%zu bytes)", size);
    }
  if (done != size)
    return util_fail (error, "truncated (%zu of %zu bytes)", done, size);
  if (md5 != NULL)
    g_checksum_update (md5, u->file_buf, size);
  return TRUE;
}

/* The data of the current entry, for sink->regular_stream(). */
typedef struct {
  struct archive *archive;
  GChecksum *md5;  /* may be NULL */
} EntryReader;

static gssize
entry_read (gpointer user_data, guint8 *buf, gsize len, GError **error)
{
  EntryReader *r = user_data;
  la_ssize_t n = archive_read_data (r->archive, buf, len);
  if (n < 0)
    return util_fail (error, "%s", archive_error_string (r->archive)), -1;
  if (r->md5 != NULL && n > 0)
    g_checksum_update (r->md5, buf, n);
  return n;
}

/* A regular file's content object: read whole when it is up to
 * DEB_MAX_INLINE bytes (then the sink writes nothing for content the
 * repository already has), else streamed. */
static gboolean
write_regular (DebUnpack *u, struct archive *a, struct archive_entry *entry, const TarEntry *te,
               GChecksum *md5, char **out_checksum, GError **error)
{
  guint32 uid = te->uid, gid = te->gid, mode = te->mode;
  gint64 size = archive_entry_size (entry);
  g_autoptr(GVariant) xattrs = tarentry_xattrs (entry);
  if (size < 0)
    return util_fail (error, "a negative size");

  if (size <= DEB_MAX_INLINE)
    {
      if (!read_whole_entry (u, a, size, md5, error))
        return FALSE;
      *out_checksum = u->sink->regular (u->sink, u->headers, uid, gid, mode, xattrs, u->file_buf,
                                        size, error);
      return *out_checksum != NULL;
    }
  EntryReader reader = { a, md5 };
  *out_checksum = u->sink->regular_stream (u->sink, uid, gid, mode, xattrs, size, entry_read,
                                           &reader, error);
  return *out_checksum != NULL;
}

static gboolean
unpack_regular (DebUnpack *u, struct archive *a, struct archive_entry *entry, const TarEntry *te,
                GPtrArray *shipped, GPtrArray *final, const char *pathname, GError **error)
{
  g_autofree char *shipped_path = util_join_tree_path (shipped, shipped->len);
  gboolean conffile = debmeta_is_conffile (u->meta, shipped_path);
  gboolean want_md5 = conffile || debmeta_wants_md5sums (u->meta);
  g_autoptr(GChecksum) md5 = want_md5 ? g_checksum_new (G_CHECKSUM_MD5) : NULL;

  g_autofree char *checksum = NULL;
  g_autoptr(GError) local_error = NULL;
  if (!write_regular (u, a, entry, te, md5, &checksum, &local_error))
    return deb_fail (u, error, "%s: \"%s\": %s", u->member, pathname, local_error->message);

  if (conffile)
    debmeta_conffile_set_md5 (u->meta, shipped_path, g_checksum_get_string (md5));
  if (debmeta_wants_md5sums (u->meta))
    debmeta_md5sum_add (u->meta, shipped_path, g_checksum_get_string (md5));
  return place_file (u, final, pathname, checksum, error);
}

static gboolean
unpack_symlink (DebUnpack *u, struct archive_entry *entry, const TarEntry *te, GPtrArray *final,
                const char *pathname, GError **error)
{
  const char *target = te->symlink;
  if (target == NULL || *target == '\0')
    return deb_fail (u, error, "symlink \"%s\" has no target", pathname);
  /* OSTree keeps the target as a string, and symlink(2) takes less than
   * PATH_MAX bytes. */
  if (!g_utf8_validate (target, -1, NULL) || strlen (target) >= PATH_MAX)
    {
      g_autofree char *shown = util_shown_path (target);
      return deb_fail (u, error, "symlink \"%s\" has a target that is not valid UTF-8 or longer "
                       "than 4095 bytes (\"%s\")", pathname, shown);
    }
  /* A merged /usr's top-level link must point where the rewrite puts the
   * files it would hold. */
  if (u->opts->merged_usr && final->len == 1 && is_usr_merged_dir (final->pdata[0]))
    {
      g_autofree char *expected = g_strconcat ("usr/", (char *) final->pdata[0], NULL);
      const char *t = target[0] == '/' ? target + 1 : target;
      if (!g_str_equal (t, expected))
        return deb_fail (u, error, "symlink \"%s\" points to \"%s\"; with merged /usr it must "
                         "point to \"%s\"", pathname, target, expected);
    }
  g_autoptr(GVariant) xattrs = tarentry_xattrs (entry);
  g_autofree char *checksum = NULL;
  checksum = u->sink->symlink (u->sink, te->uid, te->gid, target, xattrs, error);
  if (checksum == NULL)
    return FALSE;
  if (!place_file (u, final, pathname, checksum, error))
    return FALSE;
  g_hash_table_add (u->symlinks, util_join_tree_path (final, final->len));
  return TRUE;
}

static gboolean
unpack_data_entry (DebUnpack *u, struct archive *a, struct archive_entry *entry, GError **error)
{
  const char *pathname = archive_entry_pathname (entry);
  if (pathname == NULL || *pathname == '\0')
    return deb_fail (u, error, "%s is corrupt: an entry without a name", u->member);
  g_autoptr(GPtrArray) shipped = entry_components (u, u->member, pathname, error);
  if (shipped == NULL)
    return FALSE;
  TarEntry te;
  tarentry_get (entry, &te);
  g_autoptr(GPtrArray) final = final_components (u, shipped, te.type);

  debmeta_list_append (u->meta, shipped);

  if (final->len == 0 && te.type != AE_IFDIR)
    return deb_fail (u, error, "%s entry \"%s\" names the root as something other than a "
                     "directory", u->member, pathname);

  switch (te.kind)
    {
    case TARENTRY_HARDLINK:
      return unpack_hardlink (u, &te, shipped, final, pathname, error);
    case TARENTRY_DIR:
      return unpack_directory (u, entry, &te, final, pathname, error);
    case TARENTRY_REGULAR:
      return unpack_regular (u, a, entry, &te, shipped, final, pathname, error);
    case TARENTRY_SYMLINK:
      return unpack_symlink (u, entry, &te, final, pathname, error);
    case TARENTRY_SPECIAL:
    default:
      /* OSTree stores no device nodes, fifos or sockets (the sandbox
       * mounts /dev); the caller reports what was skipped. */
      skip_entry (u, shipped, final, tarentry_special_name (te.type));
      return TRUE;
    }
}

/* ------------------------------------------------------------------------ */
/* The reader of debfile.c: control.tar to debmeta, data.tar to the tree. */

static gboolean
control_entry (gpointer user_data, const char *member, struct archive *a,
               struct archive_entry *entry, GError **error)
{
  DebUnpack *u = user_data;
  return debmeta_control_entry (u->meta, member, a, entry, error);
}

static gboolean
control_done (gpointer user_data, GError **error)
{
  DebUnpack *u = user_data;
  return debmeta_load (u->meta, error);
}

static gboolean
data_entry (gpointer user_data, const char *member, struct archive *a,
            struct archive_entry *entry, GError **error)
{
  DebUnpack *u = user_data;
  u->member = member;
  return unpack_data_entry (u, a, entry, error);
}

/* ------------------------------------------------------------------------ */
/* The dpkg metadata written into the tree. */

/* A file of debmeta's in the tree (a DebMetaFileFunc). */
static gboolean
add_metadata_file (gpointer user_data, const char *path, GBytes *data, guint32 mode,
                   GError **error)
{
  DebUnpack *u = user_data;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GPtrArray) components = util_split_tree_path (path, &local_error);
  if (components == NULL)
    return deb_fail (u, error, "%s", local_error->message);
  DebDir *dir = ensure_parents (u, components, components->len - 1, path, error);
  if (dir == NULL)
    return FALSE;
  const char *name = components->pdata[components->len - 1];
  if (g_hash_table_contains (dir->files, name) || g_hash_table_contains (dir->dirs, name))
    return deb_fail (u, error, "data.tar ships \"/%s\", where the package's dpkg metadata goes", path);

  gsize size;
  const guint8 *bytes = g_bytes_get_data (data, &size);
  char *checksum = u->sink->regular (u->sink, u->headers, 0, 0, mode, NULL, bytes, size, error);
  if (checksum == NULL)
    return FALSE;
  g_hash_table_insert (dir->files, g_strdup (name), checksum);
  return TRUE;
}

/* ------------------------------------------------------------------------ */

void
deb_info_free (DebInfo *info)
{
  if (info == NULL)
    return;
  g_free (info->package);
  g_free (info->version);
  g_free (info->architecture);
  g_free (info->multi_arch);
  g_free (info->sha256);
  g_clear_pointer (&info->hardlinks, g_variant_unref);
  if (info->skipped)
    g_ptr_array_unref (info->skipped);
  g_free (info);
}

/* Read the .deb into U's tree; its DebInfo, or NULL. */
static DebInfo *
unpack (DebUnpack *u, const char *path, guint64 size, GError **error)
{
  u->default_dirmeta = write_dirmeta (u, 0, 0, 0755, NULL, error);
  if (u->default_dirmeta == NULL)
    return NULL;
  u->root = deb_dir_new (u->default_dirmeta);
  static const DebFileReader reader = { control_entry, control_done, data_entry };
  if (!debfile_read (path, u->name, &reader, u, error))
    return NULL;
  g_autoptr(DebInfo) info = g_new0 (DebInfo, 1);
  info->package = debmeta_field_word (u->meta, "Package");
  info->version = debmeta_field_word (u->meta, "Version");
  info->architecture = debmeta_field_word (u->meta, "Architecture");
  info->multi_arch = debmeta_field_word (u->meta, "Multi-Arch");
  if (info->multi_arch == NULL)
    info->multi_arch = g_strdup ("no");
  info->sha256 = g_strdup (u->opts->sha256);
  info->size = size;
  info->merged_usr = u->opts->merged_usr;
  if (!debmeta_foreach_file (u->meta, info->package, info->architecture, info->multi_arch,
                             add_metadata_file, u, error))
    return NULL;
  info->skipped = g_steal_pointer (&u->skipped);
  info->hardlinks = linkgroups_to_variant (u->hardlinks);
  if (info->hardlinks != NULL)
    g_variant_ref_sink (info->hardlinks);
  return g_steal_pointer (&info);
}

DebInfo *
deb_unpack (StoreSink *sink, const char *path, const DebUnpackOptions *opts, guint64 timestamp,
            char **out_commit, GError **error)
{
  struct stat st;
  if (stat (path, &st) < 0)
    {
      util_fail (error, "%s: %s", opts->display_name ? opts->display_name : path, g_strerror (errno));
      return NULL;
    }

  const char *name = opts->display_name ? opts->display_name : path;
  DebUnpack u = {
    .sink = sink,
    .name = name,
    .opts = opts,
    .meta = debmeta_new (name),
    .dirmeta_cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free),
    .headers = objects_headers_new (),
    .links = tarentry_links_new (),
    .symlinks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL),
    .explicit_dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL),
    .hardlinks = linkgroups_new (),
    .skipped = g_ptr_array_new_with_free_func (g_free),
  };
  g_autoptr(DebInfo) info = unpack (&u, path, st.st_size, error);
  g_autofree char *contents = info != NULL ? deb_dir_write (sink, u.root, error) : NULL;
  if (contents != NULL)
    {
      g_autofree char *subject = g_strdup_printf ("%s %s %s", info->package, info->version,
                                                  info->architecture);
      *out_commit = sink->metadata (sink, OBJECTS_COMMIT,
                                    objects_commit_new (deb_commit_metadata (info), subject,
                                                        timestamp, contents, u.root->meta),
                                    error);
    }
  deb_unpack_clear (&u);
  if (contents == NULL || *out_commit == NULL)
    return NULL;
  return g_steal_pointer (&info);
}

GVariant *
deb_commit_metadata (const DebInfo *info)
{
  GVariantBuilder builder;
  g_variant_builder_init (&builder, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&builder, "{sv}", DEB_META_PACKAGE, g_variant_new_string (info->package));
  g_variant_builder_add (&builder, "{sv}", DEB_META_VERSION, g_variant_new_string (info->version));
  g_variant_builder_add (&builder, "{sv}", DEB_META_ARCHITECTURE,
                         g_variant_new_string (info->architecture));
  g_variant_builder_add (&builder, "{sv}", DEB_META_MULTI_ARCH,
                         g_variant_new_string (info->multi_arch));
  if (info->sha256 != NULL)
    g_variant_builder_add (&builder, "{sv}", DEB_META_SHA256, g_variant_new_string (info->sha256));
  g_variant_builder_add (&builder, "{sv}", DEB_META_SIZE, g_variant_new_uint64 (info->size));
  g_variant_builder_add (&builder, "{sv}", DEB_META_MERGED_USR,
                         g_variant_new_boolean (info->merged_usr));
  GVariantBuilder skipped;
  g_variant_builder_init (&skipped, G_VARIANT_TYPE ("a(ss)"));
  for (guint i = 0; info->skipped != NULL && i + 1 < info->skipped->len; i += 2)
    g_variant_builder_add (&skipped, "(ss)", info->skipped->pdata[i], info->skipped->pdata[i + 1]);
  g_variant_builder_add (&builder, "{sv}", DEB_META_SKIPPED, g_variant_builder_end (&skipped));
  /* Only a package with hard links has the key: the commits of the others
   * keep their metadata but for the format. */
  if (info->hardlinks != NULL)
    g_variant_builder_add (&builder, "{sv}", DEB_META_HARDLINKS, info->hardlinks);
  g_variant_builder_add (&builder, "{sv}", DEB_META_FORMAT, g_variant_new_uint32 (DEB_FORMAT_VERSION));
  return g_variant_builder_end (&builder);
}

gboolean
deb_commit_is_unpack_of (GVariant *commit_v, const char *sha256, gboolean merged_usr,
                         guint64 timestamp)
{
  if (!g_variant_is_of_type (commit_v, G_VARIANT_TYPE (OBJECTS_COMMIT_TYPE)))
    return FALSE;
  guint64 be_timestamp;
  g_variant_get_child (commit_v, 5, "t", &be_timestamp);
  if (GUINT64_FROM_BE (be_timestamp) != timestamp)
    return FALSE;
  g_autoptr(GVariant) metadata = g_variant_get_child_value (commit_v, 0);
  g_autoptr(GVariantDict) dict = g_variant_dict_new (metadata);
  const char *have_sha256;
  gboolean have_merged_usr;
  guint32 format;
  return g_variant_dict_lookup (dict, DEB_META_SHA256, "&s", &have_sha256)
         && g_ascii_strcasecmp (have_sha256, sha256) == 0
         && g_variant_dict_lookup (dict, DEB_META_MERGED_USR, "b", &have_merged_usr)
         && !have_merged_usr == !merged_usr
         && g_variant_dict_lookup (dict, DEB_META_FORMAT, "u", &format)
         && format == DEB_FORMAT_VERSION;
}

static void
append_escaped (GString *out, const char *s)
{
  for (const char *p = s; *p; p++)
    {
      if (g_ascii_isalnum (*p) || *p == '.' || *p == '-')
        g_string_append_c (out, *p);
      else
        g_string_append_printf (out, "_%02x", (guint8) *p);
    }
}

char *
deb_ref_name (const char *name, const char *version, const char *arch, const char *sha256)
{
  GString *ref = g_string_new ("deb/");
  append_escaped (ref, name);
  g_string_append_c (ref, '/');
  append_escaped (ref, version);
  g_string_append_c (ref, '/');
  append_escaped (ref, arch);
  g_string_append_c (ref, '/');
  g_autofree char *lower = g_ascii_strdown (sha256, -1);
  append_escaped (ref, lower);
  return g_string_free (ref, FALSE);
}
