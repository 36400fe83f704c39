/* test-resolve.c — runs every tests/resolve/NAME.t resolver testcase as its own
 * GTest case.  The format, in the manner of libsolv's testcases:
 *
 *   # a comment (outside the sections' text: any line starting with "# ")
 *   ## source NAME [priority N] [compress gz|xz]
 *   Package: a          <- Packages stanzas, as a mirror serves them
 *   Version: 1
 *   ...
 *   ## request
 *   packages: a b=1 c:amd64
 *   variant: custom      (optional; default: essential plus the packages)
 *   arch: amd64          (optional; default amd64)
 *   recommends: yes      (optional; default no)
 *   ## expect            <- exactly these name=version, in any order
 *   a=1
 *   ## expect-before     <- "x < y": x is installed before y
 *   b < a
 *   ## expect-error      <- the request fails, the one-line message holds each line
 *   is not in any source
 *
 * Each case runs three times: parsing the indices, writing the parsed-index
 * cache, and reading it; all three must agree.
 *
 * The directory is $TOP_SRCDIR/tests/resolve, or the first argument. */

#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>

#include "apt/packages.h"
#include "apt/resolve.h"

typedef struct {
  char *name;
  int priority;
  char *compress;
  GString *text;
} CaseSource;

typedef struct {
  GPtrArray *sources;      /* CaseSource */
  GPtrArray *packages;     /* char * */
  char *variant;
  char *arch;
  gboolean recommends;
  GPtrArray *expect;       /* char *, NULL when not given */
  GPtrArray *before;       /* char * "x < y" */
  GPtrArray *errors;       /* char *, NULL when success is expected */
} Case;

static void
case_source_free (CaseSource *s)
{
  g_free (s->name);
  g_free (s->compress);
  g_string_free (s->text, TRUE);
  g_free (s);
}

static void
case_free (Case *c)
{
  g_ptr_array_unref (c->sources);
  g_ptr_array_unref (c->packages);
  g_free (c->variant);
  g_free (c->arch);
  if (c->expect)
    g_ptr_array_unref (c->expect);
  g_ptr_array_unref (c->before);
  if (c->errors)
    g_ptr_array_unref (c->errors);
  g_free (c);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Case, case_free)

static CaseSource *
parse_source_header (const char *args)
{
  g_auto(GStrv) words = g_strsplit_set (args, " \t", -1);
  CaseSource *s = g_new0 (CaseSource, 1);
  s->priority = 500;
  s->text = g_string_new (NULL);
  for (char **w = words; *w; w++)
    {
      if (**w == '\0')
        continue;
      if (s->name == NULL)
        s->name = g_strdup (*w);
      else if (g_str_equal (*w, "priority") && w[1])
        s->priority = atoi (*++w);
      else if (g_str_equal (*w, "compress") && w[1])
        s->compress = g_strdup (*++w);
      else
        g_error ("unknown source option \"%s\"", *w);
    }
  g_assert_nonnull (s->name);
  return s;
}

static void
parse_request_line (Case *c, const char *line)
{
  const char *colon = strchr (line, ':');
  g_assert_nonnull (colon);
  g_autofree char *key = g_strstrip (g_strndup (line, colon - line));
  g_autofree char *value = g_strstrip (g_strdup (colon + 1));
  if (g_str_equal (key, "packages"))
    {
      g_auto(GStrv) words = g_strsplit_set (value, " \t", -1);
      for (char **w = words; *w; w++)
        if (**w)
          g_ptr_array_add (c->packages, g_strdup (*w));
    }
  else if (g_str_equal (key, "variant"))
    c->variant = g_strdup (value);
  else if (g_str_equal (key, "arch"))
    {
      g_free (c->arch);
      c->arch = g_strdup (value);
    }
  else if (g_str_equal (key, "recommends"))
    c->recommends = g_str_equal (value, "yes");
  else
    g_error ("unknown request key \"%s\"", key);
}

static Case *
parse_case (const char *path)
{
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  if (!g_file_get_contents (path, &contents, NULL, &error))
    g_error ("%s", error->message);

  g_autoptr(Case) c = g_new0 (Case, 1);
  c->sources = g_ptr_array_new_with_free_func ((GDestroyNotify) case_source_free);
  c->packages = g_ptr_array_new_with_free_func (g_free);
  c->before = g_ptr_array_new_with_free_func (g_free);
  c->arch = g_strdup ("amd64");

  enum { NONE, SOURCE, REQUEST, EXPECT, BEFORE, ERROR } section = NONE;
  CaseSource *source = NULL;
  g_auto(GStrv) lines = g_strsplit (contents, "\n", -1);
  for (char **l = lines; *l; l++)
    {
      const char *line = *l;
      if (g_str_has_prefix (line, "## "))
        {
          const char *head = line + 3;
          if (g_str_has_prefix (head, "source "))
            {
              section = SOURCE;
              source = parse_source_header (head + 7);
              g_ptr_array_add (c->sources, source);
            }
          else if (g_str_equal (head, "request"))
            section = REQUEST;
          else if (g_str_equal (head, "expect"))
            {
              section = EXPECT;
              c->expect = g_ptr_array_new_with_free_func (g_free);
            }
          else if (g_str_equal (head, "expect-before"))
            section = BEFORE;
          else if (g_str_equal (head, "expect-error"))
            {
              section = ERROR;
              c->errors = g_ptr_array_new_with_free_func (g_free);
            }
          else
            g_error ("%s: unknown section \"%s\"", path, line);
          continue;
        }
      if (g_str_has_prefix (line, "# ") || g_str_equal (line, "#"))
        continue;
      switch (section)
        {
        case SOURCE:
          g_string_append_printf (source->text, "%s\n", line);
          break;
        case REQUEST:
          if (*line)
            parse_request_line (c, line);
          break;
        case EXPECT:
          if (*line)
            g_ptr_array_add (c->expect, g_strdup (line));
          break;
        case BEFORE:
          if (*line)
            g_ptr_array_add (c->before, g_strdup (line));
          break;
        case ERROR:
          if (*line)
            g_ptr_array_add (c->errors, g_strdup (line));
          break;
        case NONE:
          break;
        }
    }
  g_assert_true (c->expect != NULL || c->errors != NULL);
  return g_steal_pointer (&c);
}

/* Write a source's stanzas as a Packages file, compressed as asked. */
static char *
write_index (const char *dir, CaseSource *s)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *plain = g_build_filename (dir, s->name, NULL);
  g_assert_true (g_file_set_contents (plain, s->text->str, s->text->len, &error));
  if (s->compress == NULL)
    return g_steal_pointer (&plain);

  const char *tool = g_str_equal (s->compress, "xz") ? "xz" : "gzip";
  const char *argv[] = { tool, "-k", plain, NULL };
  int status;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               NULL, NULL, &status, &error));
  g_assert_true (g_spawn_check_wait_status (status, &error));
  /* Named by hash, as a cache would: the content says it is compressed. */
  g_autofree char *compressed = g_strdup_printf ("%s.%s", plain, g_str_equal (tool, "xz") ? "xz" : "gz");
  char *hashed = g_build_filename (dir, "0123abcd", NULL);
  g_assert_cmpint (g_rename (compressed, hashed), ==, 0);
  g_assert_cmpint (g_unlink (plain), ==, 0);
  return hashed;
}

static int
index_of (GPtrArray *result, const char *name)
{
  for (guint i = 0; i < result->len; i++)
    if (g_str_equal (((DebPackage *) result->pdata[i])->name, name))
      return i;
  return -1;
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static char *
sorted_lines (GPtrArray *lines)
{
  g_autoptr(GPtrArray) copy = g_ptr_array_new ();
  for (guint i = 0; i < lines->len; i++)
    g_ptr_array_add (copy, lines->pdata[i]);
  g_ptr_array_sort (copy, compare_strings);
  g_ptr_array_add (copy, NULL);
  return g_strjoinv ("\n", (char **) copy->pdata);
}

/* The result against the case's expectations; returns the install order
 * (or the error) as one string. */
static char *
check_result (Case *c, GPtrArray *result, GError *error)
{
  if (c->errors != NULL)
    {
      g_assert_null (result);
      g_assert_nonnull (error);
      g_test_message ("error: %s", error->message);
      g_assert_null (strchr (error->message, '\n'));
      for (guint i = 0; i < c->errors->len; i++)
        if (strstr (error->message, c->errors->pdata[i]) == NULL)
          g_error ("error \"%s\" does not contain \"%s\"", error->message,
                   (char *) c->errors->pdata[i]);
      return g_strdup (error->message);
    }

  g_assert_no_error (error);
  g_autoptr(GPtrArray) got = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < result->len; i++)
    {
      DebPackage *p = result->pdata[i];
      g_ptr_array_add (got, g_strdup_printf ("%s=%s", p->name, p->version));
    }
  g_autofree char *got_str = sorted_lines (got);
  g_autofree char *want_str = sorted_lines (c->expect);
  g_assert_cmpstr (got_str, ==, want_str);

  for (guint i = 0; i < c->before->len; i++)
    {
      g_auto(GStrv) pair = g_strsplit (c->before->pdata[i], " < ", 2);
      g_assert_nonnull (pair[1]);
      int a = index_of (result, pair[0]), b = index_of (result, pair[1]);
      g_assert_cmpint (a, >=, 0);
      g_assert_cmpint (b, >=, 0);
      if (a > b)
        g_error ("%s is installed after %s (positions %d and %d)", pair[0], pair[1], a, b);
    }
  g_ptr_array_add (got, NULL);
  return g_strjoinv (" ", (char **) got->pdata);
}

static void
run_case (gconstpointer data)
{
  const char *path = data;
  g_autoptr(Case) c = parse_case (path);
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-resolve-XXXXXX", &error);
  g_assert_no_error (error);

  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func ((GDestroyNotify) resolve_source_free);
  for (guint i = 0; i < c->sources->len; i++)
    {
      CaseSource *cs = c->sources->pdata[i];
      g_autofree char *sub = g_build_filename (dir, cs->name, NULL);
      g_assert_cmpint (g_mkdir (sub, 0755), ==, 0);
      ResolveSource *source = resolve_source_new (cs->name, cs->priority);
      g_ptr_array_add (source->index_paths, write_index (sub, cs));
      g_ptr_array_add (sources, source);
    }
  g_ptr_array_add (c->packages, NULL);

  /* Three runs: parsing the indices, parsing and writing the cache, and
   * from the cache; all must give the expected answer and the same order. */
  g_autofree char *cache_dir = g_build_filename (dir, "cache", NULL);
  const char *caches[] = { NULL, cache_dir, cache_dir };
  g_autofree char *first_order = NULL;
  for (guint run = 0; run < G_N_ELEMENTS (caches); run++)
    {
      ResolveRequest request = {
        .packages = (char **) c->packages->pdata,
        .variant = c->variant,
        .arch = c->arch,
        .recommends = c->recommends,
        .cache_dir = caches[run],
      };
      g_autoptr(GError) run_error = NULL;
      g_autoptr(GPtrArray) result = resolve_request (sources, &request, &run_error);
      char *order = check_result (c, result, run_error);
      if (run == 0)
        first_order = order;
      else
        {
          g_assert_cmpstr (order, ==, first_order);
          g_free (order);
        }
    }

  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_true (g_spawn_command_line_sync (rm, NULL, NULL, NULL, NULL));
}

/* --- the parsed-index cache --- */

static char *
resolve_one (const char *index, const char *cache_dir)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func ((GDestroyNotify) resolve_source_free);
  ResolveSource *source = resolve_source_new ("main", 500);
  g_ptr_array_add (source->index_paths, g_strdup (index));
  g_ptr_array_add (sources, source);
  char *packages[] = { "app", NULL };
  ResolveRequest request = { .packages = packages, .variant = "custom", .arch = "amd64",
                             .cache_dir = cache_dir };
  g_autoptr(GPtrArray) result = resolve_request (sources, &request, &error);
  g_assert_no_error (error);
  GString *out = g_string_new (NULL);
  for (guint i = 0; i < result->len; i++)
    {
      DebPackage *p = result->pdata[i];
      g_string_append_printf (out, "%s=%s %s %" G_GUINT64_FORMAT " %s;", p->name, p->version,
                              p->sha256, p->size, p->essential ? "essential" : "-");
    }
  return g_string_free (out, FALSE);
}

#define CACHE_INDEX_V1 \
  "Package: app\nVersion: 1\nArchitecture: amd64\nEssential: yes\nDepends: lib\nSize: 10\nSHA256: aaaa\n\n" \
  "Package: lib\nVersion: 1\nArchitecture: amd64\nSize: 20\nSHA256: bbbb\n"
#define CACHE_INDEX_V2 \
  "Package: app\nVersion: 2\nArchitecture: amd64\nEssential: yes\nDepends: lib\nSize: 10\nSHA256: aaaa\n\n" \
  "Package: lib\nVersion: 2\nArchitecture: amd64\nSize: 20\nSHA256: bbbb\n"

/* Overwrite PATH in place (same inode, same size) and put its mtime back. */
static void
rewrite_keeping_stat (const char *path, const char *contents)
{
  GStatBuf st;
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  FILE *fp = fopen (path, "r+");
  g_assert_nonnull (fp);
  g_assert_cmpuint (fwrite (contents, 1, strlen (contents), fp), ==, strlen (contents));
  g_assert_cmpint (fclose (fp), ==, 0);
  struct timespec times[2] = { st.st_atim, st.st_mtim };
  g_assert_cmpint (utimensat (AT_FDCWD, path, times, 0), ==, 0);
}

static void
test_cache_reused (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-resolve-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *index = g_build_filename (dir, "Packages", NULL);
  g_autofree char *cache = g_build_filename (dir, "cache", NULL);
  g_assert_true (g_file_set_contents (index, CACHE_INDEX_V1, -1, &error));

  g_autofree char *first = resolve_one (index, cache);
  g_assert_cmpstr (first, ==, "lib=1 bbbb 20 -;app=1 aaaa 10 essential;");

  /* The same file (path, size, inode, mtime) is not read again: content
   * changed behind the cache's back still gives the cached answer. */
  rewrite_keeping_stat (index, CACHE_INDEX_V2);
  g_autofree char *second = resolve_one (index, cache);
  g_assert_cmpstr (second, ==, first);

  /* Without the cache the file is read. */
  g_autofree char *uncached = resolve_one (index, NULL);
  g_assert_cmpstr (uncached, ==, "lib=2 bbbb 20 -;app=2 aaaa 10 essential;");

  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_true (g_spawn_command_line_sync (rm, NULL, NULL, NULL, NULL));
}

static void
test_cache_invalidated (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-resolve-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *index = g_build_filename (dir, "Packages", NULL);
  g_autofree char *cache = g_build_filename (dir, "cache", NULL);
  g_assert_true (g_file_set_contents (index, CACHE_INDEX_V1, -1, &error));
  g_autofree char *first = resolve_one (index, cache);
  g_assert_cmpstr (first, ==, "lib=1 bbbb 20 -;app=1 aaaa 10 essential;");

  /* A new file at the same path (a new inode and mtime) is read anew. */
  g_autofree char *tmp = g_strconcat (index, ".new", NULL);
  g_assert_true (g_file_set_contents (tmp, CACHE_INDEX_V2, -1, &error));
  g_assert_cmpint (g_rename (tmp, index), ==, 0);
  g_autofree char *second = resolve_one (index, cache);
  g_assert_cmpstr (second, ==, "lib=2 bbbb 20 -;app=2 aaaa 10 essential;");

  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_true (g_spawn_command_line_sync (rm, NULL, NULL, NULL, NULL));
}

/* Cache files cut short or filled with junk are ignored: the index is
 * parsed again and the answer is right. */
static void
test_cache_corrupt (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-resolve-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *index = g_build_filename (dir, "Packages", NULL);
  g_autofree char *cache = g_build_filename (dir, "cache", NULL);
  g_assert_true (g_file_set_contents (index, CACHE_INDEX_V1, -1, &error));
  g_autofree char *want = resolve_one (index, cache);

  const char *suffixes[] = { ".fields", ".solv" };
  const char *junk[] = { "", "a2o-packages-fields-4\n\x05\x00", "\xff\xff\xff\xff garbage" };
  for (guint s = 0; s < G_N_ELEMENTS (suffixes); s++)
    for (guint j = 0; j < G_N_ELEMENTS (junk); j++)
      {
        g_autoptr(GDir) d = g_dir_open (cache, 0, &error);
        g_assert_no_error (error);
        const char *name;
        guint hit = 0;
        while ((name = g_dir_read_name (d)) != NULL)
          if (g_str_has_suffix (name, suffixes[s]))
            {
              g_autofree char *path = g_build_filename (cache, name, NULL);
              g_assert_true (g_file_set_contents (path, junk[j], -1, &error));
              hit++;
            }
        g_assert_cmpuint (hit, ==, 1);
        g_autofree char *got = resolve_one (index, cache);
        g_assert_cmpstr (got, ==, want);
      }

  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_true (g_spawn_command_line_sync (rm, NULL, NULL, NULL, NULL));
}

static guint
count_files (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  guint n = 0;
  while (d != NULL && g_dir_read_name (d) != NULL)
    n++;
  return n;
}

/* An index that is gone (a cache of indices named by hash drops the old
 * ones) takes its cache entry with it the next time an index is cached. */
static void
test_cache_pruned (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-resolve-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *old_index = g_build_filename (dir, "Packages-old", NULL);
  g_autofree char *new_index = g_build_filename (dir, "Packages-new", NULL);
  g_autofree char *cache = g_build_filename (dir, "cache", NULL);
  g_assert_true (g_file_set_contents (old_index, CACHE_INDEX_V1, -1, &error));
  g_free (resolve_one (old_index, cache));
  g_assert_cmpuint (count_files (cache), ==, 2);

  g_assert_true (g_file_set_contents (new_index, CACHE_INDEX_V2, -1, &error));
  g_free (resolve_one (new_index, cache));
  g_assert_cmpuint (count_files (cache), ==, 4);     /* the old index is still there */

  g_assert_cmpint (g_unlink (old_index), ==, 0);
  g_assert_cmpint (g_unlink (new_index), ==, 0);
  g_assert_true (g_file_set_contents (new_index, CACHE_INDEX_V1, -1, &error));
  g_autofree char *got = resolve_one (new_index, cache);
  g_assert_cmpstr (got, ==, "lib=1 bbbb 20 -;app=1 aaaa 10 essential;");
  g_assert_cmpuint (count_files (cache), ==, 2);

  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_true (g_spawn_command_line_sync (rm, NULL, NULL, NULL, NULL));
}

/* --- unreadable indices --- */

static void
expect_index_error (const char *index, const char *message)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func ((GDestroyNotify) resolve_source_free);
  ResolveSource *source = resolve_source_new ("main", 500);
  g_ptr_array_add (source->index_paths, g_strdup (index));
  g_ptr_array_add (sources, source);
  char *packages[] = { "app", NULL };
  ResolveRequest request = { .packages = packages, .variant = "custom", .arch = "amd64" };
  g_autoptr(GPtrArray) result = resolve_request (sources, &request, &error);
  g_assert_null (result);
  g_assert_nonnull (error);
  g_test_message ("error: %s", error->message);
  g_assert_true (g_str_has_prefix (error->message, index));
  g_assert_nonnull (strstr (error->message, message));
  g_assert_null (strchr (error->message, '\n'));
}

static void
test_index_truncated (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-resolve-XXXXXX", &error);
  g_assert_no_error (error);
  g_autoptr(GString) text = g_string_new (NULL);
  for (int i = 0; i < 2000; i++)
    g_string_append_printf (text, "Package: p%d\nVersion: %d\nArchitecture: amd64\n"
                            "Description: package number %d\n\n", i, i, i);
  const char *tools[] = { "xz", "gzip" };
  for (guint t = 0; t < G_N_ELEMENTS (tools); t++)
    {
      g_autofree char *plain = g_build_filename (dir, "Packages", NULL);
      g_assert_true (g_file_set_contents (plain, text->str, text->len, &error));
      const char *argv[] = { tools[t], plain, NULL };
      int status;
      g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                                   NULL, NULL, &status, &error));
      g_assert_true (g_spawn_check_wait_status (status, &error));
      g_autofree char *compressed = g_strconcat (plain, t == 0 ? ".xz" : ".gz", NULL);
      g_autofree char *data = NULL;
      gsize len;
      g_assert_true (g_file_get_contents (compressed, &data, &len, &error));
      g_assert_true (g_file_set_contents (compressed, data, len / 2, &error));
      expect_index_error (compressed, "Packages index is corrupt");
      g_assert_cmpint (g_unlink (compressed), ==, 0);
    }
  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_true (g_spawn_command_line_sync (rm, NULL, NULL, NULL, NULL));
}

/* Every package of the index at PATH, as the store describes it. */
static char *
describe_index (const char *path)
{
  g_autoptr(GError) error = NULL;
  Pool *pool = pool_create ();
  pool_setdisttype (pool, DISTTYPE_DEB);
  pool_setarch (pool, "amd64");
  Repo *repo = repo_create (pool, "main");
  PackagesStore *store = packages_store_new (pool);
  g_assert_true (packages_store_load (store, repo, path, NULL, &error));
  g_assert_no_error (error);
  GString *out = g_string_new (NULL);
  Id p;
  Solvable *s;
  FOR_REPO_SOLVABLES (repo, p, s)
    {
      g_autoptr(DebPackage) pkg = packages_store_describe (store, p, "main");
      g_string_append_printf (out, "%s %s %s %d %s %" G_GUINT64_FORMAT " %s %s %s %u\n",
                              pkg->name, pkg->version, pkg->architecture, pkg->essential,
                              pkg->filename ? pkg->filename : "-", pkg->size,
                              pkg->sha256 ? pkg->sha256 : "-", pkg->source_package,
                              pkg->depends ? pkg->depends : "-",
                              packages_store_mention_rank (store, s->name));
    }
  packages_store_free (store);
  pool_free (pool);
  return g_string_free (out, FALSE);
}

/* An index of several megabytes reads the same compressed as plain: it is
 * decompressed by a thread of its own and scanned part by part as it comes
 * (packages.c), so stanzas and fields cut across the parts must come out
 * whole. */
static void
test_index_compressed_in_parts (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-resolve-XXXXXX", &error);
  g_assert_no_error (error);
  g_autoptr(GString) text = g_string_new (NULL);
  const guint n = 20000;
  for (guint i = 0; i < n; i++)
    g_string_append_printf (text, "Package: p%u\nVersion: 1.%u\nArchitecture: amd64\n"
                            "Depends: p%u, lib (>= %u)\nFilename: pool/main/p/p%u_1.%u_amd64.deb\n"
                            "Size: %u\nSHA256: %08x%056u\nDescription: package number %u\n"
                            " a continuation line long enough to make the index several\n"
                            " megabytes, so that it is read in many parts: %u\n\n",
                            i, i, (i * 7919) % n, i % 13, i, i, i, i * 2654435761u, i, i, i);
  g_string_append (text, "Package: lib\nVersion: 7\nArchitecture: amd64\nSize: 3\n"
                         "SHA256: cccc\nEssential: yes");  /* no newline at the end */
  g_assert_cmpuint (text->len, >, 4 << 20);
  g_autofree char *plain = g_build_filename (dir, "Packages", NULL);
  g_assert_true (g_file_set_contents (plain, text->str, text->len, &error));
  g_autofree char *expected = describe_index (plain);
  g_assert_cmpuint (strlen (expected), >, text->len / 3);
  g_assert_nonnull (strstr (expected, "\nlib 7 amd64 1 - 3 cccc lib - "));

  const char *tools[][2] = { { "xz", ".xz" }, { "gzip", ".gz" }, { "zstd", ".zst" } };
  for (guint t = 0; t < G_N_ELEMENTS (tools); t++)
    {
      g_autofree char *tool = g_find_program_in_path (tools[t][0]);
      if (tool == NULL)
        continue;
      const char *argv[] = { tools[t][0], "-k", "-q", plain, NULL };
      int status;
      g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                                   NULL, NULL, &status, &error));
      g_assert_true (g_spawn_check_wait_status (status, &error));
      g_autofree char *compressed = g_strconcat (plain, tools[t][1], NULL);
      g_autofree char *got = describe_index (compressed);
      /* The first line that differs, not three megabytes of each. */
      g_auto(GStrv) got_lines = g_strsplit (got, "\n", -1);
      g_auto(GStrv) expected_lines = g_strsplit (expected, "\n", -1);
      guint n_got = g_strv_length (got_lines);
      for (guint i = 0; expected_lines[i] != NULL; i++)
        g_assert_cmpstr (got_lines[MIN (i, n_got - 1)], ==, expected_lines[i]);
      g_assert_cmpuint (n_got, ==, g_strv_length (expected_lines));
    }
  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_true (g_spawn_command_line_sync (rm, NULL, NULL, NULL, NULL));
}

static void
test_index_missing (void)
{
  expect_index_error ("/nonexistent/Packages", "cannot open Packages index");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_autofree char *dir = NULL;
  if (argc > 1)
    dir = g_strdup (argv[1]);
  else
    dir = g_build_filename (g_getenv ("TOP_SRCDIR") ? g_getenv ("TOP_SRCDIR") : ".",
                            "tests", "resolve", NULL);

  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) d = g_dir_open (dir, 0, &error);
  if (d == NULL)
    g_error ("%s", error->message);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (name, ".t"))
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_strings);
  g_assert_cmpuint (names->len, >, 0);

  for (guint i = 0; i < names->len; i++)
    {
      const char *file = names->pdata[i];
      g_autofree char *test = g_strdup_printf ("/resolve/%.*s", (int) strlen (file) - 2, file);
      g_test_add_data_func_full (test, g_build_filename (dir, file, NULL), run_case, g_free);
    }
  g_test_add_func ("/resolve-index/truncated-compressed-index-is-an-error", test_index_truncated);
  g_test_add_func ("/resolve-index/missing-index-is-an-error", test_index_missing);
  g_test_add_func ("/resolve-index/compressed-index-read-in-parts-as-plain",
                   test_index_compressed_in_parts);
  g_test_add_func ("/resolve-cache/same-index-is-not-parsed-again", test_cache_reused);
  g_test_add_func ("/resolve-cache/replaced-index-is-parsed-again", test_cache_invalidated);
  g_test_add_func ("/resolve-cache/corrupt-cache-is-ignored", test_cache_corrupt);
  g_test_add_func ("/resolve-cache/entries-of-removed-indices-are-pruned", test_cache_pruned);
  return g_test_run ();
}
