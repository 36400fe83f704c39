/* tarball.c — tar archives in and out of OSTree trees, with libarchive:
 * the archive, the OstreeMutableTree and the repository's objects.  What
 * each entry means as a tree entry (kinds, xattrs, paths, hardlinks) is
 * store/tarentry's. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/content.h"
#include "barestore/linkgroups.h"
#include "store/tarball.h"
#include "store/repo.h"
#include "barestore/tarentry.h"
#include "base/util.h"

typedef struct archive Archive;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Archive, archive_free)

/* --- the data of the current archive entry, read as it comes --- */

/* ostree_repo_write_content() wants a stream of known length; libarchive
 * gives the entry's data block by block: content_read_stream_new() over
 * this reads it as it comes, so a large file never sits in memory. */
static gssize
archive_data_read (gpointer user_data, guint8 *buf, gsize len, GError **error)
{
  struct archive *a = user_data;
  la_ssize_t n = archive_read_data (a, buf, len);
  if (n < 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, archive_error_string (a));
      return -1;
    }
  return n;
}

static GInputStream *
archive_data_stream_new (struct archive *a)
{
  return content_read_stream_new (archive_data_read, a);
}

/* --- reading --- */

typedef struct {
  StoreSink *sink;               /* where the objects go */
  const char *file;              /* for messages */
  struct archive *archive;
  OstreeMutableTree *root;
  char *default_dirmeta;         /* 0755 root:root, for directories the tar does not list */
  TarEntryLinks *links;          /* files so far and entries left out, for hardlinks */
  GPtrArray *skipped;            /* "PATH (fifo)" for the caller */
} TarReader;

static void
tar_reader_clear (TarReader *r)
{
  g_free (r->default_dirmeta);
  g_clear_pointer (&r->links, tarentry_links_free);
  g_clear_pointer (&r->skipped, g_ptr_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TarReader, tar_reader_clear)

/* The components of an entry's path inside the tree.  Archives write "./usr/"
 * or "usr"; both mean the same.  A path that could land outside the tree is
 * refused rather than silently made relative, and so is every name
 * util_tree_path_problem() refuses (a newline, bytes that are not UTF-8, a
 * name too long for a file system). */
static GPtrArray *
tar_entry_components (TarReader *r, const char *pathname, const char *link_of, GError **error)
{
  if (pathname == NULL || *pathname == '\0')
    {
      util_fail (error, "%s: an entry has no path name; the archive is damaged", r->file);
      return NULL;
    }
  /* "entry \"x\"" or, for a hardlink's target, "entry \"y\" (a hardlink to \"x\")" */
  g_autofree char *shown = util_shown_path (pathname);
  g_autofree char *shown_link_of = link_of != NULL ? util_shown_path (link_of) : NULL;
  g_autofree char *what = link_of == NULL
      ? g_strdup_printf ("entry \"%s\"", shown)
      : g_strdup_printf ("entry \"%s\" (a hardlink to \"%s\")", shown_link_of, shown);
  const char *problem;
  GPtrArray *components = tarentry_components (pathname, &problem);
  if (components == NULL && pathname[0] == '/')
    util_fail (error, "%s: %s %s; refusing an archive that writes outside its own tree",
               r->file, what, problem);
  else if (components == NULL)
    util_fail (error, "%s: %s %s; refusing the archive", r->file, what, problem);
  return components;
}

/* The file info of entry TE: its owner, TYPE, MODE (with the type's
 * bits) and SIZE. */
static GFileInfo *
entry_info (const TarEntry *te, GFileType type, guint32 mode, goffset size)
{
  GFileInfo *info = g_file_info_new ();
  g_file_info_set_attribute_uint32 (info, "unix::uid", te->uid);
  g_file_info_set_attribute_uint32 (info, "unix::gid", te->gid);
  g_file_info_set_file_type (info, type);
  g_file_info_set_attribute_uint32 (info, "unix::mode", mode);
  g_file_info_set_size (info, size);
  return info;
}

static gboolean
tar_write_dirmeta (TarReader *r, struct archive_entry *entry, const TarEntry *te,
                   char **out_checksum, GCancellable *cancellable, GError **error)
{
  g_autoptr(GFileInfo) info = entry_info (te, G_FILE_TYPE_DIRECTORY, S_IFDIR | te->mode, 0);
  g_autoptr(GVariant) xattrs = tarentry_xattrs (entry);
  /* ostree_create_directory_metadata() gives a full (not floating) reference. */
  g_autoptr(GVariant) dirmeta = ostree_create_directory_metadata (info, xattrs);
  *out_checksum = r->sink->metadata (r->sink, OBJECTS_DIR_META, dirmeta, error);
  return *out_checksum != NULL;
}

/* The data of the regular file entry the archive is at, as a stream, and
 * its size.  Formats that do not record the size up front (zip streams)
 * have the data read to learn it. */
static GInputStream *
entry_data (TarReader *r, struct archive_entry *entry, goffset *out_size,
            GCancellable *cancellable, GError **error)
{
  if (archive_entry_size_is_set (entry))
    {
      *out_size = archive_entry_size (entry);
      return archive_data_stream_new (r->archive);
    }
  g_autoptr(GInputStream) stream = archive_data_stream_new (r->archive);
  g_autoptr(GOutputStream) memory = g_memory_output_stream_new_resizable ();
  if (g_output_stream_splice (memory, stream, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET,
                              cancellable, error) < 0)
    return NULL;
  g_autoptr(GBytes) bytes = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (memory));
  *out_size = g_bytes_get_size (bytes);
  return g_memory_input_stream_new_from_bytes (bytes);
}

/* A regular file or symlink entry as a content object.  Its data is read
 * from the archive as it is written to the repository. */
static gboolean
tar_write_content (TarReader *r, struct archive_entry *entry, const TarEntry *te,
                   char **out_checksum, GCancellable *cancellable, GError **error)
{
  g_autoptr(GFileInfo) info = NULL;
  g_autoptr(GInputStream) data = NULL;
  if (te->kind == TARENTRY_SYMLINK)
    {
      const char *target = te->symlink;
      if (target == NULL || *target == '\0')
        return util_fail (error, "%s: symlink \"%s\" has no target; the archive is damaged",
                          r->file, archive_entry_pathname (entry));
      if (!g_utf8_validate (target, -1, NULL))
        return util_fail (error, "a symlink whose target is not valid UTF-8, which OSTree "
                          "cannot store");
      info = entry_info (te, G_FILE_TYPE_SYMBOLIC_LINK, S_IFLNK | 0777, 0);
      g_file_info_set_attribute_byte_string (info, "standard::symlink-target", target);
    }
  else
    {
      goffset size = 0;
      data = entry_data (r, entry, &size, cancellable, error);
      if (data == NULL)
        return FALSE;
      info = entry_info (te, G_FILE_TYPE_REGULAR, S_IFREG | te->mode, size);
    }

  g_autoptr(GVariant) xattrs = tarentry_xattrs (entry);
  *out_checksum = content_write_file (r->sink, info, xattrs, data, cancellable, error);
  return *out_checksum != NULL;
}

/* The directory that holds the entry at COMPONENTS, made (0755 root:root)
 * where the archive has not listed it yet. */
static OstreeMutableTree *
tar_parent_dir (TarReader *r, const char *pathname, GPtrArray *components, GError **error)
{
  g_autoptr(OstreeMutableTree) dir = g_object_ref (r->root);
  for (guint i = 0; i + 1 < components->len; i++)
    {
      const char *name = components->pdata[i];
      g_autofree char *file_checksum = NULL;
      g_autoptr(OstreeMutableTree) subdir = NULL;
      g_autoptr(GError) local_error = NULL;
      if (ostree_mutable_tree_lookup (dir, name, &file_checksum, &subdir, &local_error))
        {
          if (subdir == NULL)
            {
              g_autofree char *parent = util_join_tree_path (components, i + 1);
              util_fail (error, "%s: entry \"%s\": %s is not a directory in the archive",
                         r->file, pathname, parent);
              return NULL;
            }
        }
      else if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        {
          if (!ostree_mutable_tree_ensure_dir (dir, name, &subdir, error))
            return NULL;
          ostree_mutable_tree_set_metadata_checksum (subdir, r->default_dirmeta);
        }
      else
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
      g_set_object (&dir, subdir);
    }
  return g_steal_pointer (&dir);
}

/* What the entry at NAME in DIR is now: 0 nothing, 'f' a file, 'd' a directory. */
static char
tar_existing (OstreeMutableTree *dir, const char *name)
{
  g_autofree char *file_checksum = NULL;
  g_autoptr(OstreeMutableTree) subdir = NULL;
  if (!ostree_mutable_tree_lookup (dir, name, &file_checksum, &subdir, NULL))
    return 0;
  return subdir != NULL ? 'd' : 'f';
}

static void
tar_skip (TarReader *r, GPtrArray *components, const char *what)
{
  g_autofree char *path = util_join_tree_path (components, components->len);
  g_ptr_array_add (r->skipped, g_strdup_printf ("%s (%s)", path, what));
  tarentry_links_add_skipped (r->links, path);
}

/* The content of a file, symlink or hardlink entry: a hardlink takes the
 * checksum of the file it names (a hardlink that carries data, as pax
 * allows, is a file of its own). */
static gboolean
tar_leaf_checksum (TarReader *r, struct archive_entry *entry, const TarEntry *te,
                   GPtrArray *components, char **out_checksum, GCancellable *cancellable,
                   GError **error)
{
  const char *pathname = archive_entry_pathname (entry);
  if (te->kind == TARENTRY_HARDLINK && archive_entry_size (entry) == 0)
    {
      g_autoptr(GPtrArray) target = tar_entry_components (r, te->hardlink, pathname, error);
      if (target == NULL)
        return FALSE;
      g_autofree char *target_path = util_join_tree_path (target, target->len);
      const char *checksum;
      switch (tarentry_links_lookup (r->links, target_path, &checksum))
        {
        case TARENTRY_LINK_FILE:
          *out_checksum = g_strdup (checksum);
          return TRUE;
        case TARENTRY_LINK_SKIPPED:
          {
            g_autofree char *what = g_strdup_printf ("hardlink to %s", target_path);
            tar_skip (r, components, what);
            return TRUE;
          }
        case TARENTRY_LINK_MISSING:
        default:
          return util_fail (error, "%s: entry \"%s\" is a hardlink to \"%s\", which is not a "
                            "file earlier in the archive", r->file, pathname, te->hardlink);
        }
    }
  g_autoptr(GError) local_error = NULL;
  if (!tar_write_content (r, entry, te, out_checksum, cancellable, &local_error))
    return util_fail (error, "%s: entry \"%s\": %s", r->file, pathname, local_error->message);
  return TRUE;
}

/* A directory entry's metadata, on DIR. */
static gboolean
tar_read_dir (TarReader *r, struct archive_entry *entry, const TarEntry *te,
              OstreeMutableTree *dir, GCancellable *cancellable, GError **error)
{
  g_autofree char *dirmeta = NULL;
  if (!tar_write_dirmeta (r, entry, te, &dirmeta, cancellable, error))
    return FALSE;
  ostree_mutable_tree_set_metadata_checksum (dir, dirmeta);
  return TRUE;
}

static gboolean
tar_read_entry (TarReader *r, struct archive_entry *entry, GCancellable *cancellable, GError **error)
{
  const char *pathname = archive_entry_pathname (entry);
  g_autoptr(GPtrArray) components = tar_entry_components (r, pathname, NULL, error);
  if (components == NULL)
    return FALSE;
  TarEntry te;
  tarentry_get (entry, &te);

  if (components->len == 0)
    {
      if (te.kind != TARENTRY_DIR)
        return util_fail (error, "%s: entry \"%s\" names the root but is not a directory",
                          r->file, pathname);
      return tar_read_dir (r, entry, &te, r->root, cancellable, error);
    }
  if (te.kind == TARENTRY_SPECIAL)
    {
      tar_skip (r, components, tarentry_special_name (te.type));
      return TRUE;
    }

  g_autoptr(OstreeMutableTree) parent = tar_parent_dir (r, pathname, components, error);
  if (parent == NULL)
    return FALSE;
  const char *name = components->pdata[components->len - 1];
  char existing = tar_existing (parent, name);
  if ((existing == 'd' && te.kind != TARENTRY_DIR) || (existing == 'f' && te.kind == TARENTRY_DIR))
    return util_fail (error, "%s: entry \"%s\" is listed both as a directory and as a file",
                      r->file, pathname);

  if (te.kind == TARENTRY_DIR)
    {
      g_autoptr(OstreeMutableTree) subdir = NULL;
      return ostree_mutable_tree_ensure_dir (parent, name, &subdir, error)
             && tar_read_dir (r, entry, &te, subdir, cancellable, error);
    }

  g_autofree char *checksum = NULL;
  if (!tar_leaf_checksum (r, entry, &te, components, &checksum, cancellable, error))
    return FALSE;
  if (checksum == NULL)
    return TRUE;  /* a hardlink to an entry left out */
  g_autofree char *path = util_join_tree_path (components, components->len);
  tarentry_links_add_file (r->links, path, checksum);
  return ostree_mutable_tree_replace_file (parent, name, checksum, error);
}

static int
open_input (const char *file, GError **error)
{
  if (g_str_equal (file, "-"))
    return dup (STDIN_FILENO);
  int fd = open (file, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    util_fail (error, "%s: cannot open the archive: %s", file, g_strerror (errno));
  return fd;
}

gboolean
tarball_read_to_mtree (StoreSink *sink, const char *file, OstreeMutableTree *mtree,
                       GPtrArray **out_skipped, GCancellable *cancellable, GError **error)
{
  int fd = open_input (file, error);
  if (fd < 0)
    return FALSE;

  g_autoptr(Archive) a = archive_read_new ();
  archive_read_support_filter_all (a);
  archive_read_support_format_tar (a);  /* not "all": the mtree reader takes any text file */
  if (archive_read_open_fd (a, fd, 64 * 1024) != ARCHIVE_OK)
    {
      util_fail (error, "%s: cannot read the archive: %s", file, archive_error_string (a));
      close (fd);
      return FALSE;
    }

  g_auto(TarReader) r = { sink, file, a, mtree, NULL, NULL, NULL };
  r.links = tarentry_links_new ();
  r.skipped = g_ptr_array_new_with_free_func (g_free);
  r.default_dirmeta = sink->metadata (sink, OBJECTS_DIR_META, objects_dirmeta_new (0, 0, 0755,
                                                                                   NULL),
                                      error);
  gboolean ok = r.default_dirmeta != NULL;

  while (ok)
    {
      struct archive_entry *entry;
      int res = archive_read_next_header (a, &entry);
      if (res == ARCHIVE_EOF)
        break;
      if (res == ARCHIVE_WARN)
        res = ARCHIVE_OK;  /* e.g. an unknown pax keyword: the entry itself is fine */
      if (res != ARCHIVE_OK)
        ok = util_fail (error, "%s: cannot read the archive: %s", file, archive_error_string (a));
      else
        ok = tar_read_entry (&r, entry, cancellable, error);
    }
  archive_read_close (a);
  close (fd);
  if (!ok)
    return FALSE;

  if (ostree_mutable_tree_get_metadata_checksum (mtree) == NULL)
    ostree_mutable_tree_set_metadata_checksum (mtree, r.default_dirmeta);
  if (out_skipped != NULL)
    *out_skipped = g_steal_pointer (&r.skipped);
  return TRUE;
}

/* --- writing --- */

/* One archive being written: a layer, or the whole tree's. */
typedef struct {
  struct archive *archive;
  const char *file;              /* for messages */
  gint64 mtime;
  guint dirs_written;            /* how many of the open directories it has */
  GHashTable *first_of;          /* "GROUP:CHECKSUM" -> the entry written first, "./usr/bin/a" */
  int fd_to_close;               /* a layer's file, else unused */
} TarOut;

/* A directory being walked, written into an archive only when the archive
 * gets an entry below it (the last archive gets every one). */
typedef struct {
  char *path;                    /* "./usr/bin" */
  guint32 mode, uid, gid;
  GVariant *xattrs;
} TarDir;

static void
tar_dir_free (TarDir *dir)
{
  g_free (dir->path);
  g_clear_pointer (&dir->xattrs, g_variant_unref);
  g_free (dir);
}

typedef struct {
  OstreeRepo *repo;
  TarOut *outs;
  guint n_outs;                  /* the last one gets every directory */
  TarballLayerFunc layer_of;     /* NULL: everything into outs[0] */
  gpointer layer_data;
  struct archive_entry *entry;
  GString *path;                 /* "./usr/bin" */
  GPtrArray *open_dirs;          /* TarDir*, the root first */
  GHashTable *link_group;        /* tree path -> its hard-link group's number, or NULL */
} TarWriter;

static gboolean
tar_fail (TarOut *out, GError **error)
{
  return util_fail (error, "%s: cannot write the archive: %s", out->file,
                    archive_error_string (out->archive));
}

static void
tar_entry_start (TarWriter *w, TarOut *out, const char *path, guint32 mode, guint32 uid,
                 guint32 gid)
{
  archive_entry_clear (w->entry);
  archive_entry_set_pathname (w->entry, path);
  archive_entry_set_mode (w->entry, mode);
  archive_entry_set_uid (w->entry, uid);
  archive_entry_set_gid (w->entry, gid);
  archive_entry_set_mtime (w->entry, out->mtime, 0);
}

/* The open directories OUT does not have yet, written into it. */
static gboolean
tar_out_dirs (TarWriter *w, TarOut *out, GError **error)
{
  for (; out->dirs_written < w->open_dirs->len; out->dirs_written++)
    {
      const TarDir *dir = w->open_dirs->pdata[out->dirs_written];
      tar_entry_start (w, out, dir->path, dir->mode, dir->uid, dir->gid);
      tarentry_set_xattrs (w->entry, dir->xattrs);
      if (archive_write_header (out->archive, w->entry) != ARCHIVE_OK)
        return tar_fail (out, error);
    }
  return TRUE;
}

/* The entry a regular file at w->path (content CHECKSUM) is a hard link
 * to in OUT: the first one written there of its commit's link group that
 * has the same content (so the same owner and mode), else NULL and it is
 * recorded as that first one.  A member a later step changed or replaced
 * is only linked to members it still equals. */
static const char *
tar_link_target (TarWriter *w, TarOut *out, const char *checksum)
{
  if (w->link_group == NULL)
    return NULL;
  gpointer group = g_hash_table_lookup (w->link_group, w->path->str + 1);  /* after "." */
  if (group == NULL)
    return NULL;
  g_autofree char *key = g_strdup_printf ("%u:%s", GPOINTER_TO_UINT (group), checksum);
  const char *first = g_hash_table_lookup (out->first_of, key);
  if (first == NULL)
    g_hash_table_insert (out->first_of, g_steal_pointer (&key), g_strdup (w->path->str));
  return first;
}

/* The archive the file at w->path (content CHECKSUM) goes to. */
static TarOut *
tar_out_of (TarWriter *w, const char *checksum)
{
  guint layer = w->layer_of != NULL ? w->layer_of (w->path->str + 1, checksum, w->layer_data) : 0;
  return &w->outs[MIN (layer, w->n_outs - 1)];
}

static gboolean
tar_write_file (TarWriter *w, const char *checksum, GCancellable *cancellable, GError **error)
{
  g_autoptr(GInputStream) input = NULL;
  g_autoptr(GFileInfo) info = NULL;
  g_autoptr(GVariant) xattrs = NULL;
  if (!ostree_repo_load_file (w->repo, checksum, &input, &info, &xattrs, cancellable, error))
    return FALSE;

  TarOut *out = tar_out_of (w, checksum);
  if (!tar_out_dirs (w, out, error))
    return FALSE;
  tar_entry_start (w, out, w->path->str, g_file_info_get_attribute_uint32 (info, "unix::mode"),
                   g_file_info_get_attribute_uint32 (info, "unix::uid"),
                   g_file_info_get_attribute_uint32 (info, "unix::gid"));
  tarentry_set_xattrs (w->entry, xattrs);
  gboolean is_link = g_file_info_get_file_type (info) == G_FILE_TYPE_SYMBOLIC_LINK;
  const char *link_target = is_link ? NULL : tar_link_target (w, out, checksum);
  if (link_target != NULL)
    {
      archive_entry_set_hardlink (w->entry, link_target);
      archive_entry_set_size (w->entry, 0);
      if (archive_write_header (out->archive, w->entry) != ARCHIVE_OK)
        return tar_fail (out, error);
      return TRUE;
    }
  guint64 size = is_link ? 0 : (guint64) g_file_info_get_size (info);
  if (is_link)
    archive_entry_set_symlink (w->entry, g_file_info_get_symlink_target (info));
  else
    archive_entry_set_size (w->entry, size);
  if (archive_write_header (out->archive, w->entry) != ARCHIVE_OK)
    return tar_fail (out, error);
  if (is_link)
    return TRUE;

  guint64 written = 0;
  g_autofree char *buffer = g_malloc (128 * 1024);
  for (;;)
    {
      gssize n = g_input_stream_read (input, buffer, 128 * 1024, cancellable, error);
      if (n < 0)
        return FALSE;
      if (n == 0)
        break;
      if (archive_write_data (out->archive, buffer, n) != n)
        return tar_fail (out, error);
      written += n;
    }
  if (written != size)
    return util_fail (error, "object %s: %" G_GUINT64_FORMAT " bytes of content, expected %"
                      G_GUINT64_FORMAT "; run \"ostree fsck\" on the repository",
                      checksum, written, size);
  return TRUE;
}

static gboolean tar_write_entries (TarWriter *w, const char *contents_checksum, GVariant *dirtree,
                                   GCancellable *cancellable, GError **error);

static gboolean
tar_write_dir (TarWriter *w, const char *contents_checksum, const char *meta_checksum,
               GCancellable *cancellable, GError **error)
{
  g_autoptr(GVariant) dirtree = NULL;
  g_autoptr(GVariant) dirmeta = NULL;
  if (!ostree_repo_load_variant (w->repo, OSTREE_OBJECT_TYPE_DIR_TREE, contents_checksum,
                                 &dirtree, error)
      || !ostree_repo_load_variant (w->repo, OSTREE_OBJECT_TYPE_DIR_META, meta_checksum,
                                    &dirmeta, error))
    return FALSE;

  guint32 uid, gid, mode;
  TarDir *dir = g_new0 (TarDir, 1);
  g_variant_get (dirmeta, "(uuu@a(ayay))", &uid, &gid, &mode, &dir->xattrs);
  dir->path = g_strdup (w->path->str);
  dir->mode = GUINT32_FROM_BE (mode);
  dir->uid = GUINT32_FROM_BE (uid);
  dir->gid = GUINT32_FROM_BE (gid);
  g_ptr_array_add (w->open_dirs, dir);
  guint depth = w->open_dirs->len;
  gboolean ok = tar_out_dirs (w, &w->outs[w->n_outs - 1], error)
                && tar_write_entries (w, contents_checksum, dirtree, cancellable, error);
  g_ptr_array_set_size (w->open_dirs, depth - 1);
  for (guint i = 0; i < w->n_outs; i++)
    w->outs[i].dirs_written = MIN (w->outs[i].dirs_written, depth - 1);
  return ok;
}

/* The entries of the directory at w->path, DIRTREE. */
static gboolean
tar_write_entries (TarWriter *w, const char *contents_checksum, GVariant *dirtree,
                   GCancellable *cancellable, GError **error)
{
  /* Files and subdirectories are each sorted by name in the dirtree; merge
   * them so the archive lists a directory's entries in one sorted order. */
  g_autoptr(GVariant) files = g_variant_get_child_value (dirtree, 0);
  g_autoptr(GVariant) dirs = g_variant_get_child_value (dirtree, 1);
  gsize n_files = g_variant_n_children (files), n_dirs = g_variant_n_children (dirs);
  gsize i = 0, j = 0;
  gsize len = w->path->len;
  while (i < n_files || j < n_dirs)
    {
      const char *file_name = NULL, *dir_name = NULL;
      g_autoptr(GVariant) file_csum = NULL;
      g_autoptr(GVariant) tree_csum = NULL;
      g_autoptr(GVariant) meta_csum = NULL;
      if (i < n_files)
        g_variant_get_child (files, i, "(&s@ay)", &file_name, &file_csum);
      if (j < n_dirs)
        g_variant_get_child (dirs, j, "(&s@ay@ay)", &dir_name, &tree_csum, &meta_csum);

      gboolean take_file = dir_name == NULL || (file_name != NULL && strcmp (file_name, dir_name) < 0);
      const char *name = take_file ? file_name : dir_name;
      if (*name == '\0' || strchr (name, '/') != NULL || g_str_equal (name, ".")
          || g_str_equal (name, ".."))
        return util_fail (error, "tree %s: invalid file name \"%s\"; run \"ostree fsck\"",
                          contents_checksum, name);
      if (w->path->str[w->path->len - 1] != '/')
        g_string_append_c (w->path, '/');
      g_string_append (w->path, take_file ? file_name : dir_name);
      gboolean ok;
      if (take_file)
        {
          g_autofree char *checksum = ostree_checksum_from_bytes_v (file_csum);
          ok = tar_write_file (w, checksum, cancellable, error);
          i++;
        }
      else
        {
          g_autofree char *tree = ostree_checksum_from_bytes_v (tree_csum);
          g_autofree char *meta = ostree_checksum_from_bytes_v (meta_csum);
          ok = tar_write_dir (w, tree, meta, cancellable, error);
          j++;
        }
      g_string_truncate (w->path, len);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

/* Compression from the file name; standard output gets a plain tar. */
static gboolean
tar_add_filter (struct archive *a, const char *file, GError **error)
{
  static const struct {
    const char *suffix;
    int (*add) (struct archive *);
  } filters[] = {
    { ".tar", archive_write_add_filter_none },
    { ".tar.gz", archive_write_add_filter_gzip },
    { ".tgz", archive_write_add_filter_gzip },
    { ".tar.xz", archive_write_add_filter_xz },
    { ".txz", archive_write_add_filter_xz },
    { ".tar.zst", archive_write_add_filter_zstd },
    { ".tzst", archive_write_add_filter_zstd },
    { ".tar.bz2", archive_write_add_filter_bzip2 },
  };
  if (g_str_equal (file, "-"))
    return archive_write_add_filter_none (a) == ARCHIVE_OK;

  for (gsize i = 0; i < G_N_ELEMENTS (filters); i++)
    if (g_str_has_suffix (file, filters[i].suffix))
      {
        if (filters[i].add (a) != ARCHIVE_OK)
          return util_fail (error, "%s: cannot compress: %s", file, archive_error_string (a));
        /* gzip would record the time of writing; the same tree must give
         * the same bytes. */
        if (filters[i].add == archive_write_add_filter_gzip)
          archive_write_set_filter_option (a, "gzip", "timestamp", NULL);
        return TRUE;
      }
  return util_fail (error, "%s: unknown archive suffix; name it .tar, .tar.gz, .tar.xz, "
                    ".tar.zst or .tar.bz2 (or \"-\" for a plain tar on standard output)", file);
}

/* A pax archive on FD, with what every archive of a tree has. */
static gboolean
tar_open (struct archive *a, const char *file, int fd, GError **error)
{
  if (archive_write_set_format_pax_restricted (a) != ARCHIVE_OK
      /* GNU tar reads SCHILY.xattr and warns about libarchive's own keyword */
      || archive_write_set_format_option (a, "pax", "xattrheader", "SCHILY") != ARCHIVE_OK
      /* no padding to a 10 KiB record: a file and a pipe get the same bytes */
      || archive_write_set_bytes_in_last_block (a, 1) != ARCHIVE_OK
      || archive_write_open_fd (a, fd) != ARCHIVE_OK)
    return util_fail (error, "%s: cannot write the archive: %s", file, archive_error_string (a));
  return TRUE;
}

/* COMMIT_V's tree into the open archives OUTS (their mtimes set), each
 * file where LAYER_OF says; then each archive closed. */
static gboolean
tar_write_tree (OstreeRepo *repo, GVariant *commit_v, TarOut *outs, guint n_outs,
                TarballLayerFunc layer_of, gpointer layer_data, GCancellable *cancellable,
                GError **error)
{
  g_autoptr(GVariant) contents_v = NULL;
  g_autoptr(GVariant) meta_v = NULL;
  g_variant_get_child (commit_v, 6, "@ay", &contents_v);
  g_variant_get_child (commit_v, 7, "@ay", &meta_v);
  g_autofree char *contents = ostree_checksum_from_bytes_v (contents_v);
  g_autofree char *meta = ostree_checksum_from_bytes_v (meta_v);

  struct archive_entry *entry = archive_entry_new ();
  g_autoptr(GString) path = g_string_new ("./");
  g_autoptr(GPtrArray) open_dirs = g_ptr_array_new_with_free_func ((GDestroyNotify) tar_dir_free);
  g_autoptr(GVariant) metadata = g_variant_get_child_value (commit_v, 0);
  g_autoptr(GHashTable) link_group = linkgroups_index_metadata (metadata);
  for (guint i = 0; i < n_outs; i++)
    outs[i].first_of = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  TarWriter w = { repo, outs, n_outs, layer_of, layer_data, entry, path, open_dirs, link_group };
  gboolean ok = tar_write_dir (&w, contents, meta, cancellable, error);
  archive_entry_free (entry);
  for (guint i = 0; i < n_outs; i++)
    {
      g_clear_pointer (&outs[i].first_of, g_hash_table_unref);
      if (ok && archive_write_close (outs[i].archive) != ARCHIVE_OK)
        ok = tar_fail (&outs[i], error);
    }
  return ok;
}

static gboolean
tar_write_to_fd (OstreeRepo *repo, const char *commit, const char *file, int fd,
                 GCancellable *cancellable, GError **error)
{
  g_autoptr(GVariant) commit_v = NULL;
  if (!ostree_repo_load_variant (repo, OSTREE_OBJECT_TYPE_COMMIT, commit, &commit_v, error))
    return FALSE;
  g_autoptr(Archive) a = archive_write_new ();
  if (!tar_add_filter (a, file, error) || !tar_open (a, file, fd, error))
    return FALSE;
  TarOut out = { a, file, (gint64) ostree_commit_get_timestamp (commit_v), 0, NULL, -1 };
  return tar_write_tree (repo, commit_v, &out, 1, NULL, NULL, cancellable, error);
}

gboolean
tarball_write_layers (OstreeRepo *repo, const char *commit, const TarballLayer *layers,
                      guint n_layers, TarballLayerFunc layer_of, gpointer layer_data,
                      GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (n_layers > 0, FALSE);
  g_autoptr(GVariant) commit_v = NULL;
  if (!ostree_repo_load_variant (repo, OSTREE_OBJECT_TYPE_COMMIT, commit, &commit_v, error))
    return FALSE;
  g_autofree TarOut *outs = g_new0 (TarOut, n_layers);
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < n_layers; i++)
    {
      int fd = open (layers[i].file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0)
        {
          ok = util_fail (error, "%s: cannot create: %s", layers[i].file, g_strerror (errno));
          break;
        }
      outs[i] = (TarOut) { archive_write_new (), layers[i].file, layers[i].mtime, 0, NULL, fd };
      archive_write_add_filter_none (outs[i].archive);
      /* libarchive does not own FD: closed here once the archive is */
      ok = tar_open (outs[i].archive, layers[i].file, fd, error);
    }
  ok = ok && tar_write_tree (repo, commit_v, outs, n_layers, layer_of, layer_data, cancellable,
                             error);
  for (guint i = 0; i < n_layers && outs[i].archive != NULL; i++)
    {
      archive_write_free (outs[i].archive);
      if (close (outs[i].fd_to_close) < 0 && ok)
        ok = util_fail (error, "%s: cannot write: %s", layers[i].file, g_strerror (errno));
    }
  return ok;
}

gboolean
tarball_write_commit (OstreeRepo *repo, const char *commit, const char *file,
                      GCancellable *cancellable, GError **error)
{
  if (g_str_equal (file, "-"))
    {
      if (isatty (STDOUT_FILENO))
        return util_fail (error, "not writing a tar archive to a terminal; redirect standard "
                          "output or name a file");
      return tar_write_to_fd (repo, commit, file, STDOUT_FILENO, cancellable, error);
    }

  /* Check the suffix before creating anything. */
  g_autoptr(Archive) probe = archive_write_new ();
  if (!tar_add_filter (probe, file, error))
    return FALSE;

  g_autofree char *tmp = g_strconcat (file, ".tmp-XXXXXX", NULL);
  int fd = g_mkstemp_full (tmp, O_WRONLY | O_CLOEXEC, 0666);  /* the umask applies */
  if (fd < 0)
    return util_fail (error, "%s: cannot create: %s", file, g_strerror (errno));

  gboolean ok = tar_write_to_fd (repo, commit, file, fd, cancellable, error);
  if (close (fd) < 0 && ok)
    ok = util_fail (error, "%s: cannot write: %s", file, g_strerror (errno));
  if (ok && rename (tmp, file) < 0)
    ok = util_fail (error, "%s: cannot rename into place: %s", file, g_strerror (errno));
  if (!ok)
    (void) unlink (tmp);
  return ok;
}
