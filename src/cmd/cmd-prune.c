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
  g_autofree char *graph = NULL;
  gboolean dry_run = FALSE;
  const GOptionEntry entries[] = {
    { "builddir", 0, 0, G_OPTION_ARG_FILENAME, &builddir,
      "The build directory whose repository (BUILDDIR/ostree) to prune, when --repo is not given",
      "DIR" },
    { "graph", 0, 0, G_OPTION_ARG_FILENAME, &graph,
      "Also delete the derived refs (derived/..., see ref-name) that no edge of this Ninja "
      "file writes (run where the build runs)", "FILE.ninja" },
    { "dry-run", 'n', 0, G_OPTION_ARG_NONE, &dry_run, "List the refs that would go; delete nothing",
      NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "LOCKFILE[=REF]... | --graph FILE.ninja [LOCKFILE[=REF]...]",
                  "Delete the package trees, stage trees and image refs that builds wrote into the\n"
                  "repository and that none of the images of the LOCKFILEs needs, then the objects\n"
                  "no ref reaches any more.  REF is the image's ref (default: the lockfile's name\n"
                  "without .lock.json).  With --graph, also the derived refs the project's Ninja\n"
                  "file no longer writes.  Other refs are never touched.  Prints each ref deleted.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc < 2 && graph == NULL)
    return cmd_usage_error (inv, error, "expected one LOCKFILE or more (the images to keep)");

  g_autoptr(GError) local_error = NULL;
  g_autoptr(GPtrArray) specs = imagespec_parse_all ((const char *const *) argv + 1, argc - 1,
                                                    &local_error);
  if (specs == NULL)
    return cmd_usage_error (inv, error, "%s", local_error->message);
  g_autoptr(OstreeRepo) repo = open_repo (inv, builddir, cancellable, error);
  if (repo == NULL)
    return FALSE;
  /* Without a lockfile (--graph alone) no image is kept: build refs are
   * left out of it, not all deleted. */
  g_autoptr(GPtrArray) refs = specs->len > 0 ? prune_plan (repo, specs, error)
                                             : g_ptr_array_new_with_free_func (g_free);
  if (refs == NULL)
    return FALSE;
  g_autoptr(GHashTable) named = graph != NULL ? prune_graph_refs (graph, error) : NULL;
  if (graph != NULL && (named == NULL || !prune_plan_derived (repo, named, refs, error)))
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
