/* Unit tests for store/linkgroups: linked pairs become groups, groups
 * that share a path become one (stage 1's union of packages), the metadata
 * value has one order whatever the order of the links, and a writer's
 * index maps each path to its group. */
#include "config.h"

#include "barestore/linkgroups.h"

static char *
groups_text (LinkGroups *groups)
{
  GVariant *v = linkgroups_to_variant (groups);
  if (v == NULL)
    return NULL;
  g_variant_ref_sink (v);
  char *text = g_variant_print (v, FALSE);
  g_variant_unref (v);
  return text;
}

static void
test_no_links_give_no_value (void)
{
  g_autoptr(LinkGroups) groups = linkgroups_new ();
  g_assert_null (linkgroups_to_variant (groups));
  linkgroups_link (groups, "/a", "/a");  /* a path linked to itself is no group */
  g_assert_null (linkgroups_to_variant (groups));
}

static void
test_order_is_fixed (void)
{
  g_autoptr(LinkGroups) one = linkgroups_new ();
  linkgroups_link (one, "/z", "/y");
  linkgroups_link (one, "/b", "/c");
  linkgroups_link (one, "/y", "/a");
  g_autoptr(LinkGroups) two = linkgroups_new ();
  linkgroups_link (two, "/c", "/b");
  linkgroups_link (two, "/a", "/z");
  linkgroups_link (two, "/a", "/y");
  g_autofree char *t1 = groups_text (one);
  g_autofree char *t2 = groups_text (two);
  g_assert_cmpstr (t1, ==, "[['/a', '/y', '/z'], ['/b', '/c']]");
  g_assert_cmpstr (t2, ==, t1);
}

static GVariant *
metadata_with (LinkGroups *groups)
{
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", LINKGROUPS_META_KEY, linkgroups_to_variant (groups));
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

static void
test_groups_sharing_a_path_join (void)
{
  g_autoptr(LinkGroups) p1 = linkgroups_new ();
  linkgroups_link (p1, "/a", "/b");
  g_autoptr(LinkGroups) p2 = linkgroups_new ();
  linkgroups_link (p2, "/b", "/c");
  linkgroups_link (p2, "/x", "/y");
  g_autoptr(GVariant) m1 = metadata_with (p1);
  g_autoptr(GVariant) m2 = metadata_with (p2);
  g_autoptr(LinkGroups) all = linkgroups_new ();
  linkgroups_add_metadata (all, m1);
  linkgroups_add_metadata (all, m2);
  g_autofree char *text = groups_text (all);
  g_assert_cmpstr (text, ==, "[['/a', '/b', '/c'], ['/x', '/y']]");

  g_autoptr(GHashTable) index = linkgroups_index_metadata (m2);
  g_assert_cmpuint (GPOINTER_TO_UINT (g_hash_table_lookup (index, "/b")), ==, 1);
  g_assert_cmpuint (GPOINTER_TO_UINT (g_hash_table_lookup (index, "/c")), ==, 1);
  g_assert_cmpuint (GPOINTER_TO_UINT (g_hash_table_lookup (index, "/y")), ==, 2);
  g_assert_null (g_hash_table_lookup (index, "/a"));
}

static void
test_metadata_without_groups (void)
{
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", LINKGROUPS_META_KEY, g_variant_new_string ("not groups"));
  g_autoptr(GVariant) wrong = g_variant_ref_sink (g_variant_builder_end (&b));
  g_assert_null (linkgroups_index_metadata (wrong));
  g_autoptr(LinkGroups) groups = linkgroups_new ();
  linkgroups_add_metadata (groups, wrong);
  g_assert_null (linkgroups_to_variant (groups));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/linkgroups/no-links-give-no-value", test_no_links_give_no_value);
  g_test_add_func ("/linkgroups/order-is-fixed", test_order_is_fixed);
  g_test_add_func ("/linkgroups/groups-sharing-a-path-join", test_groups_sharing_a_path_join);
  g_test_add_func ("/linkgroups/metadata-without-groups", test_metadata_without_groups);
  return g_test_run ();
}
