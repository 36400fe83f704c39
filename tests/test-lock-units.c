/* Unit tests for the parts of "apt2ostree lock" that need no network:
 * sources parsing and naming, Release parsing and dates, the lockfile's
 * layout and round trip. */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "apt/lockfile.h"
#include "apt/release.h"
#include "apt/sources.h"
#include "base/deb822.h"

static SourcesList *
parse (const char *text, gboolean deb822, GError **error)
{
  SourcesList *list = g_new0 (SourcesList, 1);
  list->sources = g_ptr_array_new_with_free_func ((GDestroyNotify) source_free);
  list->path = g_strdup ("test");
  if (!sources_parse_text (list, text, "test", deb822, error))
    {
      sources_list_free (list);
      return NULL;
    }
  return list;
}

static SourcesList *
load_text (const char *text, const char *suffix, GError **error)
{
  g_autofree char *path = NULL;
  g_autofree char *tmpl = g_strdup_printf ("sources-XXXXXX%s", suffix);
  int fd = g_file_open_tmp (tmpl, &path, NULL);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  SourcesList *list = sources_load_file (path, error);
  unlink (path);
  return list;
}

static void
test_one_line_format (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SourcesList) list = load_text (
      "# comment\n"
      "deb [ arch=amd64,arm64 signed-by=/k.gpg ] http://example.invalid/debian/ bookworm main contrib # trailing\n"
      "deb-src http://example.invalid/debian bookworm main\n"
      "deb [pin-priority=100] http://example.invalid/debian bookworm-updates main\n",
      ".list", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (list->sources->len, ==, 2);
  Source *s = list->sources->pdata[0];
  g_assert_cmpstr (s->name, ==, "bookworm");
  g_assert_cmpstr (s->uri, ==, "http://example.invalid/debian");
  g_assert_cmpstr (s->suite, ==, "bookworm");
  g_assert_cmpuint (g_strv_length (s->components), ==, 2);
  g_assert_cmpstr (s->components[1], ==, "contrib");
  g_assert_cmpstr (s->architectures[1], ==, "arm64");
  g_assert_cmpstr (s->signed_by, ==, "/k.gpg");
  g_assert_cmpint (s->pin_priority, ==, 500);
  s = list->sources->pdata[1];
  g_assert_cmpstr (s->name, ==, "bookworm-updates");
  g_assert_cmpint (s->pin_priority, ==, 100);
}

/* deb822 syntax, read as apt reads it (base/deb822.c, strict and trimmed):
 * a line that is no field is an error naming the file and the line; a
 * continuation line loses its indentation and a CRLF's "\r". */
static void
test_deb822_syntax (void)
{
  static const struct { const char *text, *error; } bad[] = {
    { " URIs: http://example.invalid/debian\nTypes: deb\n",
      "test:1: continuation line without a field" },
    { "# first\nTypes: deb\nURIs: http://example.invalid/debian\nnot a field\n",
      "test:4: expected \"Field: value\", got \"not a field\"" },
    { "Types: deb\nURIs: http://example.invalid/debian\nSuites: bookworm\nComponents: main\n"
      "\n \t\nTypes: deb\nURIs: x\n",
      "test:7: stanza needs \"URIs:\" and \"Suites:\"" },
    { "Types: deb\nURIs: http://example.invalid/debian\n\nnot a field\n",
      "test:1: stanza needs \"URIs:\" and \"Suites:\"" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SourcesList) list = parse (bad[i].text, TRUE, &error);
      g_assert_null (list);
      g_assert_cmpstr (error->message, ==, bad[i].error);
    }

  g_autoptr(GError) error = NULL;
  g_autoptr(SourcesList) list = parse (
      "Types: deb\r\nURIs:\r\n  http://example.invalid/debian \r\n\thttp://example.invalid/b\r\n"
      "Suites : bookworm\r\nComponents: main\r\nSigned-By:\r\n   -----BEGIN PGP PUBLIC KEY BLOCK-----\r\n"
      " .\r\n   x  \r\n -----END PGP PUBLIC KEY BLOCK-----\r\n",
      TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (list->sources->len, ==, 1);
  Source *s = list->sources->pdata[0];
  g_assert_cmpstr (s->suite, ==, "bookworm");
  g_assert_cmpstr (s->uris[0], ==, "http://example.invalid/debian");
  g_assert_cmpstr (s->uris[1], ==, "http://example.invalid/b");
  g_assert_cmpstr (s->signed_by, ==, "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nx\n"
                                     "-----END PGP PUBLIC KEY BLOCK-----");
}

/* The same syntax as dpkg's status and copyright files are read
 * (deb822_parse): lines that are no field are skipped, a continuation line
 * keeps all but its first character. */
static void
test_deb822_lenient (void)
{
  g_autoptr(GPtrArray) stanzas = deb822_parse (
      "Package: a\nnot a field\nDescription: short\n  indented\n .\n body\n"
      "# comment\n \t \n orphan: line\nPackage: b\nStatus: install ok installed\n");
  g_assert_cmpuint (stanzas->len, ==, 2);
  g_assert_cmpstr (g_hash_table_lookup (stanzas->pdata[0], "package"), ==, "a");
  g_assert_cmpstr (g_hash_table_lookup (stanzas->pdata[0], "description"), ==,
                   "short\n indented\n\nbody");
  g_autofree char *first = deb822_first_line (stanzas->pdata[0], "description");
  g_assert_cmpstr (first, ==, "short");
  g_assert_cmpuint (g_hash_table_size (stanzas->pdata[1]), ==, 2);
  g_assert_cmpstr (g_hash_table_lookup (stanzas->pdata[1], "status"), ==, "install ok installed");
}

static void
test_deb822_format (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SourcesList) list = load_text (
      "Types: deb deb-src\n"
      "URIs: http://example.invalid/debian\n"
      "Suites: bookworm bookworm-updates\n"
      "Components: main\n"
      "Signed-By:\n"
      " -----BEGIN PGP PUBLIC KEY BLOCK-----\n"
      " .\n"
      " abc\n"
      " -----END PGP PUBLIC KEY BLOCK-----\n"
      "\n"
      "# a disabled stanza\n"
      "Types: deb\n"
      "Enabled: no\n"
      "URIs: http://example.invalid/other\n"
      "Suites: sid\n"
      "Components: main\n"
      "\n"
      "Types: deb\n"
      "X-Name: l4t\n"
      "URIs: http://example.invalid/l4t\n"
      "Suites: r32.4\n"
      "Components: main\n"
      "Architectures: arm64\n"
      "Pin-Priority: 990\n",
      ".sources", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (list->sources->len, ==, 3);
  Source *s = list->sources->pdata[0];
  g_assert_cmpstr (s->name, ==, "bookworm");
  g_assert_cmpstr (s->signed_by, ==,
                   "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nabc\n-----END PGP PUBLIC KEY BLOCK-----");
  g_assert_cmpstr (((Source *) list->sources->pdata[1])->name, ==, "bookworm-updates");
  s = list->sources->pdata[2];
  g_assert_cmpstr (s->name, ==, "l4t");
  g_assert_cmpint (s->pin_priority, ==, 990);

  sources_list_filter_arch (list, "amd64");
  g_assert_cmpuint (list->sources->len, ==, 2);
}

static void
test_names_disambiguate_by_components (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SourcesList) list = load_text (
      "deb http://a.invalid/debian stable main\n"
      "deb http://b.invalid/repo stable main non-free\n"
      "deb http://a.invalid/debian stable contrib\n",
      ".list", &error);
  g_assert_no_error (error);
  /* The first and third merge (same URI and suite). */
  g_assert_cmpuint (list->sources->len, ==, 2);
  g_assert_cmpstr (((Source *) list->sources->pdata[0])->name, ==, "stable-main-contrib");
  g_assert_cmpstr (((Source *) list->sources->pdata[1])->name, ==, "stable-main-non-free");

  g_autoptr(SourcesList) clash = load_text ("deb http://a.invalid/x stable main\n"
                                            "deb http://b.invalid/y stable main\n", ".list", &error);
  g_assert_null (clash);
  g_assert_nonnull (strstr (error->message, "both named \"stable-main\""));
}

static void
test_select_and_mirrors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SourcesList) list = load_text ("deb http://a.invalid/d bookworm main\n"
                                           "deb http://a.invalid/d bookworm-updates main\n",
                                           ".list", &error);
  g_assert_no_error (error);
  const char *mirrors[] = { "bookworm=http://m.invalid/debian/", "extra=file:///srv/x", NULL };
  g_assert_true (sources_list_apply_mirrors (list, mirrors, NULL, NULL, &error));
  g_assert_cmpstr (sources_list_lookup (list, "bookworm")->uri, ==, "http://m.invalid/debian");
  g_assert_cmpstr (sources_list_lookup (list, "extra")->uri, ==, "file:///srv/x");
  const char *bad[] = { "nonsense", NULL };
  g_assert_false (sources_list_apply_mirrors (list, bad, NULL, NULL, &error));
  g_assert_nonnull (strstr (error->message, "expected NAME=URI"));
  g_clear_error (&error);
  /* A name outside NAMES is an error listing them; a scheme not fetched too. */
  const char *known[] = { "bookworm", "extra", NULL };
  const char *typo[] = { "bookwrom=http://m.invalid/debian", NULL };
  g_assert_false (sources_list_apply_mirrors (list, typo, known, "the lockfile x", &error));
  g_assert_nonnull (strstr (error->message, "no source named \"bookwrom\" in the lockfile x, whose "
                                            "sources are \"bookworm\", \"extra\""));
  g_clear_error (&error);
  const char *ftp[] = { "bookworm=ftp://m.invalid/debian", NULL };
  g_assert_false (sources_list_apply_mirrors (list, ftp, known, "the lockfile x", &error));
  g_assert_nonnull (strstr (error->message, "\"ftp:\""));
  g_clear_error (&error);

  const char *names[] = { "bookworm-updates", "bookworm", NULL };
  g_assert_true (sources_list_select (list, names, &error));
  g_assert_cmpuint (list->sources->len, ==, 2);
  g_assert_cmpstr (((Source *) list->sources->pdata[0])->name, ==, "bookworm-updates");
  const char *missing[] = { "sid", NULL };
  g_assert_false (sources_list_select (list, missing, &error));
  g_assert_nonnull (strstr (error->message, "no source named \"sid\""));
}

static void
test_named_stanza_and_keys (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SourcesList) list = load_text ("Types: deb\n"
                                           "X-Name: debian\n"
                                           "URIs: http://a.invalid/debian\n"
                                           "Suites: bookworm bookworm/updates\n"
                                           "Components: main\n"
                                           "Signed-By: /k/one.gpg, /k/two.asc\n",
                                           ".sources", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (((Source *) list->sources->pdata[0])->name, ==, "debian-bookworm");
  /* "/" in a suite becomes "-" in the name, as in a name derived from it. */
  g_assert_cmpstr (((Source *) list->sources->pdata[1])->name, ==, "debian-bookworm-updates");

  g_autoptr(GPtrArray) keys = release_source_keys (list->sources->pdata[0], &error);
  g_assert_no_error (error);
  g_assert_cmpuint (keys->len, ==, 2);
  g_assert_cmpstr (keys->pdata[1], ==, "/k/two.asc");

  Source *s = list->sources->pdata[1];
  g_free (s->signed_by);
  s->signed_by = g_strdup ("A4285295FC7B1A81600062A9605C66F00D6C9793");
  g_autoptr(GPtrArray) none = release_source_keys (s, &error);
  g_assert_null (none);
  g_assert_nonnull (strstr (error->message, "not a fingerprint"));
}

static void
test_release_parse_and_dates (void)
{
  g_autoptr(GError) error = NULL;
  const char *text =
      "Origin: Debian\n"
      "Suite: stable\n"
      "Codename: bookworm\n"
      "Version: 12.5\n"
      "Date: Sat, 10 Feb 2024 09:34:32 UTC\n"
      "Valid-Until: Sat, 17 Feb 2024 09:34:32 +0100\n"
      "Acquire-By-Hash: yes\n"
      "No-Support-for-Architecture-all: Packages\n"
      "Architectures: all amd64 arm64\n"
      "Components: main contrib\n"
      "SHA256:\n"
      " 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef  1234 main/binary-amd64/Packages\n"
      " ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789    99 main/binary-amd64/Packages.xz\n";
  g_autoptr(Release) r = release_parse (text, "Release", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (r->codename, ==, "bookworm");
  g_assert_true (r->acquire_by_hash);
  g_assert_true (r->no_support_arch_all);
  ReleaseEntry *e = g_hash_table_lookup (r->entries, "main/binary-amd64/Packages.xz");
  g_assert_nonnull (e);
  g_assert_cmpint (e->size, ==, 99);
  g_assert_cmpstr (e->sha256, ==, "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789");

  gint64 t;
  g_assert_true (release_parse_date (r->date, &t));
  g_assert_cmpint (t, ==, 1707557672);
  g_assert_true (release_parse_date (r->valid_until, &t));
  g_assert_cmpint (t, ==, 1707557672 + 7 * 86400 - 3600);
  g_assert_false (release_parse_date ("yesterday", &t));

  g_autoptr(Release) bad = release_parse ("Origin: x\n", "Release", &error);
  g_assert_null (bad);
  g_assert_nonnull (strstr (error->message, "no SHA256"));
}

static Lockfile *
sample_lockfile (void)
{
  Lockfile *lock = lockfile_new ();
  const char *packages[] = { "apt", "hello=1.0", NULL };
  const char *sources[] = { "bookworm", NULL };
  lock->request.packages = g_strdupv ((char **) packages);
  lock->request.variant = g_strdup ("minbase");
  lock->request.architecture = g_strdup ("amd64");
  lock->request.sources = g_strdupv ((char **) sources);
  lock->request.merged_usr = g_strdup ("auto");
  lock->merged_usr = TRUE;

  LockSource *s = g_new0 (LockSource, 1);
  s->name = g_strdup ("bookworm");
  s->suite = g_strdup ("bookworm");
  s->codename = g_strdup ("bookworm");
  s->components = g_strsplit ("main", " ", -1);
  s->architectures = g_strsplit ("amd64", " ", -1);
  s->pin_priority = 500;
  s->origin = g_strdup ("Debian \"quoted\"");
  s->fingerprint = g_strdup ("4D64FEC119C2029067D6E791F8D2585B8783D481");
  s->inrelease_sha256 = g_strnfill (64, '0');
  s->date = g_strdup ("Sat, 10 Feb 2024 09:34:32 UTC");
  g_ptr_array_add (lock->sources, s);

  const char *names[] = { "zlib1g", "apt", "libc6", "libc6" };
  const char *archs[] = { "amd64", "amd64", "i386", "amd64" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      LockPackage *p = g_new0 (LockPackage, 1);
      p->name = g_strdup (names[i]);
      p->version = g_strdup ("1:2.0~rc1");
      p->architecture = g_strdup (archs[i]);
      p->source = g_strdup ("bookworm");
      p->filename = g_strdup_printf ("pool/main/x/%s.deb", names[i]);
      p->size = 1234;
      p->sha256 = g_strnfill (64, 'a');
      p->essential = i == 0;
      p->multi_arch = g_strdup ("same");
      g_ptr_array_add (lock->packages, p);
      g_ptr_array_add (lock->install_order, g_str_equal (names[i], "libc6")
                                              ? g_strdup_printf ("libc6:%s", archs[i])
                                              : g_strdup (names[i]));
    }
  lockfile_sort (lock);
  return lock;
}

static void
test_lockfile_round_trip (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(Lockfile) lock = sample_lockfile ();
  g_autofree char *text = lockfile_to_string (lock);

  /* One package a line, sorted by name then architecture. */
  const char *apt = strstr (text, "{\"name\": \"apt\"");
  const char *libc_amd64 = strstr (text, "{\"name\": \"libc6\", \"version\": \"1:2.0~rc1\", \"architecture\": \"amd64\"");
  g_assert_nonnull (strstr (text, "\"origin\": \"Debian \\\"quoted\\\"\""));
  const char *libc_i386 = strstr (text, "\"architecture\": \"i386\"");
  g_assert_nonnull (apt);
  g_assert_nonnull (libc_amd64);
  g_assert_true (apt < libc_amd64 && libc_amd64 < libc_i386);

  g_autofree char *dir = g_dir_make_tmp ("lockfile-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "x.lock.json", NULL);
  g_assert_true (lockfile_write (lock, path, &error));
  g_autoptr(Lockfile) loaded = lockfile_load (path, &error);
  g_assert_no_error (error);
  g_autofree char *again = lockfile_to_string (loaded);
  g_assert_cmpstr (text, ==, again);

  g_autoptr(SourcesList) sources = parse ("deb [name=bookworm] http://m.invalid/debian/ bookworm main\n",
                                          FALSE, &error);
  g_assert_no_error (error);
  LockPackage *p = lockfile_lookup_package (loaded, "zlib1g", NULL);
  g_auto(GStrv) url = lockfile_package_urls (loaded, p, sources, &error);
  g_assert_cmpstr (url[0], ==, "http://m.invalid/debian/pool/main/x/zlib1g.deb");
  g_assert_null (url[1]);

  /* A source with several URIs: each, in order. */
  g_autoptr(SourcesList) two = parse ("X-Name: bookworm\nTypes: deb\nURIs: http://a.invalid/debian http://b.invalid/snap\n"
                                      "Suites: bookworm\nComponents: main\n", TRUE, &error);
  g_assert_no_error (error);
  g_auto(GStrv) both = lockfile_package_urls (loaded, p, two, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (both[0], ==, "http://a.invalid/debian/pool/main/x/zlib1g.deb");
  g_assert_cmpstr (both[1], ==, "http://b.invalid/snap/pool/main/x/zlib1g.deb");
  g_assert_null (both[2]);

  /* A recorded URI (--record-uris) serves when the configuration has none. */
  LockSource *ls = lockfile_lookup_source (loaded, "bookworm");
  ls->uri = g_strdup ("http://recorded.invalid/debian");
  g_auto(GStrv) recorded = lockfile_package_urls (loaded, p, NULL, &error);
  g_assert_cmpstr (recorded[0], ==, "http://recorded.invalid/debian/pool/main/x/zlib1g.deb");
  g_auto(GStrv) configured = lockfile_package_urls (loaded, p, sources, &error);
  g_assert_cmpstr (configured[0], ==, "http://m.invalid/debian/pool/main/x/zlib1g.deb");
  g_clear_pointer (&ls->uri, g_free);

  g_free (p->source);
  p->source = g_strdup ("elsewhere");
  g_auto(GStrv) none = lockfile_package_urls (loaded, p, sources, &error);
  g_assert_null (none);
  g_assert_nonnull (strstr (error->message, "--mirror elsewhere=URI"));
  g_clear_error (&error);

  /* An install order that does not match the packages is damage too. */
  g_autofree char *bad_order = g_strdup (text);
  char *entry = strstr (bad_order, "    \"zlib1g\"");
  g_assert_nonnull (entry);
  memcpy (entry + 5, "zlib1x", 6);
  g_assert_true (g_file_set_contents (path, bad_order, -1, NULL));
  g_assert_null (lockfile_load (path, &error));
  g_assert_nonnull (strstr (error->message, "install-order names \"zlib1x\""));
  g_clear_error (&error);

  /* A damaged lockfile names what is wrong. */
  g_autofree char *damaged = g_strdup (text);
  char *sha = strstr (damaged, "\"sha256\": \"a");
  sha[12] = 'Z';
  g_assert_true (g_file_set_contents (path, damaged, -1, NULL));
  g_autoptr(Lockfile) bad = lockfile_load (path, &error);
  g_assert_null (bad);
  g_assert_nonnull (strstr (error->message, "\"sha256\""));
  unlink (path);
  rmdir (dir);
}

static void
test_relative_paths (void)
{
  g_autofree char *a = lockfile_relative_path ("/x/y/sources", "/x/z/out.lock.json");
  g_assert_cmpstr (a, ==, "../y/sources");
  g_autofree char *b = lockfile_relative_path ("/x/z/sources", "/x/z/out.lock.json");
  g_assert_cmpstr (b, ==, "sources");
}

/* --suite: the sources named after their suite move to another release of
 * the same archives; named sources stay; sid has no -updates/-security. */
static void
test_set_suite (void)
{
  const char *host =
      "deb http://example.invalid/debian bookworm main\n"
      "deb http://example.invalid/debian bookworm-updates main\n"
      "deb http://example.invalid/debian-security bookworm-security main\n"
      "deb [name=l4t] http://example.invalid/l4t r36.4 main\n";
  static const struct {
    const char *suite;
    const char *expected;  /* "NAME=SUITE@URI ..." */
  } cases[] = {
    { "trixie", "trixie=trixie@http://example.invalid/debian "
                "trixie-updates=trixie-updates@http://example.invalid/debian "
                "trixie-security=trixie-security@http://example.invalid/debian-security "
                "l4t=r36.4@http://example.invalid/l4t" },
    { "bookworm", "bookworm=bookworm@http://example.invalid/debian "
                  "bookworm-updates=bookworm-updates@http://example.invalid/debian "
                  "bookworm-security=bookworm-security@http://example.invalid/debian-security "
                  "l4t=r36.4@http://example.invalid/l4t" },
    { "sid", "sid=sid@http://example.invalid/debian l4t=r36.4@http://example.invalid/l4t" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SourcesList) list = load_text (host, ".list", &error);
      g_assert_no_error (error);
      g_assert_true (sources_list_set_suite (list, cases[i].suite, &error));
      g_assert_no_error (error);
      g_autoptr(GString) got = g_string_new (NULL);
      for (guint j = 0; j < list->sources->len; j++)
        {
          Source *s = list->sources->pdata[j];
          g_string_append_printf (got, "%s%s=%s@%s", j > 0 ? " " : "", s->name, s->suite, s->uri);
        }
      g_assert_cmpstr (got->str, ==, cases[i].expected);
    }

  const char *bad[] = { "", "Trixie", "trixie-updates", "a/b", "x y", "../sid" };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SourcesList) list = load_text (host, ".list", &error);
      g_assert_false (sources_list_set_suite (list, bad[i], &error));
      g_assert_nonnull (strstr (error->message, "--suite"));
    }

  g_autoptr(GError) error = NULL;
  g_autoptr(SourcesList) named = load_text ("deb [name=l4t] http://example.invalid/l4t r36.4 main\n",
                                            ".list", &error);
  g_assert_false (sources_list_set_suite (named, "trixie", &error));
  g_assert_nonnull (strstr (error->message, "has a name of its own"));
}

/* The committed example lockfiles load, and are in the canonical layout
 * (writing what was read gives the same bytes). */
static void
test_committed_lockfiles (void)
{
  const char *top = g_getenv ("TOP_SRCDIR");
  if (top == NULL)
    {
      g_test_skip ("TOP_SRCDIR is not set");
      return;
    }
  const char *names[] = { "bookworm-minbase-amd64", "bookworm-minbase-arm64",
                          "trixie-minbase-amd64", "trixie-minbase-arm64" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *path = g_build_filename (top, "lockfiles", names[i], "packages.lock.json", NULL);
      g_autoptr(Lockfile) lock = lockfile_load (path, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (lock->packages->len, >, 50);
      g_assert_cmpuint (lock->install_order->len, ==, lock->packages->len);
      g_assert_true (lock->merged_usr);
      g_assert_null (lock->request.sources_file);
      g_assert_nonnull (lockfile_lookup_package (lock, "libc6", NULL));
      if (g_str_has_prefix (names[i], "trixie"))
        g_assert_cmpstr (lock->request.suite, ==, "trixie");
      g_autofree char *text = NULL;
      g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
      g_autofree char *again = lockfile_to_string (lock);
      g_assert_cmpstr (text, ==, again);
      g_assert_null (strstr (text, "://"));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sources/one-line", test_one_line_format);
  g_test_add_func ("/sources/deb822", test_deb822_format);
  g_test_add_func ("/sources/deb822-syntax", test_deb822_syntax);
  g_test_add_func ("/deb822/lenient", test_deb822_lenient);
  g_test_add_func ("/sources/names", test_names_disambiguate_by_components);
  g_test_add_func ("/sources/mirrors", test_select_and_mirrors);
  g_test_add_func ("/sources/named-stanza-and-keys", test_named_stanza_and_keys);
  g_test_add_func ("/sources/set-suite", test_set_suite);
  g_test_add_func ("/release/parse", test_release_parse_and_dates);
  g_test_add_func ("/lockfile/round-trip", test_lockfile_round_trip);
  g_test_add_func ("/lockfile/relative-paths", test_relative_paths);
  g_test_add_func ("/lockfile/committed-examples", test_committed_lockfiles);
  return g_test_run ();
}
