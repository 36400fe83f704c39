/* apt2ostree stage1 — package trees in, one unpacked dpkg system out. */
#include "config.h"

#include <stdio.h>

#include "graph/buildcache.h"
#include "cmd/cmd.h"
#include "deb/stage1.h"
#include "base/pathfilter.h"
#include "barestore/refs.h"
#include "base/util.h"

/* Stage 1 of the package trees NAMES (N of them) from CACHE: *OUT_HIT
 * when it had it (OUT_REF set, its commit printed); *OUT_CACHE_REF is the
 * key either way, and *OUT_REVS the trees it was made of, for a miss to
 * build stage 1 of those very commits. */
static gboolean
stage1_from_cache (CmdInvocation *inv, const BuildCache *cache, const char *arch,
                   const char *const *filters, const char *out_ref, const char *const *names, int n, char **out_cache_ref,
                   GPtrArray **out_revs, gboolean *out_hit, GCancellable *cancellable, GError **error)
{
  g_autoptr(OstreeRepo) repo = cmd_open_repo (inv, cancellable, error);
  if (repo == NULL)
    return FALSE;
  g_autoptr(GPtrArray) revs = repo_resolve_all (repo, names, n, error);
  if (revs == NULL)
    return FALSE;
  *out_cache_ref = buildcache_stage1_ref (arch, filters, revs);
  g_autofree char *what = g_strconcat ("stage 1 (", out_ref, ")", NULL);
  g_autofree char *commit = buildcache_fetch_result (repo, cache, *out_cache_ref, out_ref, what,
                                                     cancellable);
  *out_hit = commit != NULL;
  if (commit != NULL)
    printf ("%s\n", commit);
  *out_revs = g_steal_pointer (&revs);
  return TRUE;
}

gboolean
cmd_stage1 (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
            GError **error)
{
  g_autofree char *out_ref = NULL;
  g_autofree char *arch = NULL;
  g_auto(BuildCache) cache = { NULL };
  g_auto(GStrv) path_filters = NULL;
  g_autofree char *packages_from = NULL;
  const GOptionEntry entries[] = {
    { "ref", 0, 0, G_OPTION_ARG_STRING, &out_ref, "Write the result to this ref", "OUT" },
    { "arch", 0, 0, G_OPTION_ARG_STRING, &arch, "The image's dpkg architecture (required)", "ARCH" },
    { "path-filter", 0, 0, G_OPTION_ARG_STRING_ARRAY, &path_filters,
      "Leave out what dpkg would with this dpkg.cfg line (repeatable, in order)",
      "path-exclude=GLOB|path-include=GLOB" },
    { "packages-from", 0, 0, G_OPTION_ARG_FILENAME, &packages_from,
      "Read the package trees from FILE instead: ref names separated by spaces or "
      "newlines (what the Ninja file's response file holds)", "FILE" },
    BUILDCACHE_OPTION_ENTRIES (&cache),
    { NULL }
  };
  if (!cmd_parse (inv, "--ref OUT --arch ARCH (PACKAGE-TREE... | --packages-from FILE)",
                  "Combine package trees made by \"unpack-deb\", given in install order, into\n"
                  "one tree with a dpkg database in which every package is unpacked.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (arch == NULL)
    return cmd_usage_error (inv, error, "--arch ARCH is required");
  if (packages_from != NULL && argc > 1)
    return cmd_usage_error (inv, error, "give the package trees as arguments or with "
                            "--packages-from FILE, not both");
  if (packages_from == NULL && argc < 2)
    return cmd_usage_error (inv, error, "expected at least one PACKAGE-TREE");
  for (char **f = path_filters; f != NULL && *f != NULL; f++)
    if (pathfilter_rule_problem (*f) != NULL)
      {
        g_autofree char *shown = g_strescape (*f, NULL);
        return cmd_usage_error (inv, error, "--path-filter \"%s\" %s", shown,
                                pathfilter_rule_problem (*f));
      }
  if (cache.url != NULL && out_ref == NULL)
    return cmd_usage_error (inv, error, "--cache-url needs --ref OUT");
  if (!buildcache_check (&cache, error))
    return FALSE;
  /* A list too long for one command line (thousands of packages) comes
   * in a file. */
  g_auto(GStrv) listed = packages_from != NULL ? refs_read_list (packages_from, error) : NULL;
  if (packages_from != NULL && listed == NULL)
    return FALSE;
  const char *const *names = listed != NULL ? (const char *const *) listed
                                            : (const char *const *) argv + 1;
  int n_names = listed != NULL ? (int) g_strv_length (listed) : argc - 1;

  /* The cache is asked before the transaction begins: a pull is a
   * transaction of its own. */
  g_autofree char *cache_ref = NULL;
  g_autoptr(GPtrArray) revs = NULL;
  if (cache.url != NULL)
    {
      gboolean hit = FALSE;
      if (!stage1_from_cache (inv, &cache, arch, (const char *const *) path_filters, out_ref,
                              names, n_names, &cache_ref, &revs, &hit, cancellable, error))
        return FALSE;
      if (hit)
        return TRUE;
    }

  g_auto(CmdEdit) edit = { NULL };
  if (revs == NULL)
    revs = cmd_edit_begin_with_trees (inv, out_ref, names, n_names, &edit, cancellable, error);
  else if (!cmd_edit_begin (inv, out_ref, NULL, &edit, cancellable, error))
    return FALSE;
  if (revs == NULL)
    return FALSE;

  g_autoptr(GPtrArray) skipped = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GVariant) metadata = NULL;
  edit.tree = stage1_combine (edit.repo, repo_txn_sink (edit.txn), revs, arch,
                              (const char *const *) path_filters, skipped,
                              &metadata, cancellable, error);
  if (edit.tree == NULL)
    return FALSE;
  for (guint i = 0; i < skipped->len; i++)
    fprintf (stderr, "apt2ostree stage1: warning: %s: OSTree stores no device nodes, fifos or "
             "sockets\n", (const char *) skipped->pdata[i]);
  if (!cmd_edit_finish (inv, &edit, out_ref, g_steal_pointer (&metadata), cancellable, error))
    return FALSE;
  /* The keyed ref is written with or without a cache, so that publishing
   * the repository offers this stage 1 to a machine that has one. */
  if (cache_ref == NULL && out_ref != NULL)
    cache_ref = buildcache_stage1_ref (arch, (const char *const *) path_filters, revs);
  return cache_ref == NULL
         || buildcache_record_result (edit.repo, out_ref, cache_ref, cancellable, error);
}
