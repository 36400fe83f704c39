/* prune.c — the refs no listed image needs, and deleting them. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "graph/prune.h"
#include "graph/imagespec.h"
#include "graph/treerules.h"
#include "apt/lockfile.h"
#include "barestore/refs.h"
#include "deb/deb.h"
#include "base/util.h"
#include "store/keptcheckout.h"
#include "store/repo.h"

/* The refs the images SPECS need that are not named by an image: their
 * package trees.  The images themselves go into IMAGES. */
static GHashTable *
needed_package_refs (GPtrArray *specs, GHashTable *images, GError **error)
{
  g_autoptr(GHashTable) needed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < specs->len; i++)
    {
      ImageSpec *spec = specs->pdata[i];
      g_autoptr(Lockfile) lock = lockfile_load (spec->lockfile, error);
      if (lock == NULL)
        return NULL;
      g_hash_table_add (images, spec->ref);
      for (guint j = 0; j < lock->packages->len; j++)
        {
          LockPackage *package = lock->packages->pdata[j];
          g_hash_table_add (needed, deb_ref_name (package->name, package->version,
                                                  package->architecture, package->sha256));
        }
    }
  return g_steal_pointer (&needed);
}

/* Is REF one a build writes that none of IMAGES needs?  Images named by
 * a stage ref go into MADE. */
static gboolean
unneeded_build_ref (const char *ref, GHashTable *needed, GHashTable *images, GHashTable *made)
{
  if (g_str_has_prefix (ref, "deb/"))
    return !g_hash_table_contains (needed, ref);
  g_autofree char *image = imagespec_image_of_stage_ref (ref);
  if (image == NULL)
    return FALSE;
  gboolean unneeded = !g_hash_table_contains (images, image);
  g_hash_table_add (made, g_steal_pointer (&image));
  return unneeded;
}

/* A cache/ ref (see buildcache.h) names a stage's result by its inputs:
 * it goes when no ref that stays holds its commit. */
static void
doom_orphan_cache_refs (GHashTable *refs, GHashTable *doomed)
{
  g_autoptr(GHashTable) kept = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter iter;
  gpointer ref, commit;
  g_hash_table_iter_init (&iter, refs);
  while (g_hash_table_iter_next (&iter, &ref, &commit))
    if (!g_str_has_prefix (ref, "cache/") && !g_hash_table_contains (doomed, ref))
      g_hash_table_add (kept, commit);
  g_hash_table_iter_init (&iter, refs);
  while (g_hash_table_iter_next (&iter, &ref, &commit))
    if (g_str_has_prefix (ref, "cache/") && !g_hash_table_contains (kept, commit))
      g_hash_table_add (doomed, ref);
}

/* The repository's own refs (no remote's, no mirror's), each to its commit. */
static GHashTable *
local_refs (OstreeRepo *repo, GError **error)
{
  g_autoptr(GHashTable) refs = NULL;
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_list_refs_ext (repo, NULL, &refs,
                                  OSTREE_REPO_LIST_REFS_EXT_EXCLUDE_REMOTES
                                      | OSTREE_REPO_LIST_REFS_EXT_EXCLUDE_MIRRORS,
                                  NULL, &local_error))
    return util_fail (error, "cannot list the repository's refs: %s", local_error->message), NULL;
  return g_steal_pointer (&refs);
}

GPtrArray *
prune_plan (OstreeRepo *repo, GPtrArray *specs, GError **error)
{
  g_autoptr(GHashTable) images = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) needed = needed_package_refs (specs, images, error);
  if (needed == NULL)
    return NULL;

  g_autoptr(GHashTable) refs = local_refs (repo, error);
  if (refs == NULL)
    return NULL;

  g_autoptr(GHashTable) made = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) doomed = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter iter;
  gpointer ref;
  g_hash_table_iter_init (&iter, refs);
  while (g_hash_table_iter_next (&iter, &ref, NULL))
    if (unneeded_build_ref (ref, needed, images, made))
      g_hash_table_add (doomed, ref);
  /* The image refs themselves, once every stage ref has been seen. */
  g_hash_table_iter_init (&iter, refs);
  while (g_hash_table_iter_next (&iter, &ref, NULL))
    if (g_hash_table_contains (made, ref) && !g_hash_table_contains (images, ref))
      g_hash_table_add (doomed, ref);

  doom_orphan_cache_refs (refs, doomed);

  g_autoptr(GPtrArray) sorted = util_sorted_keys (doomed);
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < sorted->len; i++)
    g_ptr_array_add (out, g_strdup (sorted->pdata[i]));
  return g_steal_pointer (&out);
}

/* The directories of refs/heads above REF, from the deepest, removed
 * while empty. */
static void
remove_empty_parents (int repo_dfd, const char *ref)
{
  g_autofree char *path = refs_file_path (NULL, ref);
  for (char *slash = strrchr (path, '/'); slash != NULL; slash = strrchr (path, '/'))
    {
      *slash = '\0';
      if (g_str_equal (path, "refs/heads") || unlinkat (repo_dfd, path, AT_REMOVEDIR) < 0)
        return;
    }
}

/* What deleting refs leaves: the directories of refs/heads above them, a
 * checkout kept for a ref that is gone (or that holds another commit
 * now, which would keep its files' objects on disk), every object no ref
 * reaches. */
static gboolean
prune_after_refs (OstreeRepo *repo, GPtrArray *refs, PruneStats *stats,
                  GCancellable *cancellable, GError **error)
{
  for (guint i = 0; i < refs->len; i++)
    remove_empty_parents (ostree_repo_get_dfd (repo), refs->pdata[i]);
  guint kept_removed;
  if (!kept_checkout_prune (repo, &kept_removed, cancellable, error))
    return FALSE;

  g_autoptr(GError) local_error = NULL;
  *stats = (PruneStats) { 0 };
  if (!ostree_repo_prune (repo, OSTREE_REPO_PRUNE_FLAGS_REFS_ONLY, -1, &stats->objects_total,
                          &stats->objects_pruned, &stats->bytes_freed, cancellable, &local_error))
    return util_fail (error, "the refs are deleted, but not the objects only they held: %s; "
                      "run the same command again", local_error->message);
  return TRUE;
}

gboolean
prune_delete (OstreeRepo *repo, GPtrArray *refs, PruneStats *stats, GCancellable *cancellable,
              GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(RepoTxn) txn = repo_txn_begin (repo, cancellable, &local_error);
  if (txn == NULL)
    return util_fail (error, "cannot begin a transaction: %s", local_error->message);
  for (guint i = 0; i < refs->len; i++)
    repo_txn_set_ref (txn, refs->pdata[i], NULL);
  if (!repo_txn_finish (txn, cancellable, &local_error))
    return util_fail (error, "cannot delete the refs: %s", local_error->message);
  return prune_after_refs (repo, refs, stats, cancellable, error);
}

gboolean
prune_delete_untrusted (OstreeRepo *repo, GPtrArray *refs, PruneStats *stats,
                        GCancellable *cancellable, GError **error)
{
  for (guint i = 0; i < refs->len; i++)
    {
      g_autoptr(GError) local_error = NULL;
      if (!ostree_repo_set_ref_immediate (repo, NULL, refs->pdata[i], NULL, cancellable,
                                          &local_error))
        return util_fail (error, "cannot delete the ref %s: %s", (const char *) refs->pdata[i],
                          local_error->message);
    }
  return prune_after_refs (repo, refs, stats, cancellable, error);
}

/* The derived ref a target of "ninja -t targets all" ("PATH: RULE") is
 * the ref file of, or NULL. */
static char *
derived_ref_of_target (const char *line)
{
  const char *heads = "refs/heads/" TREERULES_DERIVED_PREFIX;
  const char *at = strstr (line, heads);
  if (at == NULL || (at != line && at[-1] != '/'))
    return NULL;
  const char *end = strstr (at, ": ");
  if (end == NULL)
    return NULL;
  at += strlen ("refs/heads/");
  return g_strndup (at, end - at);
}

GHashTable *
prune_graph_refs (const char *graph, GError **error)
{
  const char *argv[] = { "ninja", "-f", graph, "-t", "targets", "all", NULL };
  g_autofree char *out = NULL, *err = NULL;
  int status;
  g_autoptr(GError) local_error = NULL;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                     &status, &local_error))
    return util_fail (error, "%s: cannot list its targets: %s", graph, local_error->message), NULL;
  if (!g_spawn_check_wait_status (status, NULL))
    {
      /* ninja's first line says it; the next ones quote the file. */
      char *newline = strchr (err, '\n');
      if (newline != NULL)
        *newline = '\0';
      return util_fail (error, "%s: cannot list its targets: %s", graph, err), NULL;
    }

  g_autoptr(GHashTable) named = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);
  for (char **line = lines; *line != NULL; line++)
    {
      char *ref = derived_ref_of_target (*line);
      if (ref != NULL)
        g_hash_table_add (named, ref);
    }
  return g_steal_pointer (&named);
}

gboolean
prune_plan_derived (OstreeRepo *repo, GHashTable *named, GPtrArray *plan, GError **error)
{
  g_autoptr(GHashTable) refs = local_refs (repo, error);
  if (refs == NULL)
    return FALSE;
  GHashTableIter iter;
  gpointer ref;
  g_hash_table_iter_init (&iter, refs);
  while (g_hash_table_iter_next (&iter, &ref, NULL))
    if (g_str_has_prefix (ref, TREERULES_DERIVED_PREFIX) && !g_hash_table_contains (named, ref))
      g_ptr_array_add (plan, g_strdup (ref));
  g_ptr_array_sort (plan, util_compare_strings);
  return TRUE;
}
