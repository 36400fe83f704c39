/* apt2ostree diff — what changed between two images (lockfiles or refs),
 * package by package, and with --files file by file grouped by owning
 * package (see image/imagediff.h). */
#include "config.h"

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
      g_autofree char *text = image_diff_to_json (changes, changed_files);
      fputs (text, stdout);
      return TRUE;
    }
  g_autofree char *text = image_diff_packages_text (changes);
  fputs (text, stdout);
  if (changed_files != NULL)
    {
      g_autofree char *files_text = image_diff_files_text (changed_files);
      fputs (files_text, stdout);
    }
  return TRUE;
}
