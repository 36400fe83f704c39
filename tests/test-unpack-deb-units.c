/* Unit tests for unpack-deb's core that need no server: the ref naming
 * scheme (deb_ref_name), info file names, and fetch over file://. */
#include "config.h"

#include <ostree.h>
#include <string.h>
#include <unistd.h>

#include "deb.h"
#include "fetch.h"

#define SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void
test_ref_name_plain (void)
{
  g_autofree char *ref = deb_ref_name ("hostname", "3.23", "amd64", SHA);
  g_assert_cmpstr (ref, ==, "deb/hostname/3.23/amd64/" SHA);
}

static void
test_ref_name_escapes (void)
{
  g_autofree char *ref = deb_ref_name ("libstdc++6", "1:2.3+b1~rc1-1", "all", SHA);
  g_assert_cmpstr (ref, ==, "deb/libstdc_2b_2b6/1_3a2.3_2bb1_7erc1-1/all/" SHA);
}

static void
test_ref_name_uppercase_sha_is_lowered (void)
{
  g_autofree char *upper = g_ascii_strup (SHA, -1);
  g_autofree char *ref = deb_ref_name ("a", "1", "amd64", upper);
  g_assert_true (g_str_has_suffix (ref, "/" SHA));
}

/* Every Debian version, however odd, gives a valid ref, and different
 * inputs never give the same ref. */
static void
test_ref_name_valid_and_distinct (void)
{
  static const char *const versions[] = {
    "1.0", "1:1.0", "1.0+dfsg-1", "1.0~rc1", "1.0-1+deb12u1", "2:1.0~~a+b.c-0ubuntu1~18.04.1",
    "0.0.0-0", "1.0+1", "1.0_2b1", "10:0", "1.0-1~bpo12+1", NULL
  };
  static const char *const names[] = { "a", "g++", "libc6", "x.y-z", NULL };
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (const char *const *n = names; *n; n++)
    for (const char *const *v = versions; *v; v++)
      {
        g_autofree char *ref = deb_ref_name (*n, *v, "amd64", SHA);
        g_autoptr(GError) error = NULL;
        if (!ostree_validate_rev (ref, &error))
          g_error ("%s %s -> %s: %s", *n, *v, ref, error->message);
        g_assert_false (g_hash_table_contains (seen, ref));
        g_hash_table_add (seen, g_steal_pointer (&ref));
      }
}

static void
test_info_basename (void)
{
  g_autofree char *same = deb_info_basename ("libc6", "amd64", "same");
  g_autofree char *foreign = deb_info_basename ("bash", "amd64", "foreign");
  g_autofree char *none = deb_info_basename ("bash", "amd64", NULL);
  g_assert_cmpstr (same, ==, "libc6:amd64");
  g_assert_cmpstr (foreign, ==, "bash");
  g_assert_cmpstr (none, ==, "bash");
}

static void
test_sha256_helpers (void)
{
  g_assert_true (fetch_is_sha256 (SHA));
  g_assert_false (fetch_is_sha256 ("0123"));
  g_assert_false (fetch_is_sha256 (NULL));
  g_assert_false (fetch_is_sha256 ("g123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
  g_assert_true (fetch_is_url ("https://x/y"));
  g_assert_true (fetch_is_url ("file:///x"));
  g_assert_false (fetch_is_url ("/x.deb"));
}

/* A scratch directory with one file "abc" holding "abc". */
static char *
scratch_with_abc (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("a2o-fetch-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *path = g_build_filename (dir, "abc", NULL);
  g_assert_true (g_file_set_contents (path, "abc", 3, NULL));
  return dir;
}

static guint
count_files (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  guint n = 0;
  while (g_dir_read_name (d) != NULL)
    n++;
  return n;
}

#define ABC_SHA "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

static void
test_fetch_file_urls (void)
{
  g_autofree char *dir = scratch_with_abc ();
  g_autofree char *url = g_strdup_printf ("file://%s/abc", dir);
  g_autofree char *path = g_build_filename (dir, "abc", NULL);
  g_autoptr(GError) error = NULL;

  g_autofree char *sum = fetch_sha256_file (path, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sum, ==, ABC_SHA);

  g_autoptr(GBytes) bytes = fetch_bytes (url, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), "abc", 3);

  g_autofree char *missing = g_strdup_printf ("file://%s/missing", dir);
  g_autoptr(GBytes) none = fetch_bytes (missing, NULL, &error);
  g_assert_null (none);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* A good download lands under its name; a bad one leaves nothing. */
  g_autofree char *dest = g_build_filename (dir, "copy", NULL);
  FetchOptions good = { ABC_SHA, 3, FALSE };
  g_assert_true (fetch_to_file (url, dest, &good, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_test (dest, G_FILE_TEST_IS_REGULAR));
  g_assert_cmpuint (count_files (dir), ==, 2);

  g_autofree char *dest2 = g_build_filename (dir, "copy2", NULL);
  FetchOptions bad_sum = { SHA, -1, FALSE };
  g_assert_false (fetch_to_file (url, dest2, &bad_sum, NULL, &error));
  g_assert_nonnull (strstr (error->message, "sha256 mismatch"));
  g_assert_nonnull (strstr (error->message, url));
  g_clear_error (&error);
  FetchOptions bad_size = { NULL, 4, FALSE };
  g_assert_false (fetch_to_file (url, dest2, &bad_size, NULL, &error));
  g_assert_nonnull (strstr (error->message, "size mismatch"));
  g_clear_error (&error);
  g_assert_cmpuint (count_files (dir), ==, 2);

  /* The cache: stored under the sha256, found again without the URL. */
  g_autofree char *cache = g_build_filename (dir, "cache", NULL);
  g_autofree char *cached = fetch_cached (url, cache, NULL, -1, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_suffix (cached, "/" ABC_SHA));
  g_autofree char *again = fetch_cached ("file:///nonexistent", cache, ABC_SHA, 3, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (again, ==, cached);
  g_autofree char *wrong = fetch_cached (url, cache, SHA, -1, NULL, &error);
  g_assert_null (wrong);
  g_clear_error (&error);
  g_assert_cmpuint (count_files (cache), ==, 1);

  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_cmpint (system (cmd), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/deb/ref-name/plain", test_ref_name_plain);
  g_test_add_func ("/deb/ref-name/escapes", test_ref_name_escapes);
  g_test_add_func ("/deb/ref-name/uppercase-sha", test_ref_name_uppercase_sha_is_lowered);
  g_test_add_func ("/deb/ref-name/valid-and-distinct", test_ref_name_valid_and_distinct);
  g_test_add_func ("/deb/info-basename", test_info_basename);
  g_test_add_func ("/fetch/sha256-helpers", test_sha256_helpers);
  g_test_add_func ("/fetch/file-urls", test_fetch_file_urls);
  return g_test_run ();
}
