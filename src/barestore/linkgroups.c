/* linkgroups.c — hard-link groups of a tree: built as a union of linked
 * pairs, written to and read from commit metadata in one fixed order. */
#include "config.h"

#include <string.h>

#include "barestore/linkgroups.h"

struct LinkGroups {
  GHashTable *parent;  /* path -> a path of the same group, up to the group's root */
};

LinkGroups *
linkgroups_new (void)
{
  LinkGroups *groups = g_new0 (LinkGroups, 1);
  groups->parent = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return groups;
}

void
linkgroups_free (LinkGroups *groups)
{
  if (groups == NULL)
    return;
  g_hash_table_unref (groups->parent);
  g_free (groups);
}

/* The root of PATH's group (PATH itself when it is in none). */
static const char *
group_root (LinkGroups *groups, const char *path)
{
  const char *p = path;
  for (;;)
    {
      const char *up = g_hash_table_lookup (groups->parent, p);
      if (up == NULL || g_str_equal (up, p))
        return p;
      p = up;
    }
}

static void
ensure_member (LinkGroups *groups, const char *path)
{
  if (!g_hash_table_contains (groups->parent, path))
    g_hash_table_insert (groups->parent, g_strdup (path), g_strdup (path));
}

void
linkgroups_link (LinkGroups *groups, const char *a, const char *b)
{
  if (g_str_equal (a, b))
    return;
  ensure_member (groups, a);
  ensure_member (groups, b);
  g_autofree char *root_a = g_strdup (group_root (groups, a));
  const char *root_b = group_root (groups, b);
  if (!g_str_equal (root_a, root_b))
    g_hash_table_replace (groups->parent, g_strdup (root_b), g_strdup (root_a));
}

void
linkgroups_add_metadata (LinkGroups *groups, GVariant *metadata)
{
  g_autoptr(GVariant) value = g_variant_lookup_value (metadata, LINKGROUPS_META_KEY,
                                                      G_VARIANT_TYPE (LINKGROUPS_TYPE));
  if (value == NULL)
    return;
  GVariantIter iter;
  g_variant_iter_init (&iter, value);
  g_autoptr(GVariant) group = NULL;
  while ((group = g_variant_iter_next_value (&iter)) != NULL)
    {
      gsize n;
      g_autofree const char **paths = g_variant_get_strv (group, &n);
      for (gsize i = 1; i < n; i++)
        linkgroups_link (groups, paths[0], paths[i]);
      g_clear_pointer (&group, g_variant_unref);
    }
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static int
compare_groups (gconstpointer a, gconstpointer b)
{
  GPtrArray *ga = *(GPtrArray *const *) a, *gb = *(GPtrArray *const *) b;
  return strcmp (ga->pdata[0], gb->pdata[0]);
}

GVariant *
linkgroups_to_variant (LinkGroups *groups)
{
  /* root -> its members (borrowed from the table's keys) */
  g_autoptr(GHashTable) members = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                                         (GDestroyNotify) g_ptr_array_unref);
  GHashTableIter iter;
  gpointer path;
  g_hash_table_iter_init (&iter, groups->parent);
  while (g_hash_table_iter_next (&iter, &path, NULL))
    {
      const char *root = group_root (groups, path);
      GPtrArray *group = g_hash_table_lookup (members, root);
      if (group == NULL)
        {
          group = g_ptr_array_new ();
          g_hash_table_insert (members, (gpointer) root, group);
        }
      g_ptr_array_add (group, path);
    }

  g_autoptr(GPtrArray) sorted = g_ptr_array_new ();
  GPtrArray *group;
  g_hash_table_iter_init (&iter, members);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &group))
    if (group->len >= 2)
      {
        g_ptr_array_sort (group, compare_strings);
        g_ptr_array_add (sorted, group);
      }
  if (sorted->len == 0)
    return NULL;
  g_ptr_array_sort (sorted, compare_groups);

  GVariantBuilder builder;
  g_variant_builder_init (&builder, G_VARIANT_TYPE (LINKGROUPS_TYPE));
  for (guint i = 0; i < sorted->len; i++)
    {
      GPtrArray *g = sorted->pdata[i];
      g_variant_builder_add_value (&builder, g_variant_new_strv ((const char *const *) g->pdata,
                                                                  g->len));
    }
  return g_variant_builder_end (&builder);
}

GHashTable *
linkgroups_index_metadata (GVariant *metadata)
{
  g_autoptr(GVariant) value = g_variant_lookup_value (metadata, LINKGROUPS_META_KEY,
                                                      G_VARIANT_TYPE (LINKGROUPS_TYPE));
  if (value == NULL || g_variant_n_children (value) == 0)
    return NULL;
  GHashTable *index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (gsize i = 0; i < g_variant_n_children (value); i++)
    {
      g_autoptr(GVariant) group = g_variant_get_child_value (value, i);
      gsize n;
      g_autofree const char **paths = g_variant_get_strv (group, &n);
      for (gsize j = 0; j < n; j++)
        g_hash_table_replace (index, g_strdup (paths[j]), GUINT_TO_POINTER (i + 1));
    }
  return index;
}
