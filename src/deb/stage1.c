/* stage1.c — package trees combined into one unpacked dpkg system; see
 * stage1.h. */
#include "config.h"

#include "base/debpolicy.h"
#include "base/util.h"
#include "deb/deb.h"
#include "deb/dpkgdb.h"
#include "deb/stage1.h"
#include "barestore/linkgroups.h"
#include "store/tree.h"

/* Whether the package trees were unpacked with --merged-usr (they must all
 * agree), a line in SKIPPED for every entry OSTree could not store, and the
 * union of the packages' hard-link groups in HARDLINKS. */
static gboolean
inspect_packages (OstreeRepo *repo, GPtrArray *revs, gboolean *out_merged_usr,
                  GPtrArray *dpkg_names, LinkGroups *hardlinks, GPtrArray *skipped_lines,
                  GError **error)
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
            g_ptr_array_add (skipped_lines, g_strdup_printf ("%s: %s (%s) is not in the image",
                                                             package, path, kind));
        }
    }
  *out_merged_usr = merged != 0;
  return TRUE;
}

OstreeMutableTree *
stage1_combine (OstreeRepo *repo, StoreSink *sink, GPtrArray *revs, const char *arch,
                const char *const *rules,
                GPtrArray *skipped, GVariant **out_metadata, GCancellable *cancellable,
                GError **error)
{
  DpkgdbOptions options = { arch, TRUE };
  g_autoptr(GPtrArray) dpkg_names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(LinkGroups) hardlinks = linkgroups_new ();
  if (!inspect_packages (repo, revs, &options.merged_usr, dpkg_names, hardlinks, skipped, error))
    return NULL;

  /* Two packages with a file at one path: the later one's is set aside for
   * stage 2, where a preinst's diversion (or Replaces:) says where each goes;
   * dpkg would refuse the pair otherwise, and so will stage 2. */
  g_autoptr(GPtrArray) conflicts = g_ptr_array_new_with_free_func ((GDestroyNotify) tree_conflict_free);
  g_autoptr(OstreeMutableTree) tree = tree_combine (repo, revs, TREE_COMBINE_SET_ASIDE, conflicts,
                                                    cancellable, error);
  if (tree == NULL)
    return NULL;
  if (!dpkgdb_filter_conflicts (repo, conflicts, rules, cancellable, error)
      || !dpkgdb_set_aside (repo, sink, tree, conflicts, dpkg_names, cancellable, error))
    return NULL;
  if (!dpkgdb_assemble (repo, sink, tree, &options, cancellable, error)
      || !dpkgdb_filter_paths (repo, sink, tree, rules, options.merged_usr, cancellable, error))
    return NULL;
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
  *out_metadata = g_variant_ref_sink (g_variant_builder_end (&metadata));
  return g_steal_pointer (&tree);
}
