/* The Ninja writer's own defence: values that never passed lockfile_load()
 * (a Lockfile made in memory) cannot change an edge.  A control character
 * anywhere, or "|" in a path, is refused with an error and no text; values
 * that are merely special to Ninja or the shell ("$", ":", " ", "'", "~")
 * come out escaped. */
#include "config.h"

#include <string.h>

#include "apt/lockfile.h"
#include "graph/ninja.h"

/* PACKAGE VERSION ARCH into LOCK, last in its install order; its sha256
 * is FILL 64 times. */
static void
add_package (Lockfile *lock, const char *name, const char *version, const char *arch, char fill)
{
  LockPackage *package = g_new0 (LockPackage, 1);
  package->name = g_strdup (name);
  package->version = g_strdup (version);
  package->architecture = g_strdup (arch);
  package->source = g_strdup ("main");
  package->filename = g_strdup_printf ("pool/main/%c/%s/%s.deb", name[0], name, name);
  package->size = 1000;
  package->sha256 = g_strnfill (64, fill);
  g_ptr_array_add (lock->packages, package);
  g_ptr_array_add (lock->install_order, g_strdup (name));
}

/* A lockfile for ARCH with one source whose URI it records (no sources
 * list needed), and no packages yet. */
static Lockfile *
make_empty_lock (const char *arch)
{
  Lockfile *lock = lockfile_new ();
  lock->request.architecture = g_strdup (arch);
  LockSource *source = g_new0 (LockSource, 1);
  source->name = g_strdup ("main");
  source->uri = g_strdup ("http://127.0.0.1:9/debian");
  g_ptr_array_add (lock->sources, source);
  return lock;
}

/* One package, "hello" VERSION. */
static Lockfile *
make_lock (const char *version)
{
  Lockfile *lock = make_empty_lock ("amd64");
  add_package (lock, "hello", version, "amd64", '0');
  return lock;
}

typedef enum { FIELD_VERSION, FIELD_BUILDDIR, FIELD_IMAGE, FIELD_HOOK, FIELD_LOCKFILE } Field;

static const struct {
  Field field;
  const char *value;
  const char *fragment;  /* in the error, or NULL: written */
} cases[] = {
  { FIELD_VERSION, "3.23+nmu1\n  command = touch /tmp/pwned #", "control character" },
  { FIELD_VERSION, "1.0\r", "control character" },
  { FIELD_VERSION, "1:2.0~rc1+b1-1", NULL },
  { FIELD_BUILDDIR, "b\n  command = touch /tmp/pwned", "control character" },
  { FIELD_BUILDDIR, "b|x", "\"|\"" },
  { FIELD_BUILDDIR, "b $x d:e'q`touch /tmp/pwned`", NULL },
  { FIELD_IMAGE, "img\n", "control character" },
  { FIELD_IMAGE, "a|b", "\"|\"" },
  { FIELD_HOOK, "echo a\necho b", "control character" },
  { FIELD_HOOK, "echo '$HOME' | tee /x", NULL },
  { FIELD_LOCKFILE, "x.lock.json\n# ", "control character" },
};

static void
test_table (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Field f = cases[i].field;
      const char *v = cases[i].value;
      g_autoptr(Lockfile) lock = make_lock (f == FIELD_VERSION ? v : "2.10-3");
      const char *hooks[] = { v, NULL };
      NinjaImage image = {
        .lockfile_path = f == FIELD_LOCKFILE ? v : "img.lock.json",
        .image = f == FIELD_IMAGE ? v : "img",
        .lock = lock,
      };
      NinjaOptions options = {
        .apt2ostree = "/usr/bin/apt2ostree",
        .output_path = "img.ninja",
        .builddir = f == FIELD_BUILDDIR ? v : "build",
        .download_jobs = 4,
        .configure_hooks = f == FIELD_HOOK ? hooks : NULL,
      };
      g_autoptr(GError) error = NULL;
      g_autofree char *text = ninja_generate (&image, 1, &options, NULL, &error);
      if (cases[i].fragment == NULL)
        {
          g_assert_no_error (error);
          g_assert_nonnull (text);
          continue;
        }
      if (text != NULL)
        g_error ("case %" G_GSIZE_FORMAT ": \"%s\" was written:\n%s", i, v, text);
      g_assert_nonnull (error);
      if (strstr (error->message, cases[i].fragment) == NULL || strchr (error->message, '\n') != NULL)
        g_error ("case %" G_GSIZE_FORMAT ": expected one line with \"%s\", got \"%s\"", i,
                 cases[i].fragment, error->message);
    }
}

/* The words a command gets are the values given, whatever they hold: the
 * builddir reaches the commands as one shell word, and stays one path. */
static void
test_escaped (void)
{
  g_autoptr(Lockfile) lock = make_lock ("1:2.0~rc1+b1-1");
  NinjaImage image = { .lockfile_path = "img.lock.json", .image = "img", .lock = lock };
  NinjaOptions options = {
    .apt2ostree = "/usr/bin/apt2ostree", .output_path = "img.ninja", .builddir = "b $x d:e",
    .download_jobs = 4,
  };
  g_autoptr(GError) error = NULL;
  g_autofree char *text = ninja_generate (&image, 1, &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (text, "\nrepo = b$ $$x$ d$:e/ostree\n"));
  g_assert_nonnull (strstr (text, "\nrepo_arg = 'b $$x d:e/ostree'\n"));
  g_assert_nonnull (strstr (text, "--repo $repo_arg unpack-deb"));
}

static guint
count (const char *text, const char *needle)
{
  guint n = 0;
  for (const char *p = strstr (text, needle); p != NULL; p = strstr (p + 1, needle))
    n++;
  return n;
}

/* Three images: two amd64 ones sharing "hello", an arm64 one whose "hello"
 * is another package.  Each package has one edge; each image its stages. */
static void
test_shared_packages (void)
{
  g_autoptr(Lockfile) a = make_lock ("1.0");
  g_autoptr(Lockfile) b = make_lock ("1.0");
  add_package (b, "world", "2.0", "amd64", '1');
  g_autoptr(Lockfile) c = make_empty_lock ("arm64");
  add_package (c, "hello", "1.0", "arm64", '2');
  NinjaImage images[] = {
    { "a.lock.json", "a", a, NULL }, { "b.lock.json", "b", b, NULL },
    { "c.lock.json", "c", c, NULL },
  };
  NinjaOptions options = {
    .apt2ostree = "/usr/bin/apt2ostree", .output_path = "all.ninja", .builddir = "build",
    .download_jobs = 4,
  };
  g_autoptr(GError) error = NULL;
  g_autofree char *text = ninja_generate (images, G_N_ELEMENTS (images), &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (count (text, ": a2o_unpack "), ==, 3);
  g_assert_cmpuint (count (text, "\nbuild $repo/refs/heads/deb/hello/1.0/amd64/"), ==, 1);
  g_assert_cmpuint (count (text, ": a2o_stage1 "), ==, 3);
  g_assert_cmpuint (count (text, ": a2o_configure "), ==, 3);
  g_assert_cmpuint (count (text, "\ndefault a b c\n"), ==, 1);
  g_assert_cmpuint (count (text, "a2o_regen a.lock.json b.lock.json c.lock.json\n"), ==, 1);
  g_assert_cmpuint (count (text, "$a2o ninja a.lock.json b.lock.json c.lock.json -o"), ==, 1);
  g_autofree char *again = ninja_generate (images, G_N_ELEMENTS (images), &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, again);
}

/* 5,000 packages: no command grows with them.  Stage 1 gets its refs
 * through a response file ($packages is only its content) in the
 * repository's directory, named after the image, escaped so that two
 * images never share one ("a/b" and "a_b"), or for a name too long for a
 * file, its checksum. */
static void
test_many_packages (void)
{
  g_autoptr(Lockfile) a = make_empty_lock ("amd64");
  g_autoptr(Lockfile) b = make_empty_lock ("amd64");
  for (guint i = 0; i < 5000; i++)
    {
      g_autofree char *name = g_strdup_printf ("package-%05u", i);
      add_package (a, name, "1.0-1", "amd64", '0' + i % 10);
    }
  add_package (b, "hello", "1.0", "amd64", 'a');
  g_autoptr(Lockfile) c = make_lock ("1.0");
  g_autofree char *long_name = g_strnfill (250, 'x');
  NinjaImage images[] = {
    { "a.lock.json", "a/b", a, NULL }, { "b.lock.json", "a_b", b, NULL },
    { "c.lock.json", long_name, c, NULL },
  };
  NinjaOptions options = {
    .apt2ostree = "/usr/bin/apt2ostree", .output_path = "all.ninja", .builddir = "build",
    .download_jobs = 4,
  };
  g_autoptr(GError) error = NULL;
  g_autofree char *text = ninja_generate (images, G_N_ELEMENTS (images), &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (count (text, "$packages\n"), ==, 1);
  g_assert_cmpuint (count (text, "$packages "), ==, 0);
  g_assert_cmpuint (count (text, "\n  rspfile = $repo/$packages_list\n"
                                 "  rspfile_content = $packages\n"), ==, 1);
  g_assert_cmpuint (count (text, " --packages-from $repo_arg/$packages_list > /dev/null\n"), ==, 1);
  g_assert_cmpuint (count (text, "\n  packages_list = stage1-a_2fb.packages\n"), ==, 1);
  g_assert_cmpuint (count (text, "\n  packages_list = stage1-a_5fb.packages\n"), ==, 1);
  g_assert_cmpuint (count (text, "\n     deb/package-"), ==, 5000);
  /* A name too long for a file: its checksum. */
  g_autofree char *sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, long_name, -1);
  g_autofree char *long_list = g_strdup_printf ("\n  packages_list = stage1-%s.packages\n", sum);
  g_assert_cmpuint (count (text, long_list), ==, 1);
}

/* A package tree is one ref: one image cannot unpack it with merged /usr
 * and another without. */
static void
test_merged_usr_conflict (void)
{
  g_autoptr(Lockfile) a = make_lock ("1.0");
  g_autoptr(Lockfile) b = make_lock ("1.0");
  a->merged_usr = TRUE;
  NinjaImage images[] = { { "a.lock.json", "a", a, NULL }, { "b.lock.json", "b", b, NULL } };
  NinjaOptions options = {
    .apt2ostree = "/usr/bin/apt2ostree", .output_path = "all.ninja", .builddir = "build",
    .download_jobs = 4,
  };
  g_autoptr(GError) error = NULL;
  g_autofree char *text = ninja_generate (images, G_N_ELEMENTS (images), &options, NULL, &error);
  g_assert_null (text);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "a.lock.json and b.lock.json: package \"hello\""));
  g_assert_nonnull (strstr (error->message, "--builddir"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ninja/refuses-what-no-escape-can-carry", test_table);
  g_test_add_func ("/ninja/paths-and-words-are-escaped-each-for-its-place", test_escaped);
  g_test_add_func ("/ninja/a-package-shared-by-images-has-one-edge", test_shared_packages);
  g_test_add_func ("/ninja/no-command-grows-with-the-packages", test_many_packages);
  g_test_add_func ("/ninja/images-that-unpack-a-package-differently-are-refused",
                   test_merged_usr_conflict);
  return g_test_run ();
}
