/* debmeta.c — a package's dpkg metadata, from control.tar to what dpkg's
 * database holds for it: the control file's fields (parsed, checked as
 * dpkg checks them), the conffiles and their md5sums, the info files, the
 * .list file and the status stanza.  See debmeta.h. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <string.h>

#include "deb/debmeta.h"
#include "base/debpolicy.h"
#include "barestore/tarentry.h"
#include "base/util.h"

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


/* ------------------------------------------------------------------------ */
/* The state. */

struct DebMeta {
  const char *name;                 /* the .deb, for messages */
  GHashTable *control;              /* member name -> ControlMember */
  GPtrArray *fields;                /* of the control file */
  GHashTable *conffiles;            /* "/etc/foo" -> Conffile */
  GPtrArray *conffile_order;        /* shipped paths, as listed */
  GString *list;                    /* the .list file */
  GString *md5sums;                 /* made as dpkg makes it when the package ships none */
  GHashTable *md5_of;               /* shipped path -> md5, for hard links */
};

DebMeta *
debmeta_new (const char *name)
{
  DebMeta *meta = g_new0 (DebMeta, 1);
  meta->name = name;
  meta->control = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                         (GDestroyNotify) control_member_free);
  meta->conffiles = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                           (GDestroyNotify) conffile_free);
  meta->conffile_order = g_ptr_array_new_with_free_func (g_free);
  meta->list = g_string_new ("");
  meta->md5sums = g_string_new ("");
  meta->md5_of = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return meta;
}

void
debmeta_free (DebMeta *meta)
{
  if (meta == NULL)
    return;
  g_hash_table_unref (meta->control);
  g_clear_pointer (&meta->fields, g_ptr_array_unref);
  g_hash_table_unref (meta->conffiles);
  g_ptr_array_unref (meta->conffile_order);
  g_string_free (meta->list, TRUE);
  g_string_free (meta->md5sums, TRUE);
  g_hash_table_unref (meta->md5_of);
  g_free (meta);
}

static gboolean
meta_fail (DebMeta *meta, GError **error, const char *format, ...) G_GNUC_PRINTF (3, 4);

/* "FILE: MESSAGE" */
static gboolean
meta_fail (DebMeta *meta, GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  return util_fail (error, "%s: %s", meta->name, message);
}

/* PATHNAME as tree components, or an error naming WHAT it is an entry of. */
static GPtrArray *
meta_components (DebMeta *meta, const char *what, const char *pathname, GError **error)
{
  const char *problem;
  GPtrArray *components = tarentry_components (pathname, &problem);
  if (components == NULL)
    {
      g_autofree char *shown = util_shown_path (pathname);
      meta_fail (meta, error, "%s entry \"%s\" %s", what, shown, problem);
    }
  return components;
}

char *
debmeta_field_word (DebMeta *meta, const char *name)
{
  return control_get_word (meta->fields, name);
}

char *
debmeta_control_stanza (DebMeta *meta, const char *const *leave_out)
{
  GString *out = g_string_new ("");
  for (guint i = 0; i < meta->fields->len; i++)
    {
      ControlField *f = meta->fields->pdata[i];
      gboolean left_out = FALSE;
      for (const char *const *l = leave_out; l != NULL && *l != NULL; l++)
        left_out = left_out || g_ascii_strcasecmp (f->name, *l) == 0;
      if (!left_out)
        append_field (out, f->name, f->value);
    }
  return g_string_free (out, FALSE);
}

/* ------------------------------------------------------------------------ */
/* control.tar. */

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

gboolean
debmeta_control_entry (DebMeta *meta, const char *member, struct archive *a,
                       struct archive_entry *entry, GError **error)
{
  const char *pathname = archive_entry_pathname (entry);
  g_autoptr(GPtrArray) components = meta_components (meta, member, pathname ? pathname : "", error);
  if (components == NULL)
    return FALSE;
  if (components->len == 0 && archive_entry_filetype (entry) == AE_IFDIR)
    return TRUE;
  if (components->len != 1 || archive_entry_filetype (entry) != AE_IFREG)
    return meta_fail (meta, error, "%s entry \"%s\" is not a plain file at the top", member,
                     pathname);
  const char *name = components->pdata[0];
  if (g_str_equal (name, "list"))
    return meta_fail (meta, error, "control.tar has a \"list\" member, which dpkg reserves");
  /* dpkg installs no member whose name has a dot: "x.postinst" would be
   * var/lib/dpkg/info/PKG.x.postinst, the script of a package "PKG.x". */
  if (strchr (name, '.') != NULL)
    return TRUE;
  if (strlen (name) > DEB_CONTROL_NAME_MAX)
    return meta_fail (meta, error, "%s entry \"%s\" has a name longer than %d bytes, which dpkg "
                      "refuses", member, pathname, DEB_CONTROL_NAME_MAX);

  g_autoptr(GError) local_error = NULL;
  g_autoptr(GBytes) data = read_entry_bytes (a, archive_entry_size (entry), &local_error);
  if (data == NULL)
    return meta_fail (meta, error, "%s entry \"%s\": %s", member, pathname, local_error->message);
  ControlMember *m = g_new0 (ControlMember, 1);
  m->data = g_steal_pointer (&data);
  m->mode = archive_entry_perm (entry);
  g_hash_table_replace (meta->control, g_strdup (name), m);
  return TRUE;
}

/* The fields that name files, refs and status stanzas, checked as dpkg
 * checks them: Package, Version and Architecture by Debian's grammar
 * ("Package: a/b" would make info/a/b.list), Multi-Arch one of dpkg's four
 * values, and none of the fields only dpkg's status file may hold (the
 * stanza would carry them: "Triggers-Awaited: libc-bin"). */
static gboolean
control_check_fields (DebMeta *meta, GError **error)
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
      g_autofree char *value = control_get_word (meta->fields, checked[i].name);
      if (value == NULL)
        return meta_fail (meta, error, "control file has no %s field", checked[i].name);
      const char *problem = checked[i].problem (value);
      if (problem != NULL)
        {
          g_autofree char *shown = util_shown_path (value);
          return meta_fail (meta, error, "control file: %s \"%s\" %s", checked[i].name, shown,
                           problem);
        }
    }
  static const char *const status_only[] = { "Status", "Config-Version", "Triggers-Pending",
                                             "Triggers-Awaited", NULL };
  for (guint i = 0; i < meta->fields->len; i++)
    for (const char *const *f = status_only; *f != NULL; f++)
      if (g_ascii_strcasecmp (((ControlField *) meta->fields->pdata[i])->name, *f) == 0)
        return meta_fail (meta, error, "control file: a %s field, which only dpkg's status file "
                          "may hold (dpkg refuses it in a package)", *f);
  static const char *const multi_arch[] = { "no", "same", "foreign", "allowed", NULL };
  g_autofree char *ma = control_get_word (meta->fields, "Multi-Arch");
  if (ma != NULL && !g_strv_contains (multi_arch, ma))
    {
      g_autofree char *shown = util_shown_path (ma);
      return meta_fail (meta, error, "control file: Multi-Arch \"%s\" is not one of no, same, "
                        "foreign, allowed", shown);
    }
  return TRUE;
}

gboolean
debmeta_load (DebMeta *meta, GError **error)
{
  ControlMember *control = g_hash_table_lookup (meta->control, "control");
  if (control == NULL)
    return meta_fail (meta, error, "control.tar has no control file");
  gsize len;
  const char *text = g_bytes_get_data (control->data, &len);
  g_autoptr(GError) local_error = NULL;
  meta->fields = control_parse (text, len, &local_error);
  if (meta->fields == NULL)
    return meta_fail (meta, error, "control file: %s", local_error->message);
  if (!control_check_fields (meta, error))
    return FALSE;

  ControlMember *conffiles = g_hash_table_lookup (meta->control, "conffiles");
  if (conffiles == NULL)
    return TRUE;
  g_autofree char *cf = g_strndup (g_bytes_get_data (conffiles->data, NULL),
                                   g_bytes_get_size (conffiles->data));
  g_auto(GStrv) lines = g_strsplit (cf, "\n", -1);
  for (char **l = lines; *l; l++)
    {
      /* "[FLAG ]/PATH", as dpkg reads it: the path is the rest of the line
       * (it may hold spaces); whitespace around the line is dropped. */
      char *line = g_strstrip (*l);
      if (*line == '\0')
        continue;
      g_autofree char *flags = NULL;
      const char *path = line;
      if (*path != '/')
        {
          const char *space = strchr (path, ' ');
          g_autofree char *flag = space != NULL ? g_strndup (path, space - path) : g_strdup (path);
          path = space != NULL ? space + 1 : "";
          /* dpkg knows one flag, and refuses others (they go into the
           * status file's Conffiles: lines). */
          if (!g_str_equal (flag, "remove-on-upgrade"))
            {
              g_autofree char *shown = util_shown_path (flag);
              g_autofree char *shown_path = util_shown_path (path);
              return meta_fail (meta, error, "conffiles: unknown flag \"%s\" for \"%s\" (dpkg knows "
                                "remove-on-upgrade only)", shown, shown_path);
            }
          flags = g_steal_pointer (&flag);
        }
      if (path[0] != '/')
        {
          g_autofree char *shown = util_shown_path (line);
          return meta_fail (meta, error, "conffiles: \"%s\" is not an absolute path", shown);
        }
      g_autofree char *normalized = NULL;
      {
        g_autoptr(GPtrArray) c = meta_components (meta, "conffiles", path + 1, error);
        if (c == NULL)
          return FALSE;
        normalized = util_join_tree_path (c, c->len);
      }
      if (g_hash_table_contains (meta->conffiles, normalized))
        continue;
      Conffile *c = g_new0 (Conffile, 1);
      c->flags = g_steal_pointer (&flags);
      g_ptr_array_add (meta->conffile_order, g_strdup (normalized));
      g_hash_table_insert (meta->conffiles, g_steal_pointer (&normalized), c);
    }
  return TRUE;
}


/* ------------------------------------------------------------------------ */
/* Conffiles, as data.tar delivers them. */

gboolean
debmeta_is_conffile (DebMeta *meta, const char *shipped_path)
{
  return g_hash_table_contains (meta->conffiles, shipped_path);
}

void
debmeta_conffile_set_md5 (DebMeta *meta, const char *shipped_path, const char *md5)
{
  Conffile *c = g_hash_table_lookup (meta->conffiles, shipped_path);
  g_return_if_fail (c != NULL);
  g_free (c->md5);
  c->md5 = g_strdup (md5);
}

gboolean
debmeta_conffile_hardlink (DebMeta *meta, const char *shipped_path,
                           const char *target_shipped_path, const char *target, GError **error)
{
  Conffile *conffile = g_hash_table_lookup (meta->conffiles, shipped_path);
  if (conffile == NULL)
    return TRUE;
  Conffile *target_conffile = g_hash_table_lookup (meta->conffiles, target_shipped_path);
  if (target_conffile == NULL || target_conffile->md5 == NULL)
    return meta_fail (meta, error, "conffile \"%s\" is a hard link to \"%s\", which is not a "
                      "conffile", shipped_path, target);
  g_free (conffile->md5);
  conffile->md5 = g_strdup (target_conffile->md5);
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* The files in the tree. */

void
debmeta_list_append (DebMeta *meta, GPtrArray *shipped)
{
  if (shipped->len == 0)
    g_string_append (meta->list, "/.\n");
  else
    {
      g_autofree char *p = util_join_tree_path (shipped, shipped->len);
      g_string_append (meta->list, p);
      g_string_append_c (meta->list, '\n');
    }
}


static GBytes *
status_stanza (DebMeta *meta, GError **error)
{
  GString *out = g_string_new ("");
  g_autoptr(GString) conffiles = g_string_new ("");
  for (guint i = 0; i < meta->conffile_order->len; i++)
    {
      const char *path = meta->conffile_order->pdata[i];
      Conffile *c = g_hash_table_lookup (meta->conffiles, path);
      /* dpkg >= 1.20.1: a conffile flagged remove-on-upgrade is not
       * shipped, and dpkg records it with the hash "newconffile" (procps in
       * trixie: /etc/sysctl.conf). */
      gboolean removed = c->flags != NULL && strstr (c->flags, "remove-on-upgrade") != NULL;
      if (c->md5 == NULL && !removed)
        {
          g_string_free (out, TRUE);
          return meta_fail (meta, error, "conffile \"%s\" is not a file in data.tar", path), NULL;
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
          const char *value = control_get (meta->fields, *name);
          if (value != NULL)
            append_field (out, *name, value);
        }
    }
  for (guint i = 0; i < meta->fields->len; i++)
    {
      ControlField *f = meta->fields->pdata[i];
      gboolean known = FALSE;
      for (const char *const *name = status_field_order; *name && !known; name++)
        known = g_ascii_strcasecmp (*name, f->name) == 0;
      if (!known)
        append_field (out, f->name, f->value);
    }
  return g_string_free_to_bytes (out);
}


char *
deb_info_basename (const char *name, const char *arch, const char *multi_arch)
{
  if (multi_arch != NULL && g_str_equal (multi_arch, "same"))
    return g_strdup_printf ("%s:%s", name, arch);
  return g_strdup (name);
}

gboolean
debmeta_wants_md5sums (DebMeta *meta)
{
  return !g_hash_table_contains (meta->control, "md5sums");
}

void
debmeta_md5sum_add (DebMeta *meta, const char *shipped_path, const char *md5)
{
  const char *relative = shipped_path + (shipped_path[0] == '/');
  g_string_append_printf (meta->md5sums, "%s  %s\n", md5, relative);
  g_hash_table_replace (meta->md5_of, g_strdup (shipped_path), g_strdup (md5));
}

void
debmeta_md5sum_hardlink (DebMeta *meta, const char *shipped_path, const char *target_shipped_path)
{
  const char *md5 = g_hash_table_lookup (meta->md5_of, target_shipped_path);
  if (md5 != NULL)
    debmeta_md5sum_add (meta, shipped_path, md5);
}

gboolean
debmeta_foreach_file (DebMeta *meta, const char *package, const char *arch,
                      const char *multi_arch, DebMetaFileFunc func, gpointer user_data,
                      GError **error)
{
  g_autofree char *base = deb_info_basename (package, arch, multi_arch);

  g_autoptr(GList) names = g_hash_table_get_keys (meta->control);
  /* Even with no regular file: dpkg --unpack then writes an empty one. */
  if (debmeta_wants_md5sums (meta))
    names = g_list_prepend (names, (gpointer) "md5sums");
  names = g_list_sort (names, (GCompareFunc) strcmp);
  for (GList *l = names; l; l = l->next)
    {
      const char *name = l->data;
      if (g_str_equal (name, "control"))
        continue;  /* dpkg keeps it only in the status file */
      ControlMember *m = g_hash_table_lookup (meta->control, name);
      g_autoptr(GBytes) made = m == NULL ? g_bytes_new (meta->md5sums->str, meta->md5sums->len)
                                         : NULL;
      g_autofree char *path = g_strdup_printf ("var/lib/dpkg/info/%s.%s", base, name);
      if (!func (user_data, path, m != NULL ? m->data : made, m != NULL ? m->mode : 0644, error))
        return FALSE;
    }

  g_autofree char *list_path = g_strdup_printf ("var/lib/dpkg/info/%s.list", base);
  g_autoptr(GBytes) list = g_bytes_new (meta->list->str, meta->list->len);
  if (!func (user_data, list_path, list, 0644, error))
    return FALSE;

  g_autoptr(GBytes) stanza = status_stanza (meta, error);
  if (stanza == NULL)
    return FALSE;
  g_autofree char *status_path = g_strdup_printf (DEB_STATUS_DIR "/%s:%s", package, arch);
  return func (user_data, status_path, stanza, 0644, error);
}
