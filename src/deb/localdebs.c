/* localdebs.c — local .deb files into a Packages index for "lock"; see
 * localdebs.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "apt/cache.h"
#include "apt/lockfile.h"
#include "base/util.h"
#include "deb/debfile.h"
#include "deb/debmeta.h"
#include "deb/localdebs.h"

/* Reading stops once control.tar is read: this error says so. */
static G_DEFINE_QUARK (apt2ostree-localdebs-stop-quark, local_debs_stop)

void
local_deb_free (LocalDeb *deb)
{
  if (deb == NULL)
    return;
  g_free (deb->path);
  g_free (deb->name);
  g_free (deb->version);
  g_free (deb->architecture);
  g_free (deb->stanza);
  g_free (deb->sha256);
  g_free (deb);
}

static gboolean
control_entry (gpointer user_data, const char *member, struct archive *a,
               struct archive_entry *entry, GError **error)
{
  return debmeta_control_entry (user_data, member, a, entry, error);
}

static gboolean
control_done (gpointer user_data, GError **error)
{
  if (!debmeta_load (user_data, error))
    return FALSE;
  g_set_error_literal (error, local_debs_stop_quark (), 0, "stop");
  return FALSE;
}

/* DEB's control fields, checked as dpkg checks them. */
static gboolean
read_control (LocalDeb *deb, GError **error)
{
  /* An index adds these itself; a control file has no business with them. */
  static const char *const index_fields[] = { "Filename", "Size", "MD5sum", "SHA1", "SHA256",
                                              "SHA512", NULL };
  static const DebFileReader reader = { control_entry, control_done, NULL };
  g_autoptr(DebMeta) meta = debmeta_new (deb->path);
  g_autoptr(GError) local_error = NULL;
  if (debfile_read (deb->path, deb->path, &reader, meta, &local_error))
    return util_fail (error, "%s: truncated or corrupt package: no control.tar member", deb->path);
  if (!g_error_matches (local_error, local_debs_stop_quark (), 0))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  deb->name = debmeta_field_word (meta, "Package");
  deb->version = debmeta_field_word (meta, "Version");
  deb->architecture = debmeta_field_word (meta, "Architecture");
  deb->stanza = debmeta_control_stanza (meta, index_fields);
  return TRUE;
}

LocalDeb *
local_deb_read (const char *path, GError **error)
{
  struct stat st;
  if (stat (path, &st) < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno)), NULL;
  if (!S_ISREG (st.st_mode))
    return util_fail (error, "%s: not a regular file", path), NULL;
  g_autoptr(LocalDeb) deb = g_new0 (LocalDeb, 1);
  deb->path = g_strdup (path);
  deb->size = st.st_size;
  if ((deb->sha256 = cache_sha256_file (path, error)) == NULL || !read_control (deb, error))
    return NULL;
  return g_steal_pointer (&deb);
}

static int
compare_debs (gconstpointer a, gconstpointer b)
{
  const LocalDeb *da = *(LocalDeb **) a, *db = *(LocalDeb **) b;
  int c = strcmp (da->name, db->name);
  if (c == 0)
    c = strcmp (da->version, db->version);
  return c != 0 ? c : strcmp (da->architecture, db->architecture);
}

/* DEBS sorted by package; the same package twice is an error. */
static gboolean
check_unique (GPtrArray *debs, const char *dir, GError **error)
{
  g_autoptr(GPtrArray) sorted = g_ptr_array_sized_new (debs->len);  /* borrows */
  for (guint i = 0; i < debs->len; i++)
    g_ptr_array_add (sorted, debs->pdata[i]);
  g_ptr_array_sort (sorted, compare_debs);
  for (guint i = 1; i < sorted->len; i++)
    {
      LocalDeb *a = sorted->pdata[i - 1], *b = sorted->pdata[i];
      if (compare_debs (&a, &b) == 0)
        return util_fail (error, "%s: %s and %s are the same package (%s %s %s); keep one",
                          dir, a->path, b->path, a->name, a->version, a->architecture);
    }
  return TRUE;
}

/* PATH, an entry of the directory REAL_DIR (resolved), is a file of that
 * directory: when it is a symlink, to a file inside it.  A link to
 * elsewhere would be recorded as a .deb of the directory while its bytes
 * come from any file the link names. */
static gboolean
check_inside (const char *path, const char *real_dir, GError **error)
{
  struct stat st;
  if (lstat (path, &st) < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  if (!S_ISLNK (st.st_mode))
    return TRUE;
  g_autofree char *real = realpath (path, NULL);
  if (real == NULL)
    return util_fail (error, "%s: a symlink that leads nowhere: %s", path, g_strerror (errno));
  gsize len = strlen (real_dir);
  gboolean inside = strncmp (real, real_dir, len) == 0
                    && (real[len] == '/' || (len == 1 && real_dir[0] == '/'));
  if (!inside)
    {
      g_autofree char *shown = util_shown_path (real);
      return util_fail (error, "%s: a symlink to %s, outside the directory; put the .deb itself "
                        "in the directory (or give its own directory with --debs)", path, shown);
    }
  return TRUE;
}

GPtrArray *
local_debs_read_dir (const char *dir, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GDir) d = g_dir_open (dir, 0, &local_error);
  if (d == NULL)
    return util_fail (error, "local .debs %s: %s", dir, local_error->message), NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (name, ".deb"))
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, util_compare_strings);
  if (names->len == 0)
    return util_fail (error, "local .debs %s: the directory holds no .deb file", dir), NULL;

  g_autofree char *real_dir = realpath (dir, NULL);
  if (real_dir == NULL)
    return util_fail (error, "local .debs %s: %s", dir, g_strerror (errno)), NULL;
  g_autoptr(GPtrArray) debs = g_ptr_array_new_with_free_func ((GDestroyNotify) local_deb_free);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (dir, names->pdata[i], NULL);
      if (!check_inside (path, real_dir, error))
        return NULL;
      LocalDeb *deb = local_deb_read (path, error);
      if (deb == NULL)
        return NULL;
      g_ptr_array_add (debs, deb);
    }
  if (!check_unique (debs, dir, error))
    return NULL;
  return g_steal_pointer (&debs);
}

/* DEBS as a Packages index whose Filenames are relative to LOCK_PATH's
 * directory. */
static char *
index_text (GPtrArray *debs, const char *lock_path, GError **error)
{
  g_autoptr(GString) out = g_string_new ("");
  for (guint i = 0; i < debs->len; i++)
    {
      LocalDeb *deb = debs->pdata[i];
      g_autofree char *relative = lockfile_relative_path (deb->path, lock_path);
      const char *problem = lockfile_local_path_problem (relative);
      if (problem != NULL)
        {
          g_autofree char *shown = g_strescape (relative, NULL);
          return util_fail (error, "%s: its path from the lockfile, \"%s\", %s", deb->path, shown,
                            problem), NULL;
        }
      g_string_append_printf (out, "%sFilename: %s\nSize: %" G_GINT64_FORMAT "\nSHA256: %s\n\n",
                              deb->stanza, relative, deb->size, deb->sha256);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* TEXT at DIR/SHA256.Packages, named by its content: two locks at once
 * (ninja running "lock --update" for several lockfiles) never read each
 * other's index, and the resolver's parsed copy of it is found again. */
static char *
write_index (const char *dir, const char *text, const char *sha256, GError **error)
{
  g_autofree char *file = g_strconcat (sha256, ".Packages", NULL);
  g_autofree char *path = g_build_filename (dir, file, NULL);
  g_autoptr(GError) local_error = NULL;
  if (g_mkdir_with_parents (dir, 0755) < 0)
    return util_fail (error, "%s: %s", dir, g_strerror (errno)), NULL;
  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR)
      && !g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644,
                                    &local_error))
    return util_fail (error, "%s: %s", path, local_error->message), NULL;
  return g_steal_pointer (&path);
}

LockLocalSource *
local_debs_source (const char *name, int pin_priority, const char *dir_recorded, GPtrArray *debs,
                   const char *lock_path, const char *index_dir, GError **error)
{
  g_autofree char *text = index_text (debs, lock_path, error);
  if (text == NULL)
    return NULL;
  g_autoptr(LockLocalSource) source = g_new0 (LockLocalSource, 1);
  source->index_sha256 = g_compute_checksum_for_string (G_CHECKSUM_SHA256, text, -1);
  source->index_path = write_index (index_dir, text, source->index_sha256, error);
  if (source->index_path == NULL)
    return NULL;
  source->name = g_strdup (name);
  source->pin_priority = pin_priority;
  source->dir = g_strdup (dir_recorded);
  return g_steal_pointer (&source);
}

char *
local_deb_request (LocalDeb *deb, const char *arch)
{
  if (g_str_equal (deb->architecture, arch) || g_str_equal (deb->architecture, "all"))
    return g_strdup_printf ("%s=%s", deb->name, deb->version);
  return g_strdup_printf ("%s:%s=%s", deb->name, deb->architecture, deb->version);
}

/* The source of the .debs a package list names: named "local"; its pin
 * priority makes the named file the one installed, as "apt install
 * ./FILE" does, even when an archive has the same version. */
#define LIST_DEBS_SOURCE "local"
#define LIST_DEBS_PIN_PRIORITY 1000

/* The .debs of DIR as the local source NAME. */
static gboolean
add_local_dir (LockLocal *local, const char *name, int pin, const char *dir, const char *output,
               const char *index_dir, GError **error)
{
  g_autoptr(GPtrArray) debs = local_debs_read_dir (dir, error);
  if (debs == NULL)
    return FALSE;
  g_autofree char *recorded = lockfile_relative_path (dir, output);
  LockLocalSource *source = local_debs_source (name, pin, *recorded != '\0' ? recorded : ".",
                                               debs, output, index_dir, error);
  if (source == NULL)
    return FALSE;
  g_ptr_array_add (local->sources, source);
  return TRUE;
}

/* The request's local .debs (the ENTRIES that name one, relative to
 * BASE_DIR): read into the source "local", each entry rewritten relative
 * to the lockfile, and asked of the resolver as NAME=VERSION. */
static gboolean
add_local_entries (LockLocal *local, char **entries, const char *base_dir, const char *arch,
                   const char *output, const char *index_dir, GError **error)
{
  g_autoptr(GPtrArray) debs = g_ptr_array_new_with_free_func ((GDestroyNotify) local_deb_free);
  g_autoptr(GStrvBuilder) resolve = g_strv_builder_new ();
  for (char **e = entries; *e != NULL; e++)
    {
      if (!lockfile_is_local_deb (*e))
        {
          g_strv_builder_add (resolve, *e);
          continue;
        }
      g_autofree char *path = g_path_is_absolute (*e) ? g_strdup (*e)
                                                      : g_build_filename (base_dir, *e, NULL);
      LocalDeb *deb = local_deb_read (path, error);
      if (deb == NULL)
        return FALSE;
      g_ptr_array_add (debs, deb);
      g_autofree char *request = local_deb_request (deb, arch);
      g_strv_builder_add (resolve, request);
      g_free (*e);
      *e = lockfile_relative_path (path, output);
    }
  local->resolve_packages = g_strv_builder_end (resolve);
  if (debs->len == 0)
    return TRUE;
  LockLocalSource *source = local_debs_source (LIST_DEBS_SOURCE, LIST_DEBS_PIN_PRIORITY, NULL, debs,
                                               output, index_dir, error);
  if (source == NULL)
    return FALSE;
  g_ptr_array_add (local->sources, source);
  return TRUE;
}

gboolean
local_debs_to_lock (Lockfile *previous, GPtrArray *dirs, char **entries, const char *base_dir,
                    const char *arch, const char *output, const char *index_dir,
                    LockLocal *local, GError **error)
{
  local->sources = g_ptr_array_new_with_free_func ((GDestroyNotify) lock_local_source_free);
  for (guint i = 0; previous != NULL && i < previous->sources->len; i++)
    {
      LockSource *s = previous->sources->pdata[i];
      g_autofree char *dir = s->dir != NULL ? g_build_filename (base_dir, s->dir, NULL) : NULL;
      if (s->local && dir != NULL
          && !add_local_dir (local, s->name, s->pin_priority, dir, output, index_dir, error))
        return FALSE;
    }
  for (guint i = 0; i < dirs->len; i++)
    {
      LockDebsDir *d = dirs->pdata[i];
      if (!add_local_dir (local, d->name, d->pin_priority, d->dir, output, index_dir, error))
        return FALSE;
    }
  return add_local_entries (local, entries, base_dir, arch, output, index_dir, error);
}
