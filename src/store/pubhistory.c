/* pubhistory.c — a published ref's next commit; see pubhistory.h. */
#include "config.h"

#include <string.h>

#include "base/util.h"
#include "store/pubhistory.h"
#include "store/repo.h"

void
pubhistory_entry_free (PubHistoryEntry *entry)
{
  if (entry == NULL)
    return;
  g_free (entry->ref);
  g_free (entry->built);
  g_free (entry->previous);
  g_free (entry->version);
  g_free (entry->published);
  g_free (entry);
}

/* COMMIT's metadata value KEY as a string, or NULL. */
static char *
commit_string (GVariant *commit, const char *key)
{
  g_autoptr(GVariant) meta = g_variant_get_child_value (commit, 0);
  const char *value = NULL;
  if (!g_variant_lookup (meta, key, "&s", &value))
    return NULL;
  return g_strdup (value);
}

char *
pubhistory_built_of (OstreeRepo *dest, const char *commit)
{
  g_autoptr(GVariant) v = NULL;
  if (!ostree_repo_load_commit (dest, commit, &v, NULL, NULL))
    return NULL;
  return commit_string (v, PUBHISTORY_BUILT_KEY);
}

/* The version after PREVIOUS: PREVIOUS plus one when it is a whole number. */
static char *
next_version (const char *ref, const char *previous, GError **error)
{
  if (previous == NULL)
    return g_strdup ("1");
  guint64 n = 0;
  g_autoptr(GError) local_error = NULL;
  if (!g_ascii_string_to_unsigned (previous, 10, 0, G_MAXUINT64 - 1, &n, &local_error))
    return util_fail (error, "%s: the version published before is \"%s\", not a number to count "
                      "on from; give --version", ref, previous), NULL;
  return g_strdup_printf ("%" G_GUINT64_FORMAT, n + 1);
}

PubHistoryEntry *
pubhistory_plan (OstreeRepo *dest, const char *ref, const char *built, const char *version,
                 GCancellable *cancellable, GError **error)
{
  g_autoptr(PubHistoryEntry) entry = g_new0 (PubHistoryEntry, 1);
  entry->ref = g_strdup (ref);
  entry->built = g_strdup (built);
  entry->previous = repo_read_ref (dest, ref);
  g_autofree char *previous_version = NULL;
  if (entry->previous != NULL)
    {
      g_autoptr(GVariant) v = NULL;
      g_autoptr(GError) local_error = NULL;
      if (!ostree_repo_load_commit (dest, entry->previous, &v, NULL, &local_error))
        return util_fail (error, "%s: the commit published before (%s): %s", ref,
                          entry->previous, local_error->message), NULL;
      g_autofree char *made_from = commit_string (v, PUBHISTORY_BUILT_KEY);
      previous_version = commit_string (v, "version");
      if (g_strcmp0 (made_from, built) == 0)
        {
          entry->unchanged = TRUE;
          entry->published = g_strdup (entry->previous);
          entry->version = g_steal_pointer (&previous_version);
          return g_steal_pointer (&entry);
        }
    }
  entry->version = version != NULL ? g_strdup (version)
                                   : next_version (ref, previous_version, error);
  if (entry->version == NULL)
    return NULL;
  return g_steal_pointer (&entry);
}

/* The new commit's time: now, unless the built commit or the previous
 * published one is later ("ostree admin upgrade" refuses a commit older
 * than the one deployed, and the publisher's clock may be behind another
 * publisher's or behind SOURCE_DATE_EPOCH). */
static guint64
commit_time (GVariant *built, GVariant *previous)
{
  guint64 t = (guint64) (g_get_real_time () / G_USEC_PER_SEC);
  t = MAX (t, ostree_commit_get_timestamp (built));
  if (previous != NULL)
    t = MAX (t, ostree_commit_get_timestamp (previous));
  return t;
}

/* BUILT's metadata with the version and the built commit's checksum. */
static GVariant *
commit_metadata (GVariant *built, const PubHistoryEntry *entry)
{
  g_autoptr(GVariant) meta = g_variant_get_child_value (built, 0);
  g_auto(GVariantDict) dict;
  g_variant_dict_init (&dict, meta);
  g_variant_dict_insert (&dict, "version", "s", entry->version);
  g_variant_dict_insert (&dict, PUBHISTORY_BUILT_KEY, "s", entry->built);
  return g_variant_ref_sink (g_variant_dict_end (&dict));
}

gboolean
pubhistory_write (OstreeRepo *dest, PubHistoryEntry *entry, GCancellable *cancellable,
                  GError **error)
{
  if (entry->unchanged)
    return TRUE;
  g_autoptr(GVariant) built = NULL;
  g_autoptr(GVariant) previous = NULL;
  g_autoptr(GFile) root = NULL;
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_load_commit (dest, entry->built, &built, NULL, &local_error)
      || (entry->previous != NULL
          && !ostree_repo_load_commit (dest, entry->previous, &previous, NULL, &local_error))
      || !ostree_repo_read_commit (dest, entry->built, &root, NULL, cancellable, &local_error))
    return util_fail (error, "%s: %s", entry->ref, local_error->message);
  const char *subject = NULL, *body = NULL;
  g_variant_get_child (built, 3, "&s", &subject);
  g_variant_get_child (built, 4, "&s", &body);
  g_autoptr(GVariant) meta = commit_metadata (built, entry);
  g_autofree char *commit = NULL;
  if (!ostree_repo_write_commit_with_time (dest, entry->previous, subject, body, meta,
                                           OSTREE_REPO_FILE (root), commit_time (built, previous),
                                           &commit, cancellable, &local_error))
    return util_fail (error, "%s: writing the published commit: %s", entry->ref,
                      local_error->message);
  g_free (entry->published);
  entry->published = g_steal_pointer (&commit);
  return TRUE;
}
