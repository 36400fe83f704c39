/* buildsync.c — a build that makes its writes durable once, at its end
 * (buildsync.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "barestore/refs.h"
#include "barestore/unsynced.h"
#include "base/util.h"
#include "graph/buildsync.h"
#include "graph/prune.h"
#include "store/keptcheckout.h"

/* How long before its marker a build's first write may seem to be (the
 * clock set back meanwhile): refs that recent are taken as its too. */
#define CLOCK_MARGIN_SECONDS 60

/* The local refs of REPO whose ref file was written at SINCE or later. */
static GPtrArray *
refs_written_since (OstreeRepo *repo, gint64 since, GError **error)
{
  g_autoptr(GHashTable) refs = NULL;
  if (!ostree_repo_list_refs_ext (repo, NULL, &refs,
                                  OSTREE_REPO_LIST_REFS_EXT_EXCLUDE_REMOTES
                                  | OSTREE_REPO_LIST_REFS_EXT_EXCLUDE_MIRRORS,
                                  NULL, error))
    return NULL;
  g_autoptr(GPtrArray) recent = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter iter;
  gpointer ref;
  g_hash_table_iter_init (&iter, refs);
  while (g_hash_table_iter_next (&iter, &ref, NULL))
    {
      g_autofree char *path = refs_file_path (NULL, ref);
      struct stat st;
      if (fstatat (ostree_repo_get_dfd (repo), path, &st, AT_SYMLINK_NOFOLLOW) == 0
          && st.st_mtim.tv_sec >= since)
        g_ptr_array_add (recent, g_strdup (ref));
    }
  g_ptr_array_sort (recent, util_compare_strings);
  return g_steal_pointer (&recent);
}

/* The machine stopped while the builds of FOREIGN (markers of another
 * boot) had writes not on disk: delete what they may have written. */
static gboolean
recover (OstreeRepo *repo, const char *repo_path, GPtrArray *foreign, GCancellable *cancellable,
         GError **error)
{
  gint64 since = G_MAXINT64;
  for (guint i = 0; i < foreign->len; i++)
    since = MIN (since, ((UnsyncedMarker *) foreign->pdata[i])->mtime);
  since -= CLOCK_MARGIN_SECONDS;
  g_autoptr(GPtrArray) refs = refs_written_since (repo, since, error);
  if (refs == NULL)
    return FALSE;
  /* Kept checkouts hold copied files of their own, as unsynced as the
   * rest: the next --incremental checks the image out again. */
  PruneStats stats;
  g_autoptr(GError) local_error = NULL;
  if (!kept_checkout_remove_all (repo, &local_error)
      || !prune_delete_untrusted (repo, refs, &stats, cancellable, &local_error))
    return util_fail (error, "%s: cannot remove what an interrupted build wrote: %s", repo_path,
                      local_error->message);
  g_autoptr(GDateTime) when = g_date_time_new_from_unix_local (since + CLOCK_MARGIN_SECONDS);
  g_autofree char *shown = g_date_time_format (when, "%Y-%m-%d %H:%M:%S");
  fprintf (stderr, "apt2ostree: %s: the machine stopped during a build begun at %s, before its "
           "writes were on disk: its %u trees are removed (%d objects), and built again\n",
           repo_path, shown, refs->len, stats.objects_pruned);
  return TRUE;
}

gboolean
buildsync_recover (OstreeRepo *repo, GCancellable *cancellable, GError **error)
{
  int dfd = ostree_repo_get_dfd (repo);
  g_autofree char *repo_path = g_file_get_path (ostree_repo_get_path (repo));
  g_autoptr(GPtrArray) left = unsynced_leftovers (dfd, repo_path, error);
  if (left == NULL)
    return FALSE;
  g_autoptr(GPtrArray) foreign = g_ptr_array_new ();
  for (guint i = 0; i < left->len; i++)
    {
      UnsyncedMarker *m = left->pdata[i];
      if (m->foreign)
        g_ptr_array_add (foreign, m);
      /* A killed build of this boot: what it wrote is whole, in memory. */
      else if (!unsynced_end (dfd, repo_path, m->name, error))
        return FALSE;
    }
  if (foreign->len == 0)
    return TRUE;
  if (!recover (repo, repo_path, foreign, cancellable, error))
    return FALSE;
  for (guint i = 0; i < foreign->len; i++)
    if (!unsynced_remove (dfd, repo_path, ((UnsyncedMarker *) foreign->pdata[i])->name, error))
      return FALSE;
  return TRUE;
}

gboolean
buildsync_begin (OstreeRepo *repo, char **out_marker, GError **error)
{
  g_autofree char *repo_path = g_file_get_path (ostree_repo_get_path (repo));
  g_autofree char *marker = unsynced_begin (ostree_repo_get_dfd (repo), repo_path, error);
  if (marker == NULL)
    return FALSE;
  g_setenv (UNSYNCED_ENV, marker, TRUE);
  *out_marker = g_steal_pointer (&marker);
  return TRUE;
}

gboolean
buildsync_end (OstreeRepo *repo, const char *marker, GError **error)
{
  g_unsetenv (UNSYNCED_ENV);
  g_autofree char *repo_path = g_file_get_path (ostree_repo_get_path (repo));
  return unsynced_end (ostree_repo_get_dfd (repo), repo_path, marker, error);
}
