/* Unit tests for unpack-deb's core that need no server: the ref naming
 * scheme (deb_ref_name), info file names, fetch over file://, and content
 * checksums computed without libostree. */
#include "config.h"

#include <ostree.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/content.h"
#include "barestore/objects.h"
#include "deb/deb.h"
#include "apt/fetch.h"
#include "base/util.h"
#include "base/sha256.h"

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
  g_assert_true (cache_is_sha256 (SHA));
  g_assert_false (cache_is_sha256 ("0123"));
  g_assert_false (cache_is_sha256 (NULL));
  g_assert_false (cache_is_sha256 ("g123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
  g_assert_true (cache_is_url ("https://x/y"));
  g_assert_true (cache_is_url ("file:///x"));
  g_assert_false (cache_is_url ("/x.deb"));
}

/* sha256_* against GLib's SHA-256, across sizes, in pieces, and reused after
 * a reset. */
static void
test_sha256_matches_glib (void)
{
  g_autofree guint8 *data = g_malloc (300001);
  for (gsize i = 0; i < 300001; i++)
    data[i] = (guint8) (i * 31 + (i >> 11));
  static const gsize sizes[] = { 0, 3, 55, 56, 64, 1000, 300001 };
  g_autoptr(Sha256) sha = sha256_new ();
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      sha256_reset (sha);
      for (gsize off = 0; off < sizes[s]; off += 4097)
        sha256_update (sha, data + off, MIN (4097, sizes[s] - off));
      g_autofree char *ours = sha256_finish_hex (sha);
      g_autofree char *glib = g_compute_checksum_for_data (G_CHECKSUM_SHA256, data, sizes[s]);
      g_assert_cmpstr (ours, ==, glib);
    }
  sha256_reset (sha);
  sha256_update (sha, "abc", 3);
  g_autofree char *abc = sha256_finish_hex (sha);
  g_assert_cmpstr (abc, ==, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
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

  g_autofree char *sum = cache_sha256_file (path, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sum, ==, ABC_SHA);

  g_autoptr(GBytes) bytes = fetch_bytes (url, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), "abc", 3);

  g_autofree char *missing = g_strdup_printf ("file://%s/missing", dir);
  g_autoptr(GBytes) none = fetch_bytes (missing, NULL, &error);
  g_assert_null (none);
  g_assert_error (error, UTIL_ERROR, UTIL_ERROR_NOT_FOUND);
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

/* content_checksum() agrees with libostree's own checksum of the same file,
 * for empty and large data, odd modes, owners and xattrs. */
static void
test_content_checksum_matches_ostree (void)
{
  static const gsize sizes[] = { 0, 1, 63, 64, 65, 4096, 1000003 };
  static const guint32 modes[] = { 0644, 04755, 02750, 0600, 01777 };
  g_autofree guint8 *data = g_malloc (1000003);
  for (gsize i = 0; i < 1000003; i++)
    data[i] = (guint8) (i * 7919 + (i >> 9));

  GVariantBuilder builder;
  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a(ayay)"));
  g_variant_builder_add (&builder, "(@ay@ay)", g_variant_new_bytestring ("security.capability"),
                         g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, "\1\0\0\2", 4, 1));
  g_variant_builder_add (&builder, "(@ay@ay)", g_variant_new_bytestring ("user.a"),
                         g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, "x", 1, 1));
  g_autoptr(GVariant) xattrs = g_variant_ref_sink (g_variant_builder_end (&builder));

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
      for (guint x = 0; x < 2; x++)
        {
          guint32 uid = m * 1000, gid = s * 77;
          GVariant *xa = x ? xattrs : NULL;
          g_autoptr(GError) error = NULL;
          g_autofree char *ours = content_checksum (uid, gid, modes[m], xa, data, sizes[s], &error);
          g_assert_no_error (error);

          g_autoptr(GFileInfo) info = g_file_info_new ();
          g_file_info_set_file_type (info, G_FILE_TYPE_REGULAR);
          g_file_info_set_size (info, sizes[s]);
          g_file_info_set_attribute_uint32 (info, "unix::uid", uid);
          g_file_info_set_attribute_uint32 (info, "unix::gid", gid);
          g_file_info_set_attribute_uint32 (info, "unix::mode", S_IFREG | modes[m]);
          g_autoptr(GInputStream) in = g_memory_input_stream_new_from_data (data, sizes[s], NULL);
          g_autofree guchar *csum = NULL;
          g_assert_true (ostree_checksum_file_from_input (info, xa, in, OSTREE_OBJECT_TYPE_FILE,
                                                          &csum, NULL, &error));
          g_assert_no_error (error);
          g_autofree char *theirs = ostree_checksum_from_bytes (csum);
          g_assert_cmpstr (ours, ==, theirs);
        }
}

/* The libostree sink's regular() stores the object under the checksum libostree
 * would give it, writes nothing for an object already there, and the
 * object reads back with its data and metadata. */
static void
test_content_write_regular (void)
{
  g_autofree char *dir = g_dir_make_tmp ("a2o-content-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "repo", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(OstreeRepo) repo = ostree_repo_new (file);
  g_autoptr(GError) error = NULL;
  OstreeRepoMode mode = getuid () == 0 ? OSTREE_REPO_MODE_BARE : OSTREE_REPO_MODE_BARE_USER;
  g_assert_true (ostree_repo_create (repo, mode, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (ostree_repo_prepare_transaction (repo, NULL, NULL, &error));
  g_autofree StoreSink *sink = content_ostree_sink_new (repo, NULL);

  static const char text[] = "hello, content\n";
  g_autofree char *expected = content_checksum (0, 0, 04755, NULL, (const guint8 *) text,
                                                sizeof text - 1, &error);
  g_autofree char *written = sink->regular (sink, NULL, 0, 0, 04755, NULL, (const guint8 *) text,
                                            sizeof text - 1, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (written, ==, expected);
  g_autoptr(GHashTable) headers = objects_headers_new ();
  g_autofree char *again = sink->regular (sink, headers, 0, 0, 04755, NULL, (const guint8 *) text,
                                          sizeof text - 1, &error);
  g_assert_cmpstr (again, ==, expected);
  g_assert_true (ostree_repo_commit_transaction (repo, NULL, NULL, &error));
  g_assert_no_error (error);

  g_autoptr(GInputStream) in = NULL;
  g_autoptr(GFileInfo) info = NULL;
  g_assert_true (ostree_repo_load_file (repo, written, &in, &info, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (g_file_info_get_attribute_uint32 (info, "unix::mode"), ==, S_IFREG | 04755);
  char buf[64];
  gsize got = 0;
  g_assert_true (g_input_stream_read_all (in, buf, sizeof buf, &got, NULL, &error));
  g_assert_cmpmem (buf, got, text, sizeof text - 1);

  /* And libostree, checksumming it again, finds it intact. */
  g_autoptr(GInputStream) in2 = NULL;
  g_autoptr(GFileInfo) info2 = NULL;
  g_autoptr(GVariant) xattrs2 = NULL;
  g_assert_true (ostree_repo_load_file (repo, written, &in2, &info2, &xattrs2, NULL, &error));
  g_autofree guchar *csum = NULL;
  g_assert_true (ostree_checksum_file_from_input (info2, xattrs2, in2, OSTREE_OBJECT_TYPE_FILE,
                                                  &csum, NULL, &error));
  g_autofree char *recomputed = ostree_checksum_from_bytes (csum);
  g_assert_cmpstr (recomputed, ==, written);

  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_cmpint (system (rm), ==, 0);
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
  g_test_add_func ("/sha256/matches-glib", test_sha256_matches_glib);
  g_test_add_func ("/content/checksum-matches-ostree", test_content_checksum_matches_ostree);
  g_test_add_func ("/content/write-regular", test_content_write_regular);
  return g_test_run ();
}
