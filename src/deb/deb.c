/* deb.c — one .deb into one OSTree tree, read with libarchive: the ar
 * container, then control.tar.* and data.tar.* streamed from it.  File
 * content goes straight from the decompressor into content objects, the
 * tree is built in memory and written as dirtree objects, then the commit:
 * all through a DebSink, so this module needs GLib and libarchive only. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "deb/deb.h"
#include "base/debpolicy.h"
#include "store/objects.h"
#include "store/tarentry.h"
#include "base/util.h"

static void
archive_free_read (struct archive *a)
{
  archive_read_free (a);
}
typedef struct archive ArchiveRead;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ArchiveRead, archive_free_read)

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
deb_dir_write (DebSink *sink, DebDir *dir, GError **error)
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
/* The control file: one deb822 stanza, fields kept in order and verbatim. */

typedef struct {
  char *name;
  char *value;  /* the first line's text, then "\n"-joined continuation lines */
} ControlField;

static void
control_field_free (ControlField *f)
{
  g_free (f->name);
  g_free (f->value);
  g_free (f);
}

static GPtrArray *
control_parse (const char *text, gsize len, GError **error)
{
  g_autoptr(GPtrArray) fields = g_ptr_array_new_with_free_func ((GDestroyNotify) control_field_free);
  g_autofree char *copy = g_strndup (text, len);
  g_auto(GStrv) lines = g_strsplit (copy, "\n", -1);
  ControlField *current = NULL;

  for (char **l = lines; *l != NULL; l++)
    {
      const char *line = *l;
      if (*line == '\0')
        {
          if (fields->len > 0 && l[1] != NULL && *l[1] != '\0')
            return util_fail (error, "more than one stanza"), NULL;
          continue;
        }
      if (*line == ' ' || *line == '\t')
        {
          if (current == NULL)
            return util_fail (error, "continuation line before the first field"), NULL;
          char *joined = g_strconcat (current->value, "\n", line, NULL);
          g_free (current->value);
          current->value = joined;
          continue;
        }
      const char *colon = strchr (line, ':');
      if (colon == NULL || colon == line)
        return util_fail (error, "malformed line \"%s\"", line), NULL;
      current = g_new0 (ControlField, 1);
      current->name = g_strndup (line, colon - line);
      /* Trailing blanks are kept: dpkg copies values verbatim. */
      current->value = g_strchug (g_strdup (colon + 1));
      g_ptr_array_add (fields, current);
    }
  return g_steal_pointer (&fields);
}

static const char *
control_get (GPtrArray *fields, const char *name)
{
  for (guint i = 0; i < fields->len; i++)
    {
      ControlField *f = fields->pdata[i];
      if (g_ascii_strcasecmp (f->name, name) == 0)
        return f->value;
    }
  return NULL;
}

/* A one-word field (Package, Version...) without surrounding blanks, or NULL
 * when absent or empty. */
static char *
control_get_word (GPtrArray *fields, const char *name)
{
  const char *value = control_get (fields, name);
  if (value == NULL)
    return NULL;
  char *word = g_strstrip (g_strdup (value));
  if (*word == '\0')
    g_clear_pointer (&word, g_free);
  return word;
}

/* dpkg's order of fields in var/lib/dpkg/status; others follow in the
 * order the control file has them. */
static const char *const status_field_order[] = {
  "Package", "Essential", "Protected", "Status", "Priority", "Section", "Installed-Size",
  "Origin", "Maintainer", "Bugs", "Architecture", "Multi-Arch", "Source", "Version",
  "Config-Version", "Replaces", "Provides", "Depends", "Pre-Depends", "Recommends",
  "Suggests", "Breaks", "Conflicts", "Enhances", "Conffiles", "Filename", "Size",
  "MD5sum", "MSDOS-Filename", "Description", "Triggers-Pending", "Triggers-Awaited",
  NULL
};

static void
append_field (GString *out, const char *name, const char *value)
{
  g_string_append (out, name);
  g_string_append_c (out, ':');
  if (*value != '\0' && *value != '\n')
    g_string_append_c (out, ' ');
  g_string_append (out, value);
  g_string_append_c (out, '\n');
}

/* ------------------------------------------------------------------------ */
/* The unpacking state. */

typedef struct {
  GBytes *data;
  guint32 mode;
} ControlMember;

static void
control_member_free (ControlMember *m)
{
  g_bytes_unref (m->data);
  g_free (m);
}

typedef struct {
  char *md5;        /* hex, NULL until the file is seen in data.tar */
  char *flags;      /* "remove-on-upgrade" etc., or NULL */
} Conffile;

static void
conffile_free (Conffile *c)
{
  g_free (c->md5);
  g_free (c->flags);
  g_free (c);
}

/* The longest control.tar member name dpkg installs (its MAXCONTROLFILENAME). */
#define DEB_CONTROL_NAME_MAX 100

/* Files larger than this are not held in memory but streamed. */
#define DEB_MAX_INLINE (64 * 1024 * 1024)

typedef struct {
  DebSink *sink;
  const char *name;                 /* the .deb, for messages */
  const DebUnpackOptions *opts;
  DebDir *root;
  const char *member;               /* the ar member being read, for messages */
  guint8 *file_buf;                 /* a whole regular file, grown as needed */
  gsize file_buf_size;

  char *default_dirmeta;            /* 0755 root:root */
  GHashTable *dirmeta_cache;        /* "uid:gid:mode" -> checksum */
  GHashTable *headers;              /* for sink->regular() */

  GHashTable *control;              /* member name -> ControlMember */
  GPtrArray *fields;                /* of the control file */
  GHashTable *conffiles;            /* "/etc/foo" -> Conffile */
  GPtrArray *conffile_order;        /* shipped paths, as listed */

  GString *list;                    /* the .list file */
  TarEntryLinks *links;             /* final paths of files and of entries not stored */
  GHashTable *symlinks;             /* final paths of symlinks */
  GHashTable *explicit_dirs;        /* final paths whose dirmeta came from an entry */
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
  g_clear_pointer (&u->control, g_hash_table_unref);
  g_clear_pointer (&u->fields, g_ptr_array_unref);
  g_clear_pointer (&u->conffiles, g_hash_table_unref);
  g_clear_pointer (&u->conffile_order, g_ptr_array_unref);
  if (u->list != NULL)
    g_string_free (u->list, TRUE);
  g_clear_pointer (&u->links, tarentry_links_free);
  g_clear_pointer (&u->symlinks, g_hash_table_unref);
  g_clear_pointer (&u->explicit_dirs, g_hash_table_unref);
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

static void
list_append (DebUnpack *u, GPtrArray *shipped)
{
  if (shipped->len == 0)
    g_string_append (u->list, "/.\n");
  else
    {
      g_autofree char *p = util_join_tree_path (shipped, shipped->len);
      g_string_append (u->list, p);
      g_string_append_c (u->list, '\n');
    }
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
  Conffile *conffile = g_hash_table_lookup (u->conffiles, shipped_path);
  if (conffile != NULL)
    {
      g_autofree char *target_shipped_path = util_join_tree_path (target_shipped, target_shipped->len);
      Conffile *target_conffile = g_hash_table_lookup (u->conffiles, target_shipped_path);
      if (target_conffile == NULL || target_conffile->md5 == NULL)
        return deb_fail (u, error, "conffile \"%s\" is a hard link to \"%s\", which is not a "
                         "conffile", shipped_path, target);
      g_free (conffile->md5);
      conffile->md5 = g_strdup (target_conffile->md5);
    }

  g_autofree char *copy = g_strdup (checksum);
  return place_file (u, final, pathname, copy, error);
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
  Conffile *conffile = g_hash_table_lookup (u->conffiles, shipped_path);
  g_autoptr(GChecksum) md5 = conffile != NULL ? g_checksum_new (G_CHECKSUM_MD5) : NULL;

  g_autofree char *checksum = NULL;
  g_autoptr(GError) local_error = NULL;
  if (!write_regular (u, a, entry, te, md5, &checksum, &local_error))
    return deb_fail (u, error, "%s: \"%s\": %s", u->member, pathname, local_error->message);

  if (conffile != NULL)
    {
      g_free (conffile->md5);
      conffile->md5 = g_strdup (g_checksum_get_string (md5));
    }
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

  list_append (u, shipped);

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
/* The members of the ar container. */

/* A tar member of the ar archive, read through two more libarchive
 * readers: the decompressor (the "raw" format behind every filter Debian
 * uses), which pulls the compressed blocks from the ar reader, and the tar
 * reader, which pulls the decompressed blocks from it.  Two, so that the
 * decompressor can be read to its end once the tar reader has its last
 * entry: libarchive's tar reader stops at the end-of-archive blocks, and
 * the check of the compressed stream (xz, zstd and bzip2 check their data
 * as it ends) would go unread.  libarchive does not check gzip's CRC at
 * all: it is checked here, against the stream's trailer. */
typedef struct {
  struct archive *outer;       /* the ar reader */
  struct archive *z;           /* the decompressor */
  gboolean gzip;               /* the member is gzip-compressed */
  guint8 tail[8];              /* the last 8 bytes of the compressed member */
  gsize tail_len;
  uLong crc;                   /* CRC-32 of the decompressed bytes (gzip) */
  guint64 size;                /* how many */
} Member;

/* The next data block of FROM for the reader TO: its size, 0 at the end,
 * or -1 with FROM's error set on TO. */
static la_ssize_t
pass_block (struct archive *from, struct archive *to, const void **buffer)
{
  size_t size;
  la_int64_t offset;
  int r = archive_read_data_block (from, buffer, &size, &offset);
  if (r == ARCHIVE_EOF)
    return 0;
  if (r != ARCHIVE_OK)
    {
      archive_set_error (to, archive_errno (from), "%s", archive_error_string (from));
      return -1;
    }
  return size;
}

static la_ssize_t
member_read (struct archive *z, void *client_data, const void **buffer)
{
  Member *m = client_data;
  la_ssize_t size = pass_block (m->outer, z, buffer);
  if (size <= 0)
    return size;
  /* Keep the last 8 bytes: the gzip trailer (CRC-32, size). */
  const guint8 *data = *buffer;
  if ((gsize) size >= sizeof m->tail)
    {
      memcpy (m->tail, data + size - sizeof m->tail, sizeof m->tail);
      m->tail_len = sizeof m->tail;
    }
  else
    {
      gsize keep = MIN (m->tail_len, sizeof m->tail - size);
      memmove (m->tail, m->tail + m->tail_len - keep, keep);
      memcpy (m->tail + keep, data, size);
      m->tail_len = keep + size;
    }
  return size;
}

static la_ssize_t
decompressed_read (struct archive *a, void *client_data, const void **buffer)
{
  Member *m = client_data;
  la_ssize_t size = pass_block (m->z, a, buffer);
  if (size <= 0)
    return size;
  if (m->gzip)
    m->crc = crc32 (m->crc, *buffer, size);
  m->size += size;
  return size;
}

/* The decompressor of the member being read from M->outer. */
static struct archive *
member_open_z (DebUnpack *u, Member *m, const char *member, GError **error)
{
  g_autoptr(ArchiveRead) z = archive_read_new ();
  archive_read_support_format_raw (z);
  archive_read_support_filter_none (z);
  archive_read_support_filter_gzip (z);
  archive_read_support_filter_xz (z);
  archive_read_support_filter_lzma (z);
  archive_read_support_filter_bzip2 (z);
  archive_read_support_filter_zstd (z);
  struct archive_entry *entry;
  if (archive_read_open (z, m, NULL, member_read, NULL) != ARCHIVE_OK
      || archive_read_next_header (z, &entry) != ARCHIVE_OK)
    return deb_fail (u, error, "%s: %s", member, archive_error_string (z)), NULL;
  return g_steal_pointer (&z);
}

/* The tar reader over M->z. */
static struct archive *
member_open_tar (DebUnpack *u, Member *m, const char *member, GError **error)
{
  g_autoptr(ArchiveRead) a = archive_read_new ();
  archive_read_support_format_tar (a);
  archive_read_support_format_gnutar (a);
  if (archive_read_open (a, m, NULL, decompressed_read, NULL) != ARCHIVE_OK)
    return deb_fail (u, error, "%s: %s", member, archive_error_string (a)), NULL;
  return g_steal_pointer (&a);
}

/* After the last tar entry: the rest of the decompressed stream (the tar
 * padding) read, so the decompressor checks the end of its stream; for
 * gzip, the CRC and size in the trailer compared with what came out. */
static gboolean
member_check_end (DebUnpack *u, Member *m, struct archive *a, const char *member, GError **error)
{
  const void *buf;
  la_ssize_t n;
  while ((n = decompressed_read (a, m, &buf)) > 0)
    ;
  if (n < 0)
    return deb_fail (u, error, "%s is corrupt: %s", member, archive_error_string (a));
  if (m->gzip)
    {
      guint32 crc, size;
      memcpy (&crc, m->tail, 4);
      memcpy (&size, m->tail + 4, 4);
      if (m->tail_len < 8 || GUINT32_FROM_LE (crc) != (guint32) m->crc
          || GUINT32_FROM_LE (size) != (guint32) m->size)
        return deb_fail (u, error, "%s is corrupt: its data does not match the gzip trailer's "
                         "CRC-32 and size", member);
    }
  return TRUE;
}

/* The member's tar entries, one after the other, until EOF. */
typedef gboolean (*EntryFunc) (DebUnpack *u, struct archive *a, struct archive_entry *entry,
                               GError **error);

static gboolean
member_foreach_entry (DebUnpack *u, struct archive *outer, const char *member, EntryFunc func,
                      GError **error)
{
  Member m = { .outer = outer, .crc = crc32 (0, NULL, 0) };
  g_autoptr(ArchiveRead) z = member_open_z (u, &m, member, error);
  if (z == NULL)
    return FALSE;
  m.z = z;
  m.gzip = archive_filter_code (z, 0) == ARCHIVE_FILTER_GZIP;
  g_autoptr(ArchiveRead) a = member_open_tar (u, &m, member, error);
  if (a == NULL)
    return FALSE;
  u->member = member;
  for (;;)
    {
      struct archive_entry *entry;
      int r = archive_read_next_header (a, &entry);
      if (r == ARCHIVE_EOF)
        break;
      if (r < ARCHIVE_WARN)
        return deb_fail (u, error, "%s is corrupt: %s", member, archive_error_string (a));
      if (!func (u, a, entry, error))
        return FALSE;
    }
  if (!member_check_end (u, &m, a, member, error))
    return FALSE;
  /* The compressed stream must end cleanly too. */
  if (archive_read_close (a) != ARCHIVE_OK)
    return deb_fail (u, error, "%s is corrupt: %s", member, archive_error_string (a));
  if (archive_read_close (z) != ARCHIVE_OK)
    return deb_fail (u, error, "%s is corrupt: %s", member, archive_error_string (z));
  return TRUE;
}

static GBytes *
read_entry_bytes (struct archive *a, gint64 size, GError **error)
{
  if (size < 0 || size > 64 * 1024 * 1024)
    return util_fail (error, "unreasonable size %" G_GINT64_FORMAT, size), NULL;
  g_autofree guint8 *buf = g_malloc (size + 1);
  gint64 done = 0;
  while (done < size)
    {
      la_ssize_t n = archive_read_data (a, buf + done, size - done);
      if (n < 0)
        return util_fail (error, "%s", archive_error_string (a)), NULL;
      if (n == 0)
        return util_fail (error, "truncated"), NULL;
      done += n;
    }
  return g_bytes_new_take (g_steal_pointer (&buf), size);
}

static gboolean
control_entry (DebUnpack *u, struct archive *a, struct archive_entry *entry, GError **error)
{
  const char *pathname = archive_entry_pathname (entry);
  g_autoptr(GPtrArray) components = entry_components (u, u->member, pathname ? pathname : "", error);
  if (components == NULL)
    return FALSE;
  if (components->len == 0 && archive_entry_filetype (entry) == AE_IFDIR)
    return TRUE;
  if (components->len != 1 || archive_entry_filetype (entry) != AE_IFREG)
    return deb_fail (u, error, "%s entry \"%s\" is not a plain file at the top", u->member,
                     pathname);
  const char *name = components->pdata[0];
  if (g_str_equal (name, "list"))
    return deb_fail (u, error, "control.tar has a \"list\" member, which dpkg reserves");
  /* dpkg installs no member whose name has a dot: "x.postinst" would be
   * var/lib/dpkg/info/PKG.x.postinst, the script of a package "PKG.x". */
  if (strchr (name, '.') != NULL)
    return TRUE;
  if (strlen (name) > DEB_CONTROL_NAME_MAX)
    return deb_fail (u, error, "%s entry \"%s\" has a name longer than %d bytes, which dpkg "
                     "refuses", u->member, pathname, DEB_CONTROL_NAME_MAX);

  g_autoptr(GError) local_error = NULL;
  g_autoptr(GBytes) data = read_entry_bytes (a, archive_entry_size (entry), &local_error);
  if (data == NULL)
    return deb_fail (u, error, "%s entry \"%s\": %s", u->member, pathname, local_error->message);
  ControlMember *m = g_new0 (ControlMember, 1);
  m->data = g_steal_pointer (&data);
  m->mode = archive_entry_perm (entry);
  g_hash_table_replace (u->control, g_strdup (name), m);
  return TRUE;
}

/* The fields that name files, refs and status stanzas, checked as dpkg
 * checks them: Package, Version and Architecture by Debian's grammar
 * ("Package: a/b" would make info/a/b.list), Multi-Arch one of dpkg's four
 * values, and none of the fields only dpkg's status file may hold (the
 * stanza would carry them: "Triggers-Awaited: libc-bin"). */
static gboolean
control_check_fields (DebUnpack *u, GError **error)
{
  static const struct {
    const char *name;
    const char *(*problem) (const char *value);
  } checked[] = {
    { "Package", debpolicy_name_problem },
    { "Version", debpolicy_version_problem },
    { "Architecture", debpolicy_arch_problem },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (checked); i++)
    {
      g_autofree char *value = control_get_word (u->fields, checked[i].name);
      if (value == NULL)
        return deb_fail (u, error, "control file has no %s field", checked[i].name);
      const char *problem = checked[i].problem (value);
      if (problem != NULL)
        {
          g_autofree char *shown = util_shown_path (value);
          return deb_fail (u, error, "control file: %s \"%s\" %s", checked[i].name, shown,
                           problem);
        }
    }
  static const char *const status_only[] = { "Status", "Config-Version", "Triggers-Pending",
                                             "Triggers-Awaited", NULL };
  for (guint i = 0; i < u->fields->len; i++)
    for (const char *const *f = status_only; *f != NULL; f++)
      if (g_ascii_strcasecmp (((ControlField *) u->fields->pdata[i])->name, *f) == 0)
        return deb_fail (u, error, "control file: a %s field, which only dpkg's status file "
                         "may hold (dpkg refuses it in a package)", *f);
  static const char *const multi_arch[] = { "no", "same", "foreign", "allowed", NULL };
  g_autofree char *ma = control_get_word (u->fields, "Multi-Arch");
  if (ma != NULL && !g_strv_contains (multi_arch, ma))
    {
      g_autofree char *shown = util_shown_path (ma);
      return deb_fail (u, error, "control file: Multi-Arch \"%s\" is not one of no, same, "
                       "foreign, allowed", shown);
    }
  return TRUE;
}

/* After control.tar: the fields, and which files are conffiles. */
static gboolean
control_load (DebUnpack *u, GError **error)
{
  ControlMember *control = g_hash_table_lookup (u->control, "control");
  if (control == NULL)
    return deb_fail (u, error, "control.tar has no control file");
  gsize len;
  const char *text = g_bytes_get_data (control->data, &len);
  g_autoptr(GError) local_error = NULL;
  u->fields = control_parse (text, len, &local_error);
  if (u->fields == NULL)
    return deb_fail (u, error, "control file: %s", local_error->message);
  if (!control_check_fields (u, error))
    return FALSE;

  ControlMember *conffiles = g_hash_table_lookup (u->control, "conffiles");
  if (conffiles == NULL)
    return TRUE;
  g_autofree char *cf = g_strndup (g_bytes_get_data (conffiles->data, NULL),
                                   g_bytes_get_size (conffiles->data));
  g_auto(GStrv) lines = g_strsplit (cf, "\n", -1);
  for (char **l = lines; *l; l++)
    {
      g_auto(GStrv) words = g_strsplit_set (g_strstrip (*l), " \t", -1);
      guint n = g_strv_length (words);
      if (n == 0 || *words[0] == '\0')
        continue;
      /* "[flag ...] /path" (dpkg >= 1.20.1 allows "remove-on-upgrade") */
      const char *path = words[n - 1];
      if (path[0] != '/')
        return deb_fail (u, error, "conffiles: \"%s\" is not an absolute path", path);
      g_autofree char *normalized = NULL;
      {
        g_autoptr(GPtrArray) c = entry_components (u, "conffiles", path + 1, error);
        if (c == NULL)
          return FALSE;
        normalized = util_join_tree_path (c, c->len);
      }
      if (g_hash_table_contains (u->conffiles, normalized))
        continue;
      Conffile *c = g_new0 (Conffile, 1);
      for (guint i = 0; i + 1 < n; i++)
        {
          if (*words[i] == '\0')
            continue;
          /* dpkg knows one flag, and refuses others (they go into the
           * status file's Conffiles: lines). */
          if (!g_str_equal (words[i], "remove-on-upgrade"))
            {
              conffile_free (c);
              g_autofree char *shown = util_shown_path (words[i]);
              g_autofree char *shown_path = util_shown_path (path);
              return deb_fail (u, error, "conffiles: unknown flag \"%s\" for \"%s\" (dpkg knows "
                               "remove-on-upgrade only)", shown, shown_path);
            }
          char *flags = c->flags ? g_strconcat (c->flags, " ", words[i], NULL) : g_strdup (words[i]);
          g_free (c->flags);
          c->flags = flags;
        }
      g_ptr_array_add (u->conffile_order, g_strdup (normalized));
      g_hash_table_insert (u->conffiles, g_steal_pointer (&normalized), c);
    }
  return TRUE;
}

static gboolean
data_entry (DebUnpack *u, struct archive *a, struct archive_entry *entry, GError **error)
{
  return unpack_data_entry (u, a, entry, error);
}

static gboolean
check_debian_binary (DebUnpack *u, struct archive *a, GError **error)
{
  char buf[64] = "";
  la_ssize_t n = archive_read_data (a, buf, sizeof buf - 1);
  if (n < 0)
    return deb_fail (u, error, "not a Debian package: %s", archive_error_string (a));
  buf[n] = '\0';
  if (!g_str_has_prefix (buf, "2."))
    {
      g_strdelimit (buf, "\n", ' ');
      return deb_fail (u, error, "unsupported .deb format \"%s\" (debian-binary must say 2.x)",
                       g_strstrip (buf));
    }
  return TRUE;
}

static gboolean
member_is (const char *name, const char *base)
{
  static const char *const exts[] = { "", ".gz", ".xz", ".zst", ".bz2", ".lzma", NULL };
  if (!g_str_has_prefix (name, base))
    return FALSE;
  return g_strv_contains (exts, name + strlen (base));
}

static gboolean
read_deb (DebUnpack *u, const char *path, GError **error)
{
  g_autoptr(ArchiveRead) ar = archive_read_new ();
  archive_read_support_format_ar (ar);
  if (archive_read_open_filename (ar, path, 64 * 1024) != ARCHIVE_OK)
    return deb_fail (u, error, "not a Debian package (%s)", archive_error_string (ar));

  gboolean seen_binary = FALSE, seen_control = FALSE, seen_data = FALSE;
  for (guint index = 0;; index++)
    {
      struct archive_entry *entry;
      int r = archive_read_next_header (ar, &entry);
      if (r == ARCHIVE_EOF)
        break;
      if (r < ARCHIVE_WARN)
        {
          if (index == 0)
            return deb_fail (u, error, "not a Debian package (%s)", archive_error_string (ar));
          return deb_fail (u, error, "corrupt ar archive: %s", archive_error_string (ar));
        }
      g_autofree char *member = g_strdup (archive_entry_pathname (entry));
      if (member == NULL)
        return deb_fail (u, error, "corrupt ar archive: a member without a name");
      if (g_str_has_suffix (member, "/"))  /* GNU ar terminates names with "/" */
        member[strlen (member) - 1] = '\0';

      if (index == 0)
        {
          if (!g_str_equal (member, "debian-binary"))
            return deb_fail (u, error, "not a Debian package (the first member is \"%s\", not "
                             "debian-binary)", member);
          if (!check_debian_binary (u, ar, error))
            return FALSE;
          seen_binary = TRUE;
        }
      else if (member[0] == '_')
        continue;  /* reserved for local additions; dpkg ignores them too */
      else if (!seen_control && member_is (member, "control.tar"))
        {
          if (!member_foreach_entry (u, ar, member, control_entry, error))
            return FALSE;
          if (!control_load (u, error))
            return FALSE;
          seen_control = TRUE;
        }
      else if (seen_control && !seen_data && member_is (member, "data.tar"))
        {
          if (!member_foreach_entry (u, ar, member, data_entry, error))
            return FALSE;
          seen_data = TRUE;
        }
      else
        return deb_fail (u, error, "unexpected member \"%s\" in the ar archive (expected "
                         "debian-binary, control.tar, data.tar in that order)", member);
    }
  if (!seen_binary)
    return deb_fail (u, error, "not a Debian package (an empty ar archive)");
  if (!seen_control)
    return deb_fail (u, error, "truncated or corrupt package: no control.tar member");
  if (!seen_data)
    return deb_fail (u, error, "truncated or corrupt package: no data.tar member");
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* The dpkg metadata written into the tree. */

static gboolean
add_metadata_file (DebUnpack *u, const char *path, GBytes *data, guint32 mode, GError **error)
{
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

static GBytes *
status_stanza (DebUnpack *u, GError **error)
{
  GString *out = g_string_new ("");
  g_autoptr(GString) conffiles = g_string_new ("");
  for (guint i = 0; i < u->conffile_order->len; i++)
    {
      const char *path = u->conffile_order->pdata[i];
      Conffile *c = g_hash_table_lookup (u->conffiles, path);
      /* dpkg >= 1.20.1: a conffile flagged remove-on-upgrade is not
       * shipped, and dpkg records it with the hash "newconffile" (procps in
       * trixie: /etc/sysctl.conf). */
      gboolean removed = c->flags != NULL && strstr (c->flags, "remove-on-upgrade") != NULL;
      if (c->md5 == NULL && !removed)
        {
          g_string_free (out, TRUE);
          return deb_fail (u, error, "conffile \"%s\" is not a file in data.tar", path), NULL;
        }
      g_string_append_printf (conffiles, "\n %s %s%s%s", path,
                              c->md5 != NULL ? c->md5 : "newconffile", c->flags ? " " : "",
                              c->flags ? c->flags : "");
    }

  for (const char *const *name = status_field_order; *name; name++)
    {
      if (g_str_equal (*name, "Status"))
        append_field (out, *name, "install ok unpacked");
      else if (g_str_equal (*name, "Conffiles"))
        {
          if (conffiles->len > 0)
            append_field (out, *name, conffiles->str);
        }
      else
        {
          const char *value = control_get (u->fields, *name);
          if (value != NULL)
            append_field (out, *name, value);
        }
    }
  for (guint i = 0; i < u->fields->len; i++)
    {
      ControlField *f = u->fields->pdata[i];
      gboolean known = FALSE;
      for (const char *const *name = status_field_order; *name && !known; name++)
        known = g_ascii_strcasecmp (*name, f->name) == 0;
      if (!known)
        append_field (out, f->name, f->value);
    }
  return g_string_free_to_bytes (out);
}

static gboolean
add_dpkg_metadata (DebUnpack *u, DebInfo *info, GError **error)
{
  g_autofree char *base = deb_info_basename (info->package, info->architecture, info->multi_arch);

  g_autoptr(GList) names = g_hash_table_get_keys (u->control);
  names = g_list_sort (names, (GCompareFunc) strcmp);
  for (GList *l = names; l; l = l->next)
    {
      const char *name = l->data;
      if (g_str_equal (name, "control"))
        continue;  /* dpkg keeps it only in the status file */
      ControlMember *m = g_hash_table_lookup (u->control, name);
      g_autofree char *path = g_strdup_printf ("var/lib/dpkg/info/%s.%s", base, name);
      if (!add_metadata_file (u, path, m->data, m->mode, error))
        return FALSE;
    }

  g_autofree char *list_path = g_strdup_printf ("var/lib/dpkg/info/%s.list", base);
  g_autoptr(GBytes) list = g_bytes_new (u->list->str, u->list->len);
  if (!add_metadata_file (u, list_path, list, 0644, error))
    return FALSE;

  g_autoptr(GBytes) stanza = status_stanza (u, error);
  if (stanza == NULL)
    return FALSE;
  g_autofree char *status_path = g_strdup_printf (DEB_STATUS_DIR "/%s:%s", info->package,
                                                  info->architecture);
  return add_metadata_file (u, status_path, stanza, 0644, error);
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
  if (info->skipped)
    g_ptr_array_unref (info->skipped);
  g_free (info);
}

char *
deb_info_basename (const char *name, const char *arch, const char *multi_arch)
{
  if (multi_arch != NULL && g_str_equal (multi_arch, "same"))
    return g_strdup_printf ("%s:%s", name, arch);
  return g_strdup (name);
}

/* Read the .deb into U's tree; its DebInfo, or NULL. */
static DebInfo *
unpack (DebUnpack *u, const char *path, guint64 size, GError **error)
{
  u->default_dirmeta = write_dirmeta (u, 0, 0, 0755, NULL, error);
  if (u->default_dirmeta == NULL)
    return NULL;
  u->root = deb_dir_new (u->default_dirmeta);
  if (!read_deb (u, path, error))
    return NULL;
  g_autoptr(DebInfo) info = g_new0 (DebInfo, 1);
  info->package = control_get_word (u->fields, "Package");
  info->version = control_get_word (u->fields, "Version");
  info->architecture = control_get_word (u->fields, "Architecture");
  info->multi_arch = control_get_word (u->fields, "Multi-Arch");
  if (info->multi_arch == NULL)
    info->multi_arch = g_strdup ("no");
  info->sha256 = g_strdup (u->opts->sha256);
  info->size = size;
  info->merged_usr = u->opts->merged_usr;
  if (!add_dpkg_metadata (u, info, error))
    return NULL;
  info->skipped = g_steal_pointer (&u->skipped);
  return g_steal_pointer (&info);
}

DebInfo *
deb_unpack (DebSink *sink, const char *path, const DebUnpackOptions *opts, guint64 timestamp,
            char **out_commit, GError **error)
{
  struct stat st;
  if (stat (path, &st) < 0)
    {
      util_fail (error, "%s: %s", opts->display_name ? opts->display_name : path, g_strerror (errno));
      return NULL;
    }

  DebUnpack u = {
    .sink = sink,
    .name = opts->display_name ? opts->display_name : path,
    .opts = opts,
    .dirmeta_cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free),
    .headers = objects_headers_new (),
    .control = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                      (GDestroyNotify) control_member_free),
    .conffiles = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) conffile_free),
    .conffile_order = g_ptr_array_new_with_free_func (g_free),
    .list = g_string_new (""),
    .links = tarentry_links_new (),
    .symlinks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL),
    .explicit_dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL),
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

/* ------------------------------------------------------------------------ */
/* The sink over an ObjectWriter. */

typedef struct {
  DebSink sink;
  ObjectWriter *writer;
} WriterSink;

static char *
writer_regular (DebSink *sink, GHashTable *headers, guint32 uid, guint32 gid, guint32 mode,
                GVariant *xattrs, const guint8 *data, gsize size, GError **error)
{
  return object_writer_regular (((WriterSink *) sink)->writer, headers, uid, gid, mode, xattrs,
                                data, size, error);
}

static char *
writer_regular_stream (DebSink *sink, guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs,
                       guint64 size, ObjectWriterRead read, gpointer user_data, GError **error)
{
  return object_writer_regular_stream (((WriterSink *) sink)->writer, uid, gid, mode, xattrs,
                                       size, read, user_data, error);
}

static char *
writer_symlink (DebSink *sink, guint32 uid, guint32 gid, const char *target, GVariant *xattrs,
                GError **error)
{
  return object_writer_symlink (((WriterSink *) sink)->writer, uid, gid, target, xattrs, error);
}

static char *
writer_metadata (DebSink *sink, ObjectsType type, GVariant *object, GError **error)
{
  return object_writer_metadata (((WriterSink *) sink)->writer, type, object, error);
}

DebSink *
deb_sink_for_writer (ObjectWriter *w)
{
  WriterSink *ws = g_new0 (WriterSink, 1);
  ws->sink = (DebSink) { writer_regular, writer_regular_stream, writer_symlink, writer_metadata };
  ws->writer = w;
  return &ws->sink;
}
