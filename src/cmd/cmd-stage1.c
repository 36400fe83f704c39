/* apt2ostree stage1 — package trees in, one unpacked dpkg system out. */
#include "config.h"

#include <stdio.h>

#include "graph/buildcache.h"
#include "cmd/cmd.h"
#include "deb/deb.h"
#include "base/debpolicy.h"
#include "deb/dpkgdb.h"
#include "base/pathfilter.h"
#include "sandbox/stage2.h"
#include "store/linkgroups.h"
#include "store/refs.h"
#include "store/tree.h"
#include "base/util.h"

/* Whether the package trees were unpacked with --merged-usr (they must all
 * agree), a warning for every entry OSTree could not store, and the union
 * of the packages' hard-link groups in HARDLINKS. */
static gboolean
inspect_packages (OstreeRepo *repo, GPtrArray *revs, gboolean *out_merged_usr,
                  GPtrArray *dpkg_names, LinkGroups *hardlinks, GError **error)
{
  int merged = -1;
  for (guint i = 0; i < revs->len; i++)
    {
      const RepoRev *rev = revs->pdata[i];
      g_autoptr(GVariant) commit = NULL;
      if (!ostree_repo_load_commit (repo, rev->commit, &commit, NULL, error))
        return FALSE;
      g_autoptr(GVariant) metadata = g_variant_get_child_value (commit, 0);
      g_auto(GVariantDict) dict;
      g_variant_dict_init (&dict, metadata);

      const char *package, *arch, *multi_arch;
      gboolean this_merged;
      if (!g_variant_dict_lookup (&dict, DEB_META_PACKAGE, "&s", &package)
          || !g_variant_dict_lookup (&dict, DEB_META_ARCHITECTURE, "&s", &arch)
          || !g_variant_dict_lookup (&dict, DEB_META_MULTI_ARCH, "&s", &multi_arch)
          || !g_variant_dict_lookup (&dict, DEB_META_MERGED_USR, "b", &this_merged))
        return util_fail (error, "\"%s\" is not a package tree made by \"apt2ostree unpack-deb\"",
                          rev->name);
      /* Trees from before unpack-deb checked these name paths here (the
       * info files, the set-aside directory). */
      const char *field = "package name", *value = package;
      const char *problem = debpolicy_name_problem (package);
      if (problem == NULL)
        {
          field = "architecture";
          value = arch;
          problem = debpolicy_arch_problem (arch);
        }
      if (problem != NULL)
        {
          g_autofree char *shown = util_shown_path (value);
          return util_fail (error, "\"%s\": the %s \"%s\" in its commit metadata %s; unpack "
                            "the .deb again", rev->name, field, shown, problem);
        }
      g_ptr_array_add (dpkg_names, deb_info_basename (package, arch, multi_arch));
      if (merged >= 0 && merged != this_merged)
        return util_fail (error, "\"%s\" was unpacked %s merged /usr, unlike the packages before it",
                          rev->name, this_merged ? "with" : "without");
      merged = this_merged;
      linkgroups_add_metadata (hardlinks, metadata);

      g_autoptr(GVariant) skipped = g_variant_dict_lookup_value (&dict, DEB_META_SKIPPED,
                                                                  G_VARIANT_TYPE ("a(ss)"));
      GVariantIter iter;
      const char *path, *kind;
      if (skipped != NULL)
        {
          g_variant_iter_init (&iter, skipped);
          while (g_variant_iter_next (&iter, "(&s&s)", &path, &kind))
            fprintf (stderr, "apt2ostree stage1: warning: %s: %s (%s) is not in the image: "
                             "OSTree stores no device nodes, fifos or sockets\n",
                     package, path, kind);
        }
    }
  *out_merged_usr = merged != 0;
  return TRUE;
}

/* The cache's name for stage 1 of the package trees REVS (in order) for
 * ARCH with the path FILTERS: their commits say everything else stage 1
 * reads. */
static char *
stage1_cache_ref (const char *arch, const char *const *filters, GPtrArray *revs)
{
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (inputs, g_strdup (arch));
  for (const char *const *f = filters; f != NULL && *f != NULL; f++)
    g_ptr_array_add (inputs, g_strconcat ("filter=", *f, NULL));
  for (guint i = 0; i < revs->len; i++)
    g_ptr_array_add (inputs, g_strdup (((RepoRev *) revs->pdata[i])->commit));
  g_ptr_array_add (inputs, NULL);
  return buildcache_ref ("stage1", (const char *const *) inputs->pdata);
}

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
  *out_cache_ref = stage1_cache_ref (arch, filters, revs);
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

  DpkgdbOptions options = { arch, TRUE };
  g_autoptr(GPtrArray) dpkg_names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(LinkGroups) hardlinks = linkgroups_new ();
  if (!inspect_packages (edit.repo, revs, &options.merged_usr, dpkg_names, hardlinks, error))
    return FALSE;

  /* Two packages with a file at one path: the later one's is set aside for
   * stage 2, where a preinst's diversion (or Replaces:) says where each goes;
   * dpkg would refuse the pair otherwise, and so will stage 2. */
  g_autoptr(GPtrArray) conflicts = g_ptr_array_new_with_free_func ((GDestroyNotify) tree_conflict_free);
  edit.tree = tree_combine (edit.repo, revs, TREE_COMBINE_SET_ASIDE, conflicts, cancellable, error);
  if (edit.tree == NULL)
    return FALSE;
  const char *const *rules = (const char *const *) path_filters;
  if (!dpkgdb_filter_conflicts (edit.repo, conflicts, rules, cancellable, error)
      || !dpkgdb_set_aside (edit.repo, edit.tree, conflicts, dpkg_names, cancellable, error))
    return FALSE;
  if (!dpkgdb_assemble (edit.repo, edit.tree, &options, cancellable, error)
      || !dpkgdb_filter_paths (edit.repo, edit.tree, rules, options.merged_usr, cancellable, error))
    return FALSE;
  /* Stage 2 runs the preinst scripts in this order. */
  GVariantBuilder metadata;
  g_variant_builder_init (&metadata, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&metadata, "{sv}", STAGE1_META_PACKAGES,
                         g_variant_new_strv ((const char *const *) dpkg_names->pdata, dpkg_names->len));
  /* Export links what the packages linked (the key only when some did, so
   * that the commit of an image without hard links keeps its checksum). */
  GVariant *groups = linkgroups_to_variant (hardlinks);
  if (groups != NULL)
    g_variant_builder_add (&metadata, "{sv}", LINKGROUPS_META_KEY, groups);
  if (!cmd_edit_finish (inv, &edit, out_ref, g_variant_builder_end (&metadata), cancellable, error))
    return FALSE;
  return cache_ref == NULL
         || buildcache_record_result (edit.repo, out_ref, cache_ref, cancellable, error);
}
