/* Debian's grammar for names, versions and architectures: a table of
 * values dpkg accepts and values it refuses. */
#include "config.h"

#include <string.h>

#include "base/debpolicy.h"

typedef struct {
  const char *(*check) (const char *);
  const char *value;
  gboolean ok;
} Case;

static const Case cases[] = {
  { debpolicy_name_problem, "libc6", TRUE },
  { debpolicy_name_problem, "g++-12", TRUE },
  { debpolicy_name_problem, "libstdc++6", TRUE },
  { debpolicy_name_problem, "python3.11", TRUE },
  { debpolicy_name_problem, "nvidia-l4t_core", TRUE },
  { debpolicy_name_problem, "", FALSE },
  { debpolicy_name_problem, "a/b", FALSE },
  { debpolicy_name_problem, "../../etc", FALSE },
  { debpolicy_name_problem, "-rf", FALSE },
  { debpolicy_name_problem, "a b", FALSE },
  { debpolicy_name_problem, "a\nb", FALSE },
  { debpolicy_name_problem, "a$b", FALSE },
  { debpolicy_version_problem, "2.36-9+deb12u4", TRUE },
  { debpolicy_version_problem, "1:2.38.1-5+deb12u3", TRUE },
  { debpolicy_version_problem, "3.23+nmu1", TRUE },
  { debpolicy_version_problem, "1.0~rc1-1ubuntu0.18.04.1", TRUE },
  { debpolicy_version_problem, "35.4.1-20230801124926", TRUE },
  { debpolicy_version_problem, "1:2:3-4", TRUE },
  { debpolicy_version_problem, "1.2-3-4", TRUE },
  { debpolicy_version_problem, "", FALSE },
  { debpolicy_version_problem, "3.23+nmu1\n  command = touch /tmp/pwned #", FALSE },
  { debpolicy_version_problem, "1.0 2", FALSE },
  { debpolicy_version_problem, "a:1.0", FALSE },
  { debpolicy_version_problem, ":1.0", FALSE },
  { debpolicy_version_problem, "1:", FALSE },
  { debpolicy_version_problem, "1.0-", FALSE },
  { debpolicy_version_problem, "1.0-1:2", FALSE },
  { debpolicy_version_problem, "1.0/../x", FALSE },
  { debpolicy_version_problem, "1.0$(id)", FALSE },
  { debpolicy_version_problem, "2:1.0;rm", FALSE },
  { debpolicy_release_problem, "trixie", TRUE },
  { debpolicy_release_problem, "sid", TRUE },
  { debpolicy_release_problem, "22.04", TRUE },
  { debpolicy_release_problem, "trixie-security", FALSE },
  { debpolicy_release_problem, "Trixie", FALSE },
  { debpolicy_release_problem, "../sid", FALSE },
  { debpolicy_release_problem, "sid\n", FALSE },
  { debpolicy_arch_problem, "amd64", TRUE },
  { debpolicy_arch_problem, "all", TRUE },
  { debpolicy_arch_problem, "hurd-i386", TRUE },
  { debpolicy_arch_problem, "", FALSE },
  { debpolicy_arch_problem, "AMD64", FALSE },
  { debpolicy_arch_problem, "amd64/../x", FALSE },
  { debpolicy_arch_problem, "-amd64", FALSE },
  { debpolicy_arch_problem, "amd64\n", FALSE },
  { debpolicy_request_problem, "libc6", TRUE },
  { debpolicy_request_problem, "libc6:arm64", TRUE },
  { debpolicy_request_problem, "libc6=2.36-9+deb12u4", TRUE },
  { debpolicy_request_problem, "libc6:i386=1:2.36-9", TRUE },
  { debpolicy_request_problem, "libc6=", FALSE },
  { debpolicy_request_problem, "libc6:", FALSE },
  { debpolicy_request_problem, "libc6:AMD64", FALSE },
  { debpolicy_request_problem, "libc6=1.0;id", FALSE },
  { debpolicy_request_problem, "$(id)", FALSE },
  { debpolicy_request_problem, "a\nb", FALSE },
  { debpolicy_text_problem, "Sat, 10 Feb 2024 10:00:00 UTC", TRUE },
  { debpolicy_text_problem, "line\nbreak", FALSE },
  { debpolicy_text_problem, "tab\there", FALSE },
  { debpolicy_archive_path_problem, "pool/main/g/glibc/libc6_2.36-9+deb12u4_amd64.deb", TRUE },
  { debpolicy_archive_path_problem, "pool/main/x/x/x_1%3a2.0~rc1_all.deb", TRUE },
  { debpolicy_archive_path_problem, "bookworm/updates", TRUE },
  { debpolicy_archive_path_problem, "", FALSE },
  { debpolicy_archive_path_problem, "/etc/shadow", FALSE },
  { debpolicy_archive_path_problem, "pool/../../etc/shadow", FALSE },
  { debpolicy_archive_path_problem, "pool/./x.deb", FALSE },
  { debpolicy_archive_path_problem, "pool//x.deb", FALSE },
  { debpolicy_archive_path_problem, "pool/x.deb/", FALSE },
  { debpolicy_archive_path_problem, "pool/x y.deb", FALSE },
  { debpolicy_archive_path_problem, "pool/x.deb?y", FALSE },
  { debpolicy_archive_path_problem, "pool/x\n.deb", FALSE },
  { debpolicy_archive_path_problem, "pool/$x.deb", FALSE },
  { debpolicy_sha256_problem, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", TRUE },
  { debpolicy_sha256_problem, "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", FALSE },
  { debpolicy_sha256_problem, "0123456789abcdef", FALSE },
  { debpolicy_fingerprint_problem, "4D64FEC119C2029067D6E791F8D2585B8783D481", TRUE },
  { debpolicy_fingerprint_problem, "4D64FEC119C2029067D6E791F8D2585B8783D48", FALSE },
  { debpolicy_fingerprint_problem, "4D64FEC119C2029067D6E791F8D2585B8783D48X", FALSE },
};

/* URIs: allowed, or refused with a phrase holding FRAGMENT. */
static const struct {
  const char *uri;
  const char *fragment;
} uri_cases[] = {
  { "http://127.0.0.1:8080/debian", NULL },
  { "https://example.invalid/debian", NULL },
  { "file:///srv/mirror", NULL },
  { "ftp://example.invalid/debian", "\"ftp:\"" },
  { "gopher://example.invalid/", "\"gopher:\"" },
  { "file:/srv/mirror", "\"file:\"" },
  { "http://", "nothing after" },
  { "/srv/mirror", "not a URI" },
  { "http://x/a b", "space" },
  { "http://x/a\nb", "control" },
  { "", "empty" },
};

static void
test_uris (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (uri_cases); i++)
    {
      g_autofree char *problem = debpolicy_uri_problem (uri_cases[i].uri);
      if (uri_cases[i].fragment == NULL ? problem != NULL
          : problem == NULL || strstr (problem, uri_cases[i].fragment) == NULL)
        g_error ("URI \"%s\": expected %s, got %s", uri_cases[i].uri,
                 uri_cases[i].fragment != NULL ? uri_cases[i].fragment : "allowed",
                 problem != NULL ? problem : "allowed");
    }
}

static void
test_table (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *problem = cases[i].check (cases[i].value);
      if ((problem == NULL) != cases[i].ok)
        g_error ("case %" G_GSIZE_FORMAT " \"%s\": expected %s, got %s", i, cases[i].value,
                 cases[i].ok ? "allowed" : "refused", problem != NULL ? problem : "allowed");
    }
}

static void
test_long (void)
{
  g_autofree char *name = g_strnfill (256, 'a');
  g_assert_nonnull (debpolicy_name_problem (name));
  name[255] = '\0';
  g_assert_null (debpolicy_name_problem (name));
}

/* Version order, checked against dpkg itself: every pair both ways. */
static const char *const versions[] = {
  "1.0", "1.0-1", "1.0-2", "1.0.1", "1.0~rc1", "1.0~rc1~git", "1.0+b1", "1.0a", "1.0.0",
  "1:0.9", "2:0", "0:1.0", "1.00", "1.10", "1.9", "1.0-1+deb12u1", "1.0-1~bpo12+1",
  "2.36-9+deb12u8", "2.36-9+deb12u10", "7.88.1-10+deb12u15", "7.88.1-10+deb12u5", "a", "~", "~~",
  "1.0-0", "0", "00", "1.0+dfsg-1", "1.0.dfsg-1", "1:2.0+dfsg-1",
};

static int
dpkg_says (const char *a, const char *b)
{
  const char *ops[] = { "lt", "eq", "gt" };
  for (int i = 0; i < 3; i++)
    {
      const char *argv[] = { "dpkg", "--compare-versions", a, ops[i], b, NULL };
      int status = 0;
      g_autoptr(GError) error = NULL;
      if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL
                         | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, &error))
        g_error ("running dpkg: %s", error->message);
      if (g_spawn_check_wait_status (status, NULL))
        return i - 1;
    }
  g_error ("dpkg --compare-versions %s ? %s: no answer", a, b);
}

static void
test_version_order (void)
{
  if (g_find_program_in_path ("dpkg") == NULL)
    {
      g_test_skip ("dpkg is not installed");
      return;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (versions); i++)
    for (gsize j = 0; j < G_N_ELEMENTS (versions); j++)
      {
        int ours = debpolicy_version_compare (versions[i], versions[j]);
        int sign = ours < 0 ? -1 : ours > 0;
        int theirs = dpkg_says (versions[i], versions[j]);
        if (sign != theirs)
          g_error ("%s vs %s: dpkg says %d, we say %d", versions[i], versions[j], theirs, sign);
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/debpolicy/dpkg-accepts-and-refuses-the-table", test_table);
  g_test_add_func ("/debpolicy/values-longer-than-255-bytes-are-refused", test_long);
  g_test_add_func ("/debpolicy/uris-of-the-supported-schemes-only", test_uris);
  g_test_add_func ("/debpolicy/versions-sort-as-dpkg-sorts-them", test_version_order);
  return g_test_run ();
}
