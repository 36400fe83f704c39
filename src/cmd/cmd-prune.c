/* apt2ostree prune — delete what a build wrote that none of the given
 * lockfiles' images needs: refs first, then the objects only they held. */
#include "config.h"

#include <stdio.h>

#include "cmd/cmd.h"
#include "graph/imagespec.h"
#include "graph/prune.h"
#include "store/repo.h"

/* The repository: --repo, else BUILDDIR/ostree with --builddir (where
 * "build" puts it), else the default of every command. */
static OstreeRepo *
open_repo (CmdInvocation *inv, const char *builddir, GCancellable *cancellable, GError **error)
{
  if (inv->repo_path == NULL && builddir != NULL)
    {
      g_autofree char *path = g_build_filename (builddir, "ostree", NULL);
      return repo_open (path, cancellable, error);
    }
  return cmd_open_repo (inv, cancellable, error);
}

gboolean
cmd_prune (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
           GError **error)
{
  g_autofree char *builddir = NULL;
  gboolean dry_run = FALSE;
  const GOptionEntry entries[] = {
    { "builddir", 0, 0, G_OPTION_ARG_FILENAME, &builddir,
      "The build directory whose repository (BUILDDIR/ostree) to prune, when --repo is not given",
      "DIR" },
    { "dry-run", 'n', 0, G_OPTION_ARG_NONE, &dry_run, "List the refs that would go; delete nothing",
      NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "LOCKFILE[=REF]...",
                  "Delete the package trees, stage trees and image refs that builds wrote into the\n"
                  "repository and that none of the images of the LOCKFILEs needs, then the objects\n"
                  "no ref reaches any more.  REF is the image's ref (default: the lockfile's name\n"
                  "without .lock.json).  Other refs are never touched.  Prints each ref deleted.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc < 2)
    return cmd_usage_error (inv, error, "expected one LOCKFILE or more (the images to keep)");

  g_autoptr(GError) local_error = NULL;
  g_autoptr(GPtrArray) specs = imagespec_parse_all ((const char *const *) argv + 1, argc - 1,
                                                    &local_error);
  if (specs == NULL)
    return cmd_usage_error (inv, error, "%s", local_error->message);
  g_autoptr(OstreeRepo) repo = open_repo (inv, builddir, cancellable, error);
  if (repo == NULL)
    return FALSE;
  g_autoptr(GPtrArray) refs = prune_plan (repo, specs, error);
  if (refs == NULL)
    return FALSE;
  for (guint i = 0; i < refs->len; i++)
    printf ("%s\n", (char *) refs->pdata[i]);
  if (dry_run)
    return TRUE;

  PruneStats stats;
  if (!prune_delete (repo, refs, &stats, cancellable, error))
    return FALSE;
  g_autofree char *size = g_format_size (stats.bytes_freed);
  printf ("deleted %u refs and %d of %d objects (%s)\n", refs->len, stats.objects_pruned,
          stats.objects_total, size);
  return TRUE;
}
