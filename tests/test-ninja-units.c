/* The Ninja writer's own defence: values that never passed lockfile_load()
 * (a Lockfile made in memory) cannot change an edge.  A control character
 * anywhere, or "|" in a path, is refused with an error and no text; values
 * that are merely special to Ninja or the shell ("$", ":", " ", "'", "~")
 * come out escaped. */
#include "config.h"

#include <string.h>

#include "apt/lockfile.h"
#include "build/ninja.h"

/* One package, one source with a recorded URI (no sources list needed). */
static Lockfile *
make_lock (const char *version)
{
  Lockfile *lock = lockfile_new ();
  lock->request.architecture = g_strdup ("amd64");
  LockSource *source = g_new0 (LockSource, 1);
  source->name = g_strdup ("main");
  source->uri = g_strdup ("http://127.0.0.1:9/debian");
  g_ptr_array_add (lock->sources, source);
  LockPackage *package = g_new0 (LockPackage, 1);
  package->name = g_strdup ("hello");
  package->version = g_strdup (version);
  package->architecture = g_strdup ("amd64");
  package->source = g_strdup ("main");
  package->filename = g_strdup ("pool/main/h/hello/hello.deb");
  package->size = 1000;
  package->sha256 = g_strnfill (64, '0');
  g_ptr_array_add (lock->packages, package);
  g_ptr_array_add (lock->install_order, g_strdup ("hello"));
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
      NinjaOptions options = {
        .apt2ostree = "/usr/bin/apt2ostree",
        .lockfile_path = f == FIELD_LOCKFILE ? v : "img.lock.json",
        .output_path = "img.ninja",
        .image = f == FIELD_IMAGE ? v : "img",
        .builddir = f == FIELD_BUILDDIR ? v : "build",
        .download_jobs = 4,
        .configure_hooks = f == FIELD_HOOK ? hooks : NULL,
      };
      g_autoptr(GError) error = NULL;
      g_autofree char *text = ninja_generate (lock, NULL, &options, &error);
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
  NinjaOptions options = {
    .apt2ostree = "/usr/bin/apt2ostree", .lockfile_path = "img.lock.json",
    .output_path = "img.ninja", .image = "img", .builddir = "b $x d:e", .download_jobs = 4,
  };
  g_autoptr(GError) error = NULL;
  g_autofree char *text = ninja_generate (lock, NULL, &options, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (text, "\nrepo = b$ $$x$ d$:e/ostree\n"));
  g_assert_nonnull (strstr (text, "\nrepo_arg = 'b $$x d:e/ostree'\n"));
  g_assert_nonnull (strstr (text, "--repo $repo_arg unpack-deb"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ninja/refuses-what-no-escape-can-carry", test_table);
  g_test_add_func ("/ninja/paths-and-words-are-escaped-each-for-its-place", test_escaped);
  return g_test_run ();
}
