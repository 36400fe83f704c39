/* packages.c — Debian Packages indices into libsolv.
 *
 * One pass over the index text does two things: it keeps the fields libsolv
 * does not (Essential, Priority, Size, SHA256, ...) as strings inside the
 * text, and it writes a compact copy holding only the relationship fields,
 * which libsolv's repo_add_debpackages() then parses.  The compact copy keeps
 * libsolv from storing every description, and since it has exactly one
 * stanza per package, solvable N of the load is stanza N of the pass.
 * libsolv parses each part of the compact copy as soon as the pass has
 * made it (into the same repodata, internalized once at the end), so that
 * on a cold lock it works while the index is still being decompressed. */

#include "config.h"

#include "apt/packages.h"
#include "base/util.h"

#include <archive.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <solv/repo_deb.h>
#include <solv/repo_solv.h>
#include <solv/repo_write.h>
#include <solv/solvversion.h>
#include <gmodule.h>

/* libsolvext (the Packages parser) drags in librpm,
 * lua, sqlite and more: every process of a build, each unpack-deb included,
 * would pay to load them.  It is opened only when an index is read. */
#define SOLVEXT_SONAME "libsolvext.so.1"
typedef int (*AddDebpackagesFunc) (Repo *repo, FILE *fp, int flags);

struct PackagesStore {
  Pool *pool;
  GModule *solvext;    /* NULL until an index is read */
  AddDebpackagesFunc add_debpackages;
  GPtrArray *texts;    /* GBytes: index texts the fields point into */
  GPtrArray *maps;     /* GMappedFile: cached fields the fields point into */
  GArray *fields;      /* PackagesFields, indexed by solvable id */
  /* Names in the order apt first meets them (see record_mentions()). */
  GHashTable *mentioned;     /* name (owned) */
  GPtrArray *mentions;       /* the same names, in order */
  GArray *mention_rank;      /* guint, indexed by string id: position + 1 */
  GPtrArray *writers;        /* GThread: fields files being written (cache) */
};

typedef struct {
  GHashTable *seen;          /* name (owned) */
  GPtrArray *order;          /* the same names, in order */
} Mentions;

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
  store->texts = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  store->maps = g_ptr_array_new_with_free_func ((GDestroyNotify) g_mapped_file_unref);
  store->mentioned = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  store->mentions = g_ptr_array_new ();
  store->mention_rank = g_array_new (FALSE, TRUE, sizeof (guint));
  store->fields = g_array_new (FALSE, TRUE, sizeof (PackagesFields));
  store->writers = g_ptr_array_new ();
  return store;
}

void
packages_store_free (PackagesStore *store)
{
  if (store == NULL)
    return;
  /* The cache writers read the index texts freed below. */
  for (guint i = 0; i < store->writers->len; i++)
    g_thread_join (store->writers->pdata[i]);
  g_ptr_array_unref (store->writers);
  if (store->solvext != NULL)
    g_module_close (store->solvext);
  g_ptr_array_unref (store->texts);
  g_ptr_array_unref (store->maps);
  g_ptr_array_unref (store->mentions);
  g_hash_table_unref (store->mentioned);
  g_array_unref (store->mention_rank);
  g_array_unref (store->fields);
  g_free (store);
}

/* What the content's magic bytes say the index is compressed with, as a
 * file name (cached indices are named by hash, not by suffix).  NULL for
 * plain text. */
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

/* Open libsolvext and find the function used from it. */
static gboolean
load_solvext (PackagesStore *store, GError **error)
{
  if (store->solvext != NULL)
    return TRUE;
  GModule *module = g_module_open (SOLVEXT_SONAME, G_MODULE_BIND_LOCAL);
  if (module == NULL)
    return util_fail (error, "cannot load %s (apt-get install libsolvext1): %s", SOLVEXT_SONAME,
                      g_module_error ());
  gpointer add_debpackages = NULL;
  if (!g_module_symbol (module, "repo_add_debpackages", &add_debpackages))
    {
      util_fail (error, "%s lacks a function apt2ostree needs: %s", SOLVEXT_SONAME,
                 g_module_error ());
      g_module_close (module);
      return FALSE;
    }
  store->solvext = module;
  store->add_debpackages = (AddDebpackagesFunc) add_debpackages;
  return TRUE;
}

/* --- reading an index ---
 *
 * A compressed index is decompressed by a thread of its own while the scan
 * (scan_stanzas) reads what is done, stanza by stanza: on a cold lock the
 * two together were the longest step, each about half of it.  The text
 * goes into one address range reserved up front (INDEX_MAX, touched only
 * as it fills), so that what the scan has read never moves: the fields
 * point into it for as long as the store lives.  libarchive decompresses:
 * libsolvext's solv_xfopen_fd() never returns on a truncated zstd frame
 * (found by tests/fuzz/fuzz-packages.c). */

/* The most an index may decompress to: Debian's largest is about 60 MB. */
#define INDEX_MAX ((gsize) 1 << 30)
#define INFLATE_STEP ((gsize) 1 << 20)

typedef struct {
  GMutex lock;
  GCond cond;
  char *text;          /* INDEX_MAX + 1 bytes reserved */
  gsize len;           /* bytes decompressed; the thread writes past it only */
  gboolean done;
  char *error;         /* why decompression stopped, once done */
  struct archive *archive;
} Inflow;

static void
unmap_index (gpointer text)
{
  (void) munmap (text, INDEX_MAX + 1);
}

static gpointer
inflow_thread (gpointer data)
{
  Inflow *in = data;
  char *error = NULL;
  gsize len = 0;
  for (;;)
    {
      gsize room = INDEX_MAX - len;
      if (room == 0)
        {
          error = g_strdup_printf ("it decompresses to more than %" G_GSIZE_FORMAT " MiB",
                                   INDEX_MAX >> 20);
          break;
        }
      la_ssize_t n = archive_read_data (in->archive, in->text + len, MIN (room, INFLATE_STEP));
      if (n < 0)
        error = g_strdup (archive_error_string (in->archive));
      if (n <= 0)
        break;
      len += n;
      g_mutex_lock (&in->lock);
      in->len = len;
      g_cond_signal (&in->cond);
      g_mutex_unlock (&in->lock);
    }
  g_mutex_lock (&in->lock);
  in->text[len] = '\0';
  in->len = len;
  in->done = TRUE;
  in->error = error;
  g_cond_signal (&in->cond);
  g_mutex_unlock (&in->lock);
  return NULL;
}

/* The end of the last whole stanza in TEXT[FROM..LEN): the position of the
 * blank line after it, or FROM when there is none yet. */
static gsize
last_stanza_end (const char *text, gsize from, gsize len)
{
  if (len < from + 2)
    return from;
  for (gsize i = len - 1; i > from; i--)
    if (text[i] == '\n' && text[i - 1] == '\n')
      return i;
  return from;
}

typedef void (*ScanFunc) (char *text, gsize len, gpointer user_data);

/* Read the index at PATH, calling SCAN on whole stanzas as they are
 * decompressed (an index's text may be cut only between stanzas).  The
 * text, NUL-terminated, is added to TEXTS. */
static gboolean
read_index (const char *path, GPtrArray *texts, ScanFunc scan, gpointer scan_data,
            GError **error)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return util_fail (error, "%s: cannot open Packages index: %s", path, g_strerror (errno));
  const char *kind = compression_name (fd);
  if (kind == NULL)
    {
      close (fd);
      char *text = NULL;
      gsize len = 0;
      if (!g_file_get_contents (path, &text, &len, error))
        return FALSE;
      g_ptr_array_add (texts, g_bytes_new_take (text, len + 1));
      scan (text, len, scan_data);
      return TRUE;
    }

  Inflow in = { .archive = archive_read_new () };
  archive_read_support_filter_gzip (in.archive);
  archive_read_support_filter_xz (in.archive);
  archive_read_support_filter_zstd (in.archive);
  archive_read_support_filter_bzip2 (in.archive);
  archive_read_support_format_raw (in.archive);
  /* An empty index (a component with no package for this architecture)
   * decompresses to nothing, which only the "empty" format reads. */
  archive_read_support_format_empty (in.archive);
  struct archive_entry *entry;
  int r = archive_read_open_fd (in.archive, fd, 64 * 1024);
  if (r == ARCHIVE_OK)
    r = archive_read_next_header (in.archive, &entry);
  gboolean empty = r == ARCHIVE_EOF;
  if (r != ARCHIVE_OK && !empty)
    {
      archive_read_free (in.archive);
      close (fd);
      return util_fail (error, "%s: Packages index is corrupt: its %s data cannot be decompressed; "
                        "fetch it again", path, strrchr (kind, '.') + 1);
    }
  in.text = mmap (NULL, INDEX_MAX + 1, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (in.text == MAP_FAILED)
    {
      archive_read_free (in.archive);
      close (fd);
      return util_fail (error, "%s: no memory to read it into: %s", path, g_strerror (errno));
    }
  g_mutex_init (&in.lock);
  g_cond_init (&in.cond);
  GThread *thread = NULL;
  if (empty)
    in.done = TRUE;
  else
    thread = g_thread_new ("index", inflow_thread, &in);

  gsize scanned = 0;
  for (;;)
    {
      g_mutex_lock (&in.lock);
      gsize end;
      while ((end = last_stanza_end (in.text, scanned, in.len)) == scanned && !in.done)
        g_cond_wait (&in.cond, &in.lock);
      gboolean done = in.done;
      if (done)
        end = in.len;
      g_mutex_unlock (&in.lock);
      if (done && in.error != NULL)
        break;
      scan (in.text + scanned, end - scanned, scan_data);
      scanned = end;
      if (done)
        break;
    }
  if (thread != NULL)
    g_thread_join (thread);
  archive_read_free (in.archive);
  close (fd);
  g_mutex_clear (&in.lock);
  g_cond_clear (&in.cond);
  g_autofree char *why = in.error;
  if (why != NULL)
    {
      unmap_index (in.text);
      return util_fail (error, "%s: Packages index is corrupt: its %s data cannot be decompressed "
                        "(%s); fetch it again", path, strrchr (kind, '.') + 1, why);
    }
  g_ptr_array_add (texts, g_bytes_new_with_free_func (in.text, in.len + 1, unmap_index, in.text));
  return TRUE;
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
  FIELD_SUGGESTS,
  FIELD_ENHANCES,
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
  KNOWN ("Suggests", FIELD_SUGGESTS, FALSE),
  KNOWN ("Enhances", FIELD_ENHANCES, FALSE),
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
    case FIELD_RECOMMENDS: f->recommends = value; break;
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

/* --- the order apt first meets names in ---
 *
 * When apt has to choose between providers that are equal in every other
 * way, it takes the package it created last, and it creates a package when
 * it first meets its name in the indices: as a package, or as the target of
 * a relationship (Pre-Depends, Depends, Conflicts, Breaks, Recommends,
 * Suggests, Replaces, Enhances, then Provides; "name:any" names another
 * package).  We note the same order. */

enum { REL_PRE_DEPENDS, REL_DEPENDS, REL_CONFLICTS, REL_BREAKS, REL_RECOMMENDS, REL_SUGGESTS,
       REL_REPLACES, REL_ENHANCES, REL_PROVIDES, N_RELS };

static void
mentions_init (Mentions *m)
{
  m->seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  m->order = g_ptr_array_new ();
}

static void
mentions_clear (Mentions *m)
{
  g_ptr_array_unref (m->order);
  g_hash_table_unref (m->seen);
}

static void
mention (Mentions *m, const char *name, gsize len)
{
  char buf[256];
  if (len == 0 || len >= sizeof buf)
    return;
  memcpy (buf, name, len);
  buf[len] = '\0';
  if (g_hash_table_contains (m->seen, buf))
    return;
  char *copy = g_strdup (buf);
  g_hash_table_add (m->seen, copy);
  g_ptr_array_add (m->order, copy);
}

static void
mention_field (Mentions *m, const char *p)
{
  while (p != NULL && *p)
    {
      p += strspn (p, " \t\n,|");
      gsize n = strcspn (p, " \t\n,|(:");
      if (p[n] != ':')
        mention (m, p, n);
      p += n;
      p += strcspn (p, ",|");   /* past versions and qualifiers */
    }
}

static void
record_mentions (Mentions *m, const char *name, const char *const *rels)
{
  mention (m, name, strlen (name));
  for (int i = 0; i < N_RELS; i++)
    mention_field (m, rels[i]);
}

/* One index's names, in its order, after those of the indices before it;
 * each new one gets its rank by string id. */
static void
rank_mentions (PackagesStore *store, GPtrArray *names)
{
  guint from = store->mentions->len;
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      if (g_hash_table_contains (store->mentioned, name))
        continue;
      char *copy = g_strdup (name);
      g_hash_table_add (store->mentioned, copy);
      g_ptr_array_add (store->mentions, copy);
    }
  for (guint i = from; i < store->mentions->len; i++)
    {
      Id id = pool_str2id (store->pool, store->mentions->pdata[i], 1);
      if ((guint) id >= store->mention_rank->len)
        g_array_set_size (store->mention_rank, id + 1024);
      guint *rank = &g_array_index (store->mention_rank, guint, id);
      if (*rank == 0)
        *rank = i + 1;
    }
}

guint
packages_store_mention_rank (PackagesStore *store, Id name)
{
  if (name <= 0 || (guint) name >= store->mention_rank->len)
    return 0;
  return g_array_index (store->mention_rank, guint, name);
}

/* The pass described at the top: fields into FIELDS (and each stanza's
 * package name into NAMES), relationship lines into COMPACT. */
static void
scan_stanzas (Mentions *mentions, char *text, gsize len, GArray *fields, GPtrArray *names,
              GString *compact)
{
  char *p = text;
  char *end = text + len;
  PackagesFields cur = { 0 };
  const char *rels[N_RELS] = { NULL, };
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
              record_mentions (mentions, name, rels);
            }
          else
            g_string_truncate (compact, stanza_start);
          memset (&cur, 0, sizeof cur);
          memset (rels, 0, sizeof rels);
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
          const char *value = terminate_value (colon + 1, value_end);
          store_field (&cur, field, value, &name);
          switch (field)
            {
            case FIELD_PRE_DEPENDS: rels[REL_PRE_DEPENDS] = value; break;
            case FIELD_DEPENDS: rels[REL_DEPENDS] = value; break;
            case FIELD_CONFLICTS: rels[REL_CONFLICTS] = value; break;
            case FIELD_BREAKS: rels[REL_BREAKS] = value; break;
            case FIELD_RECOMMENDS: rels[REL_RECOMMENDS] = value; break;
            case FIELD_SUGGESTS: rels[REL_SUGGESTS] = value; break;
            case FIELD_REPLACES: rels[REL_REPLACES] = value; break;
            case FIELD_ENHANCES: rels[REL_ENHANCES] = value; break;
            case FIELD_PROVIDES: rels[REL_PROVIDES] = value; break;
            default: break;
            }
        }
      p = value_end + 1;
    }
}

/* scan_stanzas over each part of an index as read_index gives it, then
 * libsolv over the part's compact copy. */
typedef struct {
  Mentions *mentions;
  GArray *fields;
  GPtrArray *names;
  GString *compact;
  Repo *repo;
  AddDebpackagesFunc add_debpackages;
  gboolean fed;        /* libsolv has read a part */
  int error;           /* libsolv's result (not 0: it failed), or fmemopen's errno */
} Scan;

static void
scan_part (char *text, gsize len, gpointer data)
{
  Scan *scan = data;
  scan_stanzas (scan->mentions, text, len, scan->fields, scan->names, scan->compact);
  if (scan->compact->len == 0 || scan->error != 0)
    return;
  FILE *fp = fmemopen (scan->compact->str, scan->compact->len, "r");
  if (fp == NULL)
    {
      scan->error = errno;
      return;
    }
  /* The first part makes this index's repodata, the others add to it. */
  scan->error = scan->add_debpackages (scan->repo, fp,
                                       (scan->fed ? REPO_REUSE_REPODATA : 0) | REPO_NO_INTERNALIZE);
  scan->fed = TRUE;
  fclose (fp);
  g_string_truncate (scan->compact, 0);
}

/* Add FIELDS (one per solvable, from FIRST on) to the store. */
static void
store_fields (PackagesStore *store, Id first, const PackagesFields *fields, guint count)
{
  if (store->fields->len < (guint) store->pool->nsolvables)
    g_array_set_size (store->fields, store->pool->nsolvables);
  if (count > 0)  /* an empty index gives FIELDS == NULL, which memcpy() may not take */
    memcpy (&g_array_index (store->fields, PackagesFields, first), fields,
            count * sizeof (PackagesFields));
}

/* Parse the index at PATH into REPO: the slow path, a few hundred
 * milliseconds for a whole Debian archive. */
static gboolean
parse_index (PackagesStore *store, Repo *repo, const char *path, Id *out_first,
             guint *out_count, GPtrArray **out_mentions, GError **error)
{
  Pool *pool = store->pool;
  if (!load_solvext (store, error))
    return FALSE;
  g_autoptr(GArray) fields = g_array_new (FALSE, TRUE, sizeof (PackagesFields));
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GString) compact = g_string_sized_new (1 << 20);
  Mentions mentions;
  mentions_init (&mentions);
  Id first = pool->nsolvables;
  Scan scan = { &mentions, fields, names, compact, repo, store->add_debpackages, FALSE, 0 };
  gboolean read = read_index (path, store->texts, scan_part, &scan, error);
  /* Whatever was read, the repository's data is made whole (libsolv may
   * not be left with a repodata it has not internalized). */
  repo_internalize (repo);
  if (!read)
    {
      mentions_clear (&mentions);
      return FALSE;
    }
  rank_mentions (store, mentions.order);
  *out_mentions = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < mentions.order->len; i++)
    g_ptr_array_add (*out_mentions, g_strdup (mentions.order->pdata[i]));
  mentions_clear (&mentions);
  if (scan.error != 0)
    return util_fail (error, "%s: libsolv cannot read the Packages index: %s", path,
                      pool_errstr (pool));

  /* Solvable N of this load is stanza N of the pass; check it. */
  guint added = pool->nsolvables - first;
  if (added != fields->len)
    return util_fail (error, "%s: libsolv read %u packages, expected %u", path, added,
                      fields->len);
  for (guint i = 0; i < added; i++)
    {
      Solvable *s = pool_id2solvable (pool, first + i);
      const char *name = names->pdata[i];
      if (s->repo != repo || strcmp (pool_id2str (pool, s->name), name) != 0)
        return util_fail (error, "%s: stanza %u (package \"%s\") does not match libsolv's reading",
                          path, i + 1, name);
    }
  store_fields (store, first, (PackagesFields *) fields->data, added);
  *out_first = first;
  *out_count = added;
  return TRUE;
}

/* --- the cache: libsolv's own .solv format for the solvables, and a small
 * file of our fields that is mapped, not parsed ---
 *
 * Both are named after the index's path; the fields file's header records
 * which version of the index they hold (size, inode, mtime, libsolv
 * version), the index's path (so entries of indices that are gone can be
 * pruned) and the size of the .solv written with it. */

#define FIELDS_MAGIC "a2o-packages-fields-4\n"
#define NO_STRING G_MAXUINT32

typedef struct {
  guint32 strings[9];     /* offsets into the string blob, NO_STRING for NULL */
  guint32 flags;          /* 1: essential, 2: important */
  guint64 size;
} CachedFields;

typedef struct {
  char magic[sizeof FIELDS_MAGIC - 1];
  guint32 count;
  guint32 blob_len;
  guint32 text_len;       /* stamp and index path, NUL-terminated, padded to 8 */
  guint32 mentions_len;   /* names in first-mention order, each NUL-terminated */
  guint64 solv_size;
} CachedHeader;

#define FIELD_STRINGS(f) { &(f)->filename, &(f)->sha256, &(f)->priority, &(f)->multi_arch, \
                           &(f)->source, &(f)->depends, &(f)->pre_depends, &(f)->breaks, \
                           &(f)->recommends }

typedef struct {
  char *solv_path;
  char *fields_path;
  char *index_path;       /* absolute */
  char *stamp;
} CachePaths;

static void
cache_paths_clear (CachePaths *c)
{
  g_free (c->solv_path);
  g_free (c->fields_path);
  g_free (c->index_path);
  g_free (c->stamp);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (CachePaths, cache_paths_clear)

static gboolean
cache_paths_init (CachePaths *c, const char *cache_dir, const char *path, GError **error)
{
  struct stat st;
  if (stat (path, &st) != 0)
    return util_fail (error, "%s: cannot open Packages index: %s", path, g_strerror (errno));
  c->index_path = g_canonicalize_filename (path, NULL);
  c->stamp = g_strdup_printf ("%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %ld.%09ld libsolv-%s",
                              (guint64) st.st_size, (guint64) st.st_ino,
                              (long) st.st_mtim.tv_sec, (long) st.st_mtim.tv_nsec, solv_version);
  g_autofree char *key = g_compute_checksum_for_string (G_CHECKSUM_SHA256, c->index_path, -1);
  g_autofree char *solv_name = g_strconcat ("packages-", key, ".solv", NULL);
  g_autofree char *fields_name = g_strconcat ("packages-", key, ".fields", NULL);
  c->solv_path = g_build_filename (cache_dir, solv_name, NULL);
  c->fields_path = g_build_filename (cache_dir, fields_name, NULL);
  return TRUE;
}

/* The header of a mapped fields file and its stamp and index path, or
 * NULL when it is not one. */
static const CachedHeader *
cached_header (const char *data, gsize len, const char **out_stamp, const char **out_index)
{
  const CachedHeader *header = (const CachedHeader *) data;
  if (len < sizeof *header || memcmp (header->magic, FIELDS_MAGIC, sizeof header->magic) != 0
      || header->text_len % 8 != 0 || header->text_len > len - sizeof *header)
    return NULL;
  const char *text = data + sizeof *header;
  const char *text_end = text + header->text_len;
  const char *stamp_end = memchr (text, '\0', header->text_len);
  if (stamp_end == NULL || memchr (stamp_end + 1, '\0', text_end - stamp_end - 1) == NULL)
    return NULL;
  *out_stamp = text;
  *out_index = stamp_end + 1;
  return header;
}

static gboolean
load_cached (PackagesStore *store, Repo *repo, CachePaths *c)
{
  Pool *pool = store->pool;
  g_autoptr(GMappedFile) map = g_mapped_file_new (c->fields_path, FALSE, NULL);
  if (map == NULL)
    return FALSE;
  const char *data = g_mapped_file_get_contents (map);
  gsize len = g_mapped_file_get_length (map);
  const char *stamp, *index;
  const CachedHeader *header = cached_header (data, len, &stamp, &index);
  if (header == NULL || strcmp (stamp, c->stamp) != 0)
    return FALSE;
  gsize records = (gsize) header->count * sizeof (CachedFields);
  if (len != sizeof *header + header->text_len + records + header->blob_len + header->mentions_len
      || header->blob_len == 0)
    return FALSE;
  const CachedFields *cached = (const CachedFields *) (data + sizeof *header + header->text_len);
  const char *blob = (const char *) cached + records;
  if (blob[header->blob_len - 1] != '\0')
    return FALSE;
  const char *mentions = blob + header->blob_len;
  if (header->mentions_len > 0 && mentions[header->mentions_len - 1] != '\0')
    return FALSE;
  struct stat st;
  if (stat (c->solv_path, &st) != 0 || (guint64) st.st_size != header->solv_size)
    return FALSE;

  g_autoptr(GArray) fields = g_array_sized_new (FALSE, TRUE, sizeof (PackagesFields), header->count);
  g_array_set_size (fields, header->count);
  for (guint i = 0; i < header->count; i++)
    {
      PackagesFields *f = &g_array_index (fields, PackagesFields, i);
      const char **strings[] = FIELD_STRINGS (f);
      for (guint j = 0; j < G_N_ELEMENTS (strings); j++)
        {
          guint32 off = cached[i].strings[j];
          if (off != NO_STRING && off >= header->blob_len)
            return FALSE;
          *strings[j] = off == NO_STRING ? NULL : blob + off;
        }
      f->essential = (cached[i].flags & 1) != 0;
      f->important = (cached[i].flags & 2) != 0;
      f->size = cached[i].size;
    }

  FILE *fp = fopen (c->solv_path, "re");
  if (fp == NULL)
    return FALSE;
  Id first = pool->nsolvables;
  int r = repo_add_solv (repo, fp, 0);
  fclose (fp);
  if (r != 0 || (guint) (pool->nsolvables - first) != header->count)
    {
      /* Take back whatever was added; the caller parses the index. */
      if (pool->nsolvables > first)
        repo_free_solvable_block (repo, first, pool->nsolvables - first, 1);
      return FALSE;
    }
  store_fields (store, first, (PackagesFields *) fields->data, header->count);
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  for (const char *m = mentions; m < mentions + header->mentions_len; m += strlen (m) + 1)
    g_ptr_array_add (names, (gpointer) m);
  rank_mentions (store, names);
  g_ptr_array_add (store->maps, g_steal_pointer (&map));
  return TRUE;
}

static gboolean
write_fields (const PackagesFields *fields, guint count, GPtrArray *mentions, CachePaths *c,
              guint64 solv_size, GError **error)
{
  g_autoptr(GString) names = g_string_new (NULL);
  for (guint i = 0; i < mentions->len; i++)
    g_string_append_len (names, mentions->pdata[i], strlen (mentions->pdata[i]) + 1);

  g_autoptr(GString) text = g_string_new (NULL);
  g_string_append_len (text, c->stamp, strlen (c->stamp) + 1);
  g_string_append_len (text, c->index_path, strlen (c->index_path) + 1);
  while (text->len % 8 != 0)
    g_string_append_c (text, '\0');

  g_autoptr(GString) blob = g_string_new (NULL);
  g_autoptr(GHashTable) offsets = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree CachedFields *cached = g_new0 (CachedFields, count ? count : 1);
  for (guint i = 0; i < count; i++)
    {
      PackagesFields copy = fields[i];
      const char **strings[] = FIELD_STRINGS (&copy);
      for (guint j = 0; j < G_N_ELEMENTS (strings); j++)
        {
          const char *str = *strings[j];
          gpointer off;
          if (str == NULL)
            cached[i].strings[j] = NO_STRING;
          else if (g_hash_table_lookup_extended (offsets, str, NULL, &off))
            cached[i].strings[j] = GPOINTER_TO_UINT (off);
          else
            {
              cached[i].strings[j] = blob->len;
              g_hash_table_insert (offsets, (gpointer) str, GUINT_TO_POINTER (blob->len));
              g_string_append_len (blob, str, strlen (str) + 1);
            }
        }
      cached[i].flags = (copy.essential ? 1 : 0) | (copy.important ? 2 : 0);
      cached[i].size = copy.size;
    }
  g_string_append_c (blob, '\0');

  CachedHeader header = { .count = count, .blob_len = blob->len, .text_len = text->len,
                          .mentions_len = names->len, .solv_size = solv_size };
  memcpy (header.magic, FIELDS_MAGIC, sizeof header.magic);
  g_autoptr(GString) out = g_string_sized_new (sizeof header + text->len
                                               + count * sizeof (CachedFields) + blob->len);
  g_string_append_len (out, (const char *) &header, sizeof header);
  g_string_append_len (out, text->str, text->len);
  g_string_append_len (out, (const char *) cached, count * sizeof (CachedFields));
  g_string_append_len (out, blob->str, blob->len);
  g_string_append_len (out, names->str, names->len);
  return g_file_set_contents (c->fields_path, out->str, out->len, error);
}

static gboolean
write_solv (Repo *repo, Id first, guint count, const char *path, guint64 *out_size, GError **error)
{
  g_autofree char *tmp = g_strdup_printf ("%s.%d.tmp", path, (int) getpid ());
  FILE *fp = fopen (tmp, "we");
  if (fp == NULL)
    return util_fail (error, "%s: %s", tmp, g_strerror (errno));
  Repowriter *writer = repowriter_create (repo);
  repowriter_set_solvablerange (writer, first, first + count);
  int r = repowriter_write (writer, fp);
  repowriter_free (writer);
  long size = ftell (fp);
  if (fclose (fp) != 0 || r != 0 || size < 0)
    {
      unlink (tmp);
      return util_fail (error, "%s: cannot write the solv cache", path);
    }
  if (rename (tmp, path) != 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  *out_size = size;
  return TRUE;
}

/* Remove the cache entries of indices that no longer exist (cached indices
 * are named by hash, so every update of the archive leaves one behind). */
static void
prune_cache (const char *cache_dir)
{
  g_autoptr(GDir) dir = g_dir_open (cache_dir, 0, NULL);
  const char *name;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      if (!g_str_has_prefix (name, "packages-") || !g_str_has_suffix (name, ".fields"))
        continue;
      g_autofree char *path = g_build_filename (cache_dir, name, NULL);
      g_autoptr(GMappedFile) map = g_mapped_file_new (path, FALSE, NULL);
      const char *stamp, *index;
      if (map == NULL
          || cached_header (g_mapped_file_get_contents (map), g_mapped_file_get_length (map),
                            &stamp, &index) == NULL
          || g_file_test (index, G_FILE_TEST_EXISTS))
        continue;
      g_autofree char *base = g_strndup (path, strlen (path) - strlen (".fields"));
      g_autofree char *solv = g_strconcat (base, ".solv", NULL);
      g_debug ("%s: pruning the cache of %s, which is gone", cache_dir, index);
      unlink (solv);
      unlink (path);
    }
}

/* The fields file of one index, written by a thread of its own while the
 * lock goes on (on a cold lock it was a tenth of it): from a copy of the
 * index's fields, since the store's array moves as the next index grows it;
 * the strings they point to stay until the store is freed, which waits for
 * the thread. */
typedef struct {
  PackagesFields *fields;
  guint count;
  GPtrArray *mentions;
  CachePaths paths;
  char *cache_dir;
  guint64 solv_size;
} FieldsWriter;

static gpointer
fields_writer_thread (gpointer data)
{
  FieldsWriter *job = data;
  g_autoptr(GError) local_error = NULL;
  if (!write_fields (job->fields, job->count, job->mentions, &job->paths, job->solv_size,
                     &local_error))
    g_debug ("%s: not cached: %s", job->paths.index_path, local_error->message);
  else
    prune_cache (job->cache_dir);
  g_free (job->fields);
  g_ptr_array_unref (job->mentions);
  cache_paths_clear (&job->paths);
  g_free (job->cache_dir);
  g_free (job);
  return NULL;
}

gboolean
packages_store_load (PackagesStore *store, Repo *repo, const char *path, const char *cache_dir,
                     GError **error)
{
  Pool *pool = store->pool;
  if (repo->pool != pool || pool->repos[pool->nrepos - 1] != repo)
    return util_fail (error, "%s: internal error: index loaded into the wrong repository", path);

  g_auto(CachePaths) cache = { NULL, };
  if (cache_dir != NULL)
    {
      if (!cache_paths_init (&cache, cache_dir, path, error))
        return FALSE;
      if (load_cached (store, repo, &cache))
        return TRUE;
    }

  Id first = 0;
  guint count = 0;
  g_autoptr(GPtrArray) mentions = NULL;
  if (!parse_index (store, repo, path, &first, &count, &mentions, error))
    return FALSE;

  if (cache_dir != NULL)
    {
      /* The fields file goes last: its header says which .solv belongs to
       * it.  A cache that cannot be written costs time, not correctness. */
      g_autoptr(GError) local_error = NULL;
      guint64 solv_size = 0;
      if (g_mkdir_with_parents (cache_dir, 0755) != 0)
        g_debug ("%s: not caching: %s", cache_dir, g_strerror (errno));
      else if (!write_solv (repo, first, count, cache.solv_path, &solv_size, &local_error))
        g_debug ("%s: not cached: %s", path, local_error->message);
      else
        {
          FieldsWriter *job = g_new0 (FieldsWriter, 1);
          job->fields = g_memdup2 (&g_array_index (store->fields, PackagesFields, first),
                                   (gsize) count * sizeof (PackagesFields));
          job->count = count;
          job->mentions = g_steal_pointer (&mentions);
          job->paths = cache;
          memset (&cache, 0, sizeof cache);
          job->cache_dir = g_strdup (cache_dir);
          job->solv_size = solv_size;
          g_ptr_array_add (store->writers, g_thread_new ("cache", fields_writer_thread, job));
        }
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
  /* Flat repositories often say "./name.deb"; the path is the same without. */
  const char *filename = f->filename;
  while (filename != NULL && g_str_has_prefix (filename, "./"))
    filename += 2;
  pkg->filename = g_strdup (filename);
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
