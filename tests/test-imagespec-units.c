/* LOCKFILE[=REF] as "ninja", "build" and "prune" read it, and the stage
 * refs of an image (src/graph/imagespec.c). */
#include "config.h"

#include <string.h>

#include "graph/imagespec.h"

static void
test_default_ref (void)
{
  static const struct { const char *path, *ref; } cases[] = {
    { "base.lock.json", "base" },
    { "boards/rpi4-dev.lock.json", "rpi4-dev" },
    { "dev.json", "dev" },
    { "plain", "plain" },
    { "x.lock.json.json", "x.lock.json" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *ref = imagespec_default_ref (cases[i].path);
      g_assert_cmpstr (ref, ==, cases[i].ref);
    }
}

static void
test_parse (void)
{
  static const struct { const char *arg, *lockfile, *ref; } cases[] = {
    { "base.lock.json", "base.lock.json", "base" },
    { "base.lock.json=img/base", "base.lock.json", "img/base" },
    { "dir=x/base.lock.json=b", "dir=x/base.lock.json", "b" },   /* the last "=" */
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(ImageSpec) spec = imagespec_parse (cases[i].arg, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (spec->lockfile, ==, cases[i].lockfile);
      g_assert_cmpstr (spec->ref, ==, cases[i].ref);
    }
}

/* Each bad argument is one line that names it. */
static void
test_parse_refuses (void)
{
  static const char *const bad[] = { "=ref", "base.lock.json=", "base.lock.json=a b",
                                     "base.lock.json=/abs", "base.lock.json=x//y" };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(ImageSpec) spec = imagespec_parse (bad[i], &error);
      g_assert_null (spec);
      g_assert_nonnull (error);
      g_autofree char *shown = g_strdup_printf ("\"%s\"", bad[i]);
      g_assert_nonnull (strstr (error->message, shown));
      g_assert_null (strchr (error->message, '\n'));
    }
}

static void
test_same_ref_twice (void)
{
  const char *const args[] = { "a/base.lock.json", "other.lock.json", "b/base.lock.json" };
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) specs = imagespec_parse_all (args, G_N_ELEMENTS (args), &error);
  g_assert_null (specs);
  g_assert_nonnull (strstr (error->message, "a/base.lock.json and b/base.lock.json"));
  g_assert_nonnull (strstr (error->message, "\"base\""));

  const char *const renamed[] = { "a/base.lock.json", "b/base.lock.json=base-b" };
  g_clear_error (&error);
  g_autoptr(GPtrArray) ok = imagespec_parse_all (renamed, G_N_ELEMENTS (renamed), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ok->len, ==, 2);
}

/* The image a stage ref belongs to, image names with "/" included; refs
 * of no image's stages (package trees, user refs) belong to none. */
static void
test_stage_refs (void)
{
  const char *const images[] = { "base", "boards/rpi4" };
  for (gsize i = 0; i < G_N_ELEMENTS (images); i++)
    {
      const char *image = images[i];
      g_autofree char *stage1 = imagespec_stage1_ref (image);
      g_autofree char *before = imagespec_before_configure_ref (image);
      g_autofree char *configured = imagespec_configured_ref (image);
      g_autofree char *hook = imagespec_hook_ref (image, "after-configure", 2);
      g_autofree char *expected_stage1 = g_strconcat ("stage1/", image, NULL);
      g_autofree char *expected_hook = g_strconcat ("hooks/", image, "/after-configure-2", NULL);
      g_assert_cmpstr (stage1, ==, expected_stage1);
      g_assert_cmpstr (hook, ==, expected_hook);
      const char *const refs[] = { stage1, before, configured, hook };
      for (gsize j = 0; j < G_N_ELEMENTS (refs); j++)
        {
          g_autofree char *owner = imagespec_image_of_stage_ref (refs[j]);
          g_assert_cmpstr (owner, ==, image);
        }
    }
  const char *const others[] = { "base", "deb/dash/0.5.12-2/amd64/00ff", "stage1/", "hooks/x",
                                 "mine/stage1/base" };
  for (gsize i = 0; i < G_N_ELEMENTS (others); i++)
    {
      g_autofree char *owner = imagespec_image_of_stage_ref (others[i]);
      g_assert_null (owner);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/imagespec/the-default-ref-is-the-file-name-without-lock-json", test_default_ref);
  g_test_add_func ("/imagespec/lockfile-equals-ref-splits-at-the-last-equals", test_parse);
  g_test_add_func ("/imagespec/a-bad-argument-is-one-line-naming-it", test_parse_refuses);
  g_test_add_func ("/imagespec/two-lockfiles-with-one-ref-are-refused-naming-both",
                   test_same_ref_twice);
  g_test_add_func ("/imagespec/a-stage-ref-names-its-image", test_stage_refs);
  return g_test_run ();
}
