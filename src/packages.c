/* packages.c — Debian Packages indices into libsolv.
 *
 * One pass over the index text does two things: it keeps the fields libsolv
 * does not (Essential, Priority, Size, SHA256, ...) as strings inside the
 * text, and it writes a compact copy holding only the relationship fields,
 * which libsolv's repo_add_debpackages() then parses.  The compact copy keeps
 * libsolv from storing every description, and since it has exactly one
 * stanza per package, solvable N of the load is stanza N of the pass. */

#include "config.h"

#include "packages.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <solv/repo_deb.h>
#include <solv/solv_xfopen.h>

struct PackagesStore {
  Pool *pool;
  GPtrArray *texts;    /* index texts the fields point into */
  GArray *fields;      /* PackagesFields, indexed by solvable id */
};

void
deb_package_free (DebPackage *p)
{
  if (p == NULL)
    return;
  g_free (p->name);
  g_free (p->version);
  g_free (p->architecture);
  g_free (p->multi_arch);
  g_free (p->priority);
  g_free (p->filename);
  g_free (p->sha256);
  g_free (p->source_name);
  g_free (p->source_package);
  g_free (p->depends);
  g_free (p->pre_depends);
  g_free (p);
}

PackagesStore *
packages_store_new (Pool *pool)
{
  PackagesStore *store = g_new0 (PackagesStore, 1);
  store->pool = pool;
  store->texts = g_ptr_array_new_with_free_func (g_free);
  store->fields = g_array_new (FALSE, TRUE, sizeof (PackagesFields));
  return store;
}

void
packages_store_free (PackagesStore *store)
{
  if (store == NULL)
    return;
  g_ptr_array_unref (store->texts);
  g_array_unref (store->fields);
  g_free (store);
}

/* The file name libsolv's solv_xfopen_fd() needs to pick a decompressor,
 * from the content's magic bytes (cached indices are named by hash, not by
 * suffix).  NULL for plain text. */
static const char *
compression_name (int fd)
{
  guchar magic[6] = { 0 };
  ssize_t n = pread (fd, magic, sizeof magic, 0);

  if (n >= 6 && memcmp (magic, "\xfd" "7zXZ\0", 6) == 0)
    return "Packages.xz";
  if (n >= 2 && magic[0] == 0x1f && magic[1] == 0x8b)
    return "Packages.gz";
  if (n >= 4 && memcmp (magic, "\x28\xb5\x2f\xfd", 4) == 0)
    return "Packages.zst";
  if (n >= 3 && memcmp (magic, "BZh", 3) == 0)
    return "Packages.bz2";
  return NULL;
}

/* The whole index, decompressed, NUL-terminated. */
static char *
read_index (const char *path, gsize *out_len, GError **error)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      util_fail (error, "%s: cannot open Packages index: %s", path, g_strerror (errno));
      return NULL;
    }

  const char *kind = compression_name (fd);
  if (kind == NULL)
    {
      close (fd);
      char *text = NULL;
      if (!g_file_get_contents (path, &text, out_len, error))
        return NULL;
      return text;
    }

  FILE *fp = solv_xfopen_fd (kind, fd, "r");
  if (fp == NULL)
    {
      close (fd);
      util_fail (error, "%s: cannot decompress Packages index (%s)", path, kind);
      return NULL;
    }

  struct stat st;
  gsize alloc = (fstat (fd, &st) == 0 ? (gsize) st.st_size * 6 : 0) + 65536;
  gsize len = 0;
  char *text = g_malloc (alloc);
  for (;;)
    {
      if (alloc - len < 65536)
        {
          alloc *= 2;
          text = g_realloc (text, alloc);
        }
      size_t n = fread (text + len, 1, alloc - len - 1, fp);
      len += n;
      if (n == 0)
        break;
    }
  gboolean failed = ferror (fp);
  fclose (fp);
  if (failed)
    {
      g_free (text);
      util_fail (error, "%s: Packages index is corrupt (%s could not be decompressed)", path, kind);
      return NULL;
    }
  text[len] = '\0';
  *out_len = len;
  return text;
}

typedef enum {
  FIELD_OTHER,
  FIELD_PACKAGE,
  FIELD_VERSION,
  FIELD_ARCHITECTURE,
  FIELD_DEPENDS,
  FIELD_PRE_DEPENDS,
  FIELD_PROVIDES,
  FIELD_CONFLICTS,
  FIELD_BREAKS,
  FIELD_REPLACES,
  FIELD_RECOMMENDS,
  FIELD_MULTI_ARCH,
  FIELD_FILENAME,
  FIELD_SIZE,
  FIELD_SHA256,
  FIELD_PRIORITY,
  FIELD_ESSENTIAL,
  FIELD_IMPORTANT,
  FIELD_SOURCE,
} Field;

#define KNOWN(tag, field, for_libsolv) { tag, sizeof (tag) - 1, field, for_libsolv }
static const struct {
  const char *tag;
  gsize len;
  Field field;
  gboolean for_libsolv;
} known_fields[] = {
  KNOWN ("Package", FIELD_PACKAGE, TRUE),
  KNOWN ("Version", FIELD_VERSION, TRUE),
  KNOWN ("Architecture", FIELD_ARCHITECTURE, TRUE),
  KNOWN ("Depends", FIELD_DEPENDS, TRUE),
  KNOWN ("Pre-Depends", FIELD_PRE_DEPENDS, TRUE),
  KNOWN ("Provides", FIELD_PROVIDES, TRUE),
  KNOWN ("Conflicts", FIELD_CONFLICTS, TRUE),
  KNOWN ("Breaks", FIELD_BREAKS, TRUE),
  KNOWN ("Replaces", FIELD_REPLACES, TRUE),
  KNOWN ("Recommends", FIELD_RECOMMENDS, TRUE),
  KNOWN ("Multi-Arch", FIELD_MULTI_ARCH, FALSE),
  KNOWN ("Filename", FIELD_FILENAME, FALSE),
  KNOWN ("Size", FIELD_SIZE, FALSE),
  KNOWN ("SHA256", FIELD_SHA256, FALSE),
  KNOWN ("Priority", FIELD_PRIORITY, FALSE),
  KNOWN ("Essential", FIELD_ESSENTIAL, FALSE),
  KNOWN ("Important", FIELD_IMPORTANT, FALSE),
  KNOWN ("Protected", FIELD_IMPORTANT, FALSE),
  KNOWN ("Source", FIELD_SOURCE, FALSE),
};
#undef KNOWN

/* Field names are case-insensitive (Debian Policy 5.1).  Called for every
 * line of a 50 MB index, so compare only names of the right length. */
static gboolean
classify (const char *tag, gsize len, Field *out_field, gboolean *out_for_libsolv)
{
  for (guint i = 0; i < G_N_ELEMENTS (known_fields); i++)
    {
      if (known_fields[i].len != len
          || g_ascii_tolower (known_fields[i].tag[0]) != g_ascii_tolower (tag[0])
          || g_ascii_strncasecmp (known_fields[i].tag, tag, len) != 0)
        continue;
      *out_field = known_fields[i].field;
      *out_for_libsolv = known_fields[i].for_libsolv;
      return TRUE;
    }
  return FALSE;
}

/* The value of a field: leading blanks skipped, trailing blanks cut, NUL
 * put where the field (with its continuation lines) ends. */
static const char *
terminate_value (char *value, char *value_end)
{
  while (value < value_end && (*value == ' ' || *value == '\t'))
    value++;
  while (value_end > value && (value_end[-1] == ' ' || value_end[-1] == '\t'))
    value_end--;
  *value_end = '\0';
  return value;
}

static void
store_field (PackagesFields *f, Field field, const char *value, const char **name)
{
  switch (field)
    {
    case FIELD_PACKAGE: *name = value; break;
    case FIELD_DEPENDS: f->depends = value; break;
    case FIELD_PRE_DEPENDS: f->pre_depends = value; break;
    case FIELD_BREAKS: f->breaks = value; break;
    case FIELD_MULTI_ARCH: f->multi_arch = value; break;
    case FIELD_FILENAME: f->filename = value; break;
    case FIELD_SIZE: f->size = g_ascii_strtoull (value, NULL, 10); break;
    case FIELD_SHA256: f->sha256 = value; break;
    case FIELD_PRIORITY: f->priority = value; break;
    case FIELD_ESSENTIAL: f->essential = g_ascii_strcasecmp (value, "yes") == 0; break;
    case FIELD_IMPORTANT: f->important |= g_ascii_strcasecmp (value, "yes") == 0; break;
    case FIELD_SOURCE: f->source = value; break;
    default: break;
    }
}

/* The pass described at the top: fields into FIELDS (and each stanza's
 * package name into NAMES), relationship lines into COMPACT. */
static void
scan_stanzas (char *text, gsize len, GArray *fields, GPtrArray *names, GString *compact)
{
  char *p = text;
  char *end = text + len;
  PackagesFields cur = { 0 };
  const char *name = NULL;
  gsize stanza_start = compact->len;

  for (;;)
    {
      gboolean at_end = p >= end;
      if (at_end || *p == '\n')
        {
          /* End of a stanza. */
          if (name != NULL && *name != '\0')
            {
              g_string_append_c (compact, '\n');
              g_array_append_val (fields, cur);
              g_ptr_array_add (names, (gpointer) name);
            }
          else
            g_string_truncate (compact, stanza_start);
          memset (&cur, 0, sizeof cur);
          name = NULL;
          stanza_start = compact->len;
          if (at_end)
            break;
          p++;
          continue;
        }

      char *line_end = memchr (p, '\n', end - p);
      if (line_end == NULL)
        line_end = end;
      char *colon = (*p == ' ' || *p == '\t') ? NULL : memchr (p, ':', line_end - p);
      if (colon == NULL)
        {
          /* A continuation line of a field we skip, or junk. */
          p = line_end + 1;
          continue;
        }

      /* The field runs on through its continuation lines. */
      char *value_end = line_end;
      while (value_end + 1 < end && (value_end[1] == ' ' || value_end[1] == '\t'))
        {
          value_end = memchr (value_end + 1, '\n', end - value_end - 1);
          if (value_end == NULL)
            value_end = end;
        }

      Field field;
      gboolean for_libsolv;
      if (classify (p, colon - p, &field, &for_libsolv))
        {
          if (for_libsolv)
            {
              g_string_append_len (compact, p, value_end - p);
              g_string_append_c (compact, '\n');
            }
          store_field (&cur, field, terminate_value (colon + 1, value_end), &name);
        }
      p = value_end + 1;
    }
}

gboolean
packages_store_load (PackagesStore *store, Repo *repo, const char *path, GError **error)
{
  Pool *pool = store->pool;
  gsize len = 0;
  char *text = read_index (path, &len, error);
  if (text == NULL)
    return FALSE;
  g_ptr_array_add (store->texts, text);

  g_autoptr(GArray) fields = g_array_new (FALSE, TRUE, sizeof (PackagesFields));
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GString) compact = g_string_sized_new (len / 3);
  scan_stanzas (text, len, fields, names, compact);

  if (repo->pool != pool || pool->repos[pool->nrepos - 1] != repo)
    return util_fail (error, "%s: internal error: index loaded into the wrong repository", path);

  Id first = pool->nsolvables;
  FILE *fp = fmemopen (compact->str, compact->len ? compact->len : 1, "r");
  if (fp == NULL)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  int r = repo_add_debpackages (repo, fp, 0);
  fclose (fp);
  if (r != 0)
    return util_fail (error, "%s: libsolv cannot read the Packages index: %s", path,
                      pool_errstr (pool));

  /* Solvable N of this load is stanza N of the pass; check it. */
  guint added = pool->nsolvables - first;
  if (added != fields->len)
    return util_fail (error, "%s: libsolv read %u packages, expected %u", path, added,
                      fields->len);
  if (store->fields->len < (guint) pool->nsolvables)
    g_array_set_size (store->fields, pool->nsolvables);
  for (guint i = 0; i < added; i++)
    {
      Solvable *s = pool_id2solvable (pool, first + i);
      const char *name = names->pdata[i];
      if (s->repo != repo || strcmp (pool_id2str (pool, s->name), name) != 0)
        return util_fail (error, "%s: stanza %u (package \"%s\") does not match libsolv's reading",
                          path, i + 1, name);
      g_array_index (store->fields, PackagesFields, first + i)
        = g_array_index (fields, PackagesFields, i);
    }
  return TRUE;
}

const PackagesFields *
packages_store_lookup (PackagesStore *store, Id p)
{
  if (p <= 0 || (guint) p >= store->fields->len)
    return NULL;
  return &g_array_index (store->fields, PackagesFields, p);
}

DebPackage *
packages_store_describe (PackagesStore *store, Id p, const char *source_name)
{
  Pool *pool = store->pool;
  Solvable *s = pool_id2solvable (pool, p);
  const PackagesFields *f = packages_store_lookup (store, p);
  static const PackagesFields none = { 0 };
  if (f == NULL)
    f = &none;

  DebPackage *pkg = g_new0 (DebPackage, 1);
  pkg->name = g_strdup (pool_id2str (pool, s->name));
  pkg->version = g_strdup (pool_id2str (pool, s->evr));
  pkg->architecture = g_strdup (pool_id2str (pool, s->arch));
  pkg->multi_arch = g_strdup (f->multi_arch ? f->multi_arch : "no");
  pkg->priority = g_strdup (f->priority);
  pkg->essential = f->essential;
  pkg->filename = g_strdup (f->filename);
  pkg->size = f->size;
  pkg->sha256 = g_strdup (f->sha256);
  pkg->source_name = g_strdup (source_name);
  if (f->source != NULL)
    pkg->source_package = g_strndup (f->source, strcspn (f->source, " \t("));
  else
    pkg->source_package = g_strdup (pkg->name);
  pkg->depends = g_strdup (f->depends);
  pkg->pre_depends = g_strdup (f->pre_depends);
  return pkg;
}
