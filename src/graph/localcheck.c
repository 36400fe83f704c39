/* localcheck.c — local .debs changed since they were locked; see
 * localcheck.h. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "apt/cache.h"
#include "barestore/refs.h"
#include "deb/deb.h"
#include "graph/localcheck.h"

/* What a path held when last hashed: "SHA256 SIZE MTIME_NS/CTIME_NS PATH"
 * lines. */
typedef struct {
  GHashTable *seen;   /* path → "SHA256 SIZE MTIME_NS/CTIME_NS" */
  GHashTable *said;   /* paths already reported (images share packages) */
  char *path;         /* the record's file */
  gboolean changed;
} Record;

static void
record_load (Record *record, const char *builddir)
{
  record->seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  record->said = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  record->path = g_build_filename (builddir, "cache", "local-debs", NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (record->path, &text, NULL, NULL))
    return;
  /* A build directory's file, not trusted: a line that does not parse is
   * ignored (its .deb is hashed again). */
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      g_auto(GStrv) f = g_strsplit (*l, " ", 4);
      if (g_strv_length (f) == 4 && strlen (f[0]) == 64 && *f[3] != '\0')
        g_hash_table_replace (record->seen, g_strdup (f[3]),
                              g_strdup_printf ("%s %s %s", f[0], f[1], f[2]));
    }
}

static void
record_save (Record *record)
{
  if (!record->changed)
    return;
  g_autoptr(GString) text = g_string_new ("");
  g_autoptr(GList) paths = g_list_sort (g_hash_table_get_keys (record->seen),
                                        (GCompareFunc) strcmp);
  for (GList *p = paths; p != NULL; p = p->next)
    g_string_append_printf (text, "%s %s\n", (char *) g_hash_table_lookup (record->seen, p->data),
                            (char *) p->data);
  g_autofree char *dir = g_path_get_dirname (record->path);
  g_autoptr(GError) error = NULL;
  /* Only a cache: not writing it costs a hash next time. */
  if (g_mkdir_with_parents (dir, 0755) < 0
      || !g_file_set_contents (record->path, text->str, text->len, &error))
    g_debug ("%s: not written", record->path);
}

static void
record_clear (Record *record)
{
  g_clear_pointer (&record->seen, g_hash_table_unref);
  g_clear_pointer (&record->said, g_hash_table_unref);
  g_clear_pointer (&record->path, g_free);
}

static gint64
nanoseconds (const struct timespec *t)
{
  return (gint64) t->tv_sec * G_GINT64_CONSTANT (1000000000) + t->tv_nsec;
}

/* The sha256 PATH (as ST says it is) holds: from the record when its size
 * and mtime are those recorded, else hashed and recorded; NULL when it
 * cannot be read. */
static char *
current_sha256 (Record *record, const char *path, const struct stat *st)
{
  g_autofree char *stamp = g_strdup_printf ("%" G_GINT64_FORMAT " %" G_GINT64_FORMAT "/%"
                                            G_GINT64_FORMAT, (gint64) st->st_size,
                                            nanoseconds (&st->st_mtim), nanoseconds (&st->st_ctim));
  const char *seen = g_hash_table_lookup (record->seen, path);
  if (seen != NULL && strlen (seen) > 65 && g_str_equal (seen + 65, stamp))
    return g_strndup (seen, 64);
  char *sha256 = cache_sha256_file (path, NULL);
  if (sha256 == NULL)
    return NULL;
  g_hash_table_replace (record->seen, g_strdup (path), g_strdup_printf ("%s %s", sha256, stamp));
  record->changed = TRUE;
  return sha256;
}

static void
check_package (Record *record, const char *repo, BuildImage *image, LockPackage *package)
{
  g_autofree char *ref = deb_ref_name (package->name, package->version, package->architecture,
                                       package->sha256);
  g_autofree char *ref_file = refs_file_path (repo, ref);
  g_autofree char *lock_dir = g_path_get_dirname (image->lockfile);
  g_autofree char *path = g_build_filename (lock_dir, package->path, NULL);
  struct stat st, ref_st;
  /* Without its tree the build fetches the file and fails, saying why.  A
   * file whose inode has not changed since the tree was written (its
   * ctime, which no copy or touch can set back) is the one the tree was
   * made from. */
  if (stat (ref_file, &ref_st) < 0 || g_hash_table_contains (record->said, path)
      || stat (path, &st) < 0 || nanoseconds (&st.st_ctim) < nanoseconds (&ref_st.st_mtim))
    return;
  g_autofree char *now = NULL;
  if (st.st_size == package->size)
    {
      g_autofree char *sha256 = current_sha256 (record, path, &st);
      if (sha256 == NULL || g_str_equal (sha256, package->sha256))
        return;
      now = g_strconcat ("sha256 ", sha256, NULL);
    }
  else
    now = g_strdup_printf ("%" G_GINT64_FORMAT " bytes, locked %" G_GINT64_FORMAT,
                           (gint64) st.st_size, package->size);
  fprintf (stderr, "apt2ostree build: %s changed since it was locked in %s (now %s): the image "
           "keeps the locked %s %s (sha256 %s); run \"apt2ostree lock --update %s\" to take "
           "the new one\n", path, image->lockfile, now, package->name, package->version,
           package->sha256, image->lockfile);
  g_hash_table_add (record->said, g_steal_pointer (&path));
}

void
localcheck_say_changed (BuildArgs *args)
{
  g_autofree char *default_repo = g_build_filename (args->builddir, "ostree", NULL);
  const char *repo = args->repo != NULL ? args->repo : default_repo;
  Record record = { NULL };
  record_load (&record, args->builddir);
  for (guint i = 0; i < args->images->len; i++)
    {
      BuildImage *image = args->images->pdata[i];
      for (guint j = 0; j < image->lock->packages->len; j++)
        {
          LockPackage *package = image->lock->packages->pdata[j];
          if (package->path != NULL)
            check_package (&record, repo, image, package);
        }
    }
  record_save (&record);
  record_clear (&record);
}
