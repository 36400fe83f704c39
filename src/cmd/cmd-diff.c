/* apt2ostree diff — what changed between two images (lockfiles or refs),
 * package by package, and with --files file by file grouped by owning
 * package (see image/imagediff.h). */
#include "config.h"

#include <json-glib/json-glib.h>
#include <stdio.h>

#include "apt/lockfile.h"
#include "base/util.h"
#include "cmd/cmd.h"
#include "image/imagediff.h"

/* A lockfile when ARG names a file, else a ref or commit; the repository
 * is opened only when a ref needs it. */
static ImageSide *
side_for (CmdInvocation *inv, OstreeRepo **repo, const char *arg, GCancellable *cancellable,
          GError **error)
{
  if (g_file_test (arg, G_FILE_TEST_IS_REGULAR))
    {
      g_autoptr(Lockfile) lock = lockfile_load (arg, error);
      return lock != NULL ? image_side_from_lockfile (lock, arg) : NULL;
    }
  if (*repo == NULL)
    *repo = cmd_open_repo (inv, cancellable, error);
  if (*repo == NULL)
    return NULL;
  return image_side_from_ref (*repo, arg, cancellable, error);
}

static void
print_files (GPtrArray *files)
{
  const char *group = NULL;
  gboolean first = TRUE;
  for (guint i = 0; i < files->len; i++)
    {
      const ImageFileChange *f = files->pdata[i];
      const char *owner = f->owner != NULL ? f->owner : "(no package: written by maintainer scripts or hooks)";
      if (first || g_strcmp0 (group, owner) != 0)
        g_print ("%s:\n", owner);
      group = owner;
      first = FALSE;
      g_print ("  %c %s\n", f->change, f->path);
    }
}

static void
json_side (JsonBuilder *b, const char *member, const ImagePackage *p)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "version");
  json_builder_add_string_value (b, p->version);
  json_builder_set_member_name (b, "source");
  if (p->source != NULL)
    json_builder_add_string_value (b, p->source);
  else
    json_builder_add_null_value (b);
  json_builder_end_object (b);
}

static char *
to_json (GPtrArray *changes, GPtrArray *files)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "packages");
  json_builder_begin_array (b);
  for (guint i = 0; i < changes->len; i++)
    {
      const ImagePackageChange *c = changes->pdata[i];
      const ImagePackage *p = c->after != NULL ? c->after : c->before;
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "change");
      json_builder_add_string_value (b, image_change_kind_name (c->kind));
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, p->name);
      json_builder_set_member_name (b, "architecture");
      json_builder_add_string_value (b, p->architecture);
      if (c->before != NULL)
        json_side (b, "before", c->before);
      if (c->after != NULL)
        json_side (b, "after", c->after);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  if (files != NULL)
    {
      json_builder_set_member_name (b, "files");
      json_builder_begin_array (b);
      for (guint i = 0; i < files->len; i++)
        {
          const ImageFileChange *f = files->pdata[i];
          const char *change = f->change == 'A' ? "added" : f->change == 'D' ? "removed" : "modified";
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "change");
          json_builder_add_string_value (b, change);
          json_builder_set_member_name (b, "path");
          json_builder_add_string_value (b, f->path);
          json_builder_set_member_name (b, "package");
          if (f->owner != NULL)
            json_builder_add_string_value (b, f->owner);
          else
            json_builder_add_null_value (b);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
  g_autoptr(JsonNode) root = json_builder_get_root (b);
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_root (gen, root);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  return g_strconcat (text, "\n", NULL);
}

gboolean
cmd_diff (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable, GError **error)
{
  gboolean files = FALSE, json = FALSE;
  const GOptionEntry entries[] = {
    { "files", 0, 0, G_OPTION_ARG_NONE, &files,
      "Also list the files that changed, grouped by the package that owns them (two refs)", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Write JSON instead of text", NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "A B [--files] [--json]",
                  "What changed from image A to image B, each a lockfile or a ref: packages\n"
                  "added, removed, upgraded and downgraded, with both versions and the\n"
                  "source each came from (a lockfile's source names).",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 3)
    return cmd_usage_error (inv, error, "expected two images A and B (lockfiles or refs)");

  g_autoptr(OstreeRepo) repo = NULL;
  g_autoptr(ImageSide) a = side_for (inv, &repo, argv[1], cancellable, error);
  if (a == NULL)
    return FALSE;
  g_autoptr(ImageSide) b = side_for (inv, &repo, argv[2], cancellable, error);
  if (b == NULL)
    return FALSE;
  g_autoptr(GPtrArray) changes = image_diff_packages (a, b);
  g_autoptr(GPtrArray) changed_files = NULL;
  if (files)
    {
      changed_files = image_diff_files (a, b, cancellable, error);
      if (changed_files == NULL)
        return FALSE;
    }
  if (json)
    {
      g_autofree char *text = to_json (changes, changed_files);
      fputs (text, stdout);
      return TRUE;
    }
  g_autofree char *text = image_diff_packages_text (changes);
  fputs (text, stdout);
  if (changed_files != NULL)
    print_files (changed_files);
  return TRUE;
}
