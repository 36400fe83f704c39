/* Unit tests for store/tarentry: what a tar entry is as a tree entry (its
 * kind, owner, mode, link targets), its extended attributes in OSTree's
 * form, its path as tree components, the one table of file types OSTree
 * cannot store, and the table hardlinks are resolved against. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <string.h>
#include <sys/stat.h>

#include "barestore/tarentry.h"

static void
entry_free (struct archive_entry *entry)
{
  archive_entry_free (entry);
}
typedef struct archive_entry ArchiveEntry;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ArchiveEntry, entry_free)

static ArchiveEntry *
entry_new (const char *path, mode_t type, guint32 perm)
{
  ArchiveEntry *entry = archive_entry_new ();
  archive_entry_set_pathname (entry, path);
  archive_entry_set_filetype (entry, type);
  archive_entry_set_perm (entry, perm);
  return entry;
}

static void
test_kinds_owner_and_mode_are_read (void)
{
  g_autoptr(ArchiveEntry) dir = entry_new ("./usr/", AE_IFDIR, 02775);
  archive_entry_set_uid (dir, 5);
  archive_entry_set_gid (dir, 6);
  TarEntry te;
  tarentry_get (dir, &te);
  g_assert_cmpint (te.kind, ==, TARENTRY_DIR);
  g_assert_cmpuint (te.uid, ==, 5);
  g_assert_cmpuint (te.gid, ==, 6);
  g_assert_cmpuint (te.mode, ==, 02775);

  g_autoptr(ArchiveEntry) file = entry_new ("usr/bin/ping", AE_IFREG, 04755);
  tarentry_get (file, &te);
  g_assert_cmpint (te.kind, ==, TARENTRY_REGULAR);
  g_assert_cmpuint (te.mode, ==, 04755);
  g_assert_null (te.symlink);
  g_assert_null (te.hardlink);

  g_autoptr(ArchiveEntry) link = entry_new ("usr/bin/pong", AE_IFLNK, 0777);
  archive_entry_set_symlink (link, "ping");
  tarentry_get (link, &te);
  g_assert_cmpint (te.kind, ==, TARENTRY_SYMLINK);
  g_assert_cmpstr (te.symlink, ==, "ping");
}

static void
test_a_hardlink_is_a_hardlink_whatever_its_type (void)
{
  g_autoptr(ArchiveEntry) entry = entry_new ("usr/bin/ping2", AE_IFREG, 0644);
  archive_entry_set_hardlink (entry, "usr/bin/ping");
  TarEntry te;
  tarentry_get (entry, &te);
  g_assert_cmpint (te.kind, ==, TARENTRY_HARDLINK);
  g_assert_cmpstr (te.hardlink, ==, "usr/bin/ping");
}

static void
test_devices_fifos_and_sockets_are_special_and_named (void)
{
  static const struct {
    mode_t type;
    const char *name;
  } cases[] = {
    { AE_IFCHR, "character device" },
    { AE_IFBLK, "block device" },
    { AE_IFIFO, "fifo" },
    { AE_IFSOCK, "socket" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(ArchiveEntry) entry = entry_new ("dev/x", cases[i].type, 0666);
      TarEntry te;
      tarentry_get (entry, &te);
      g_assert_cmpint (te.kind, ==, TARENTRY_SPECIAL);
      g_assert_cmpstr (tarentry_special_name (te.type), ==, cases[i].name);
    }
  /* The same table serves stat()'s modes, permission bits and all. */
  g_assert_cmpstr (tarentry_special_name (S_IFIFO | 0644), ==, "fifo");
  g_assert_cmpstr (tarentry_special_name (S_IFCHR | 0600), ==, "character device");
  g_assert_cmpstr (tarentry_special_name (S_IFREG | 0644), ==, "unknown file type");
}

static void
test_no_xattrs_give_null (void)
{
  g_autoptr(ArchiveEntry) entry = entry_new ("x", AE_IFREG, 0644);
  g_assert_null (tarentry_xattrs (entry));
}

static void
test_xattrs_are_sorted_and_a_repeated_name_keeps_its_last_value (void)
{
  static const guint8 cap[] = { 0x01, 0x00, 0x00, 0x02, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00 };
  g_autoptr(ArchiveEntry) entry = entry_new ("usr/bin/ping", AE_IFREG, 0755);
  archive_entry_xattr_add_entry (entry, "user.b", "2", 1);
  archive_entry_xattr_add_entry (entry, "security.capability", cap, sizeof cap);
  /* A pax header may carry one name twice: the later value is the one
   * kept, as tar reads it. */
  archive_entry_xattr_add_entry (entry, "user.a", "first", 5);
  archive_entry_xattr_add_entry (entry, "user.a", "second", 6);
  g_autoptr(GVariant) xattrs = tarentry_xattrs (entry);
  g_assert_nonnull (xattrs);
  g_assert_cmpstr (g_variant_get_type_string (xattrs), ==, "a(ayay)");
  g_assert_cmpuint (g_variant_n_children (xattrs), ==, 3);

  static const char *const names[] = { "security.capability", "user.a", "user.b" };
  for (gsize i = 0; i < 3; i++)
    {
      const char *name;
      g_autoptr(GVariant) value = NULL;
      g_variant_get_child (xattrs, i, "(^&ay@ay)", &name, &value);
      g_assert_cmpstr (name, ==, names[i]);
      gsize size;
      const guint8 *data = g_variant_get_fixed_array (value, &size, 1);
      if (i == 0)
        g_assert_cmpmem (data, size, cap, sizeof cap);
      if (i == 1)
        g_assert_cmpmem (data, size, "second", 6);
    }

  /* And back onto an entry, for export: the same attributes again. */
  g_autoptr(ArchiveEntry) out = entry_new ("usr/bin/ping", AE_IFREG, 0755);
  tarentry_set_xattrs (out, xattrs);
  tarentry_set_xattrs (out, NULL);
  g_autoptr(GVariant) again = tarentry_xattrs (out);
  g_assert_true (g_variant_equal (xattrs, again));
}

static void
test_paths_become_components (void)
{
  const char *problem = NULL;
  g_autoptr(GPtrArray) c = tarentry_components ("./usr//bin/x", &problem);
  g_assert_nonnull (c);
  g_assert_cmpuint (c->len, ==, 3);
  g_assert_cmpstr (c->pdata[0], ==, "usr");
  g_assert_cmpstr (c->pdata[2], ==, "x");
  g_autoptr(GPtrArray) root = tarentry_components ("./", &problem);
  g_assert_nonnull (root);
  g_assert_cmpuint (root->len, ==, 0);
}

static void
test_paths_outside_the_tree_are_refused (void)
{
  static const struct {
    const char *path;
    const char *problem_has;
  } cases[] = {
    { "/etc/passwd", "absolute path" },
    { "usr/../../etc", "\"..\"" },
    { "etc/a\nb", "newline" },
    { "etc/\xff", "UTF-8" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *problem = NULL;
      GPtrArray *c = tarentry_components (cases[i].path, &problem);
      g_assert_null (c);
      g_assert_nonnull (problem);
      g_assert_nonnull (strstr (problem, cases[i].problem_has));
    }
}

static void
test_hardlinks_name_earlier_files_or_skipped_entries (void)
{
  g_autoptr(TarEntryLinks) links = tarentry_links_new ();
  const char *checksum;
  g_assert_cmpint (tarentry_links_lookup (links, "/etc/x", &checksum), ==, TARENTRY_LINK_MISSING);
  g_assert_null (checksum);

  tarentry_links_add_file (links, "/etc/x", "aaaa");
  g_assert_cmpint (tarentry_links_lookup (links, "/etc/x", &checksum), ==, TARENTRY_LINK_FILE);
  g_assert_cmpstr (checksum, ==, "aaaa");
  /* A later entry at the same path is what a later hardlink gets. */
  tarentry_links_add_file (links, "/etc/x", "bbbb");
  g_assert_cmpint (tarentry_links_lookup (links, "/etc/x", &checksum), ==, TARENTRY_LINK_FILE);
  g_assert_cmpstr (checksum, ==, "bbbb");

  tarentry_links_add_skipped (links, "/run/fifo");
  g_assert_cmpint (tarentry_links_lookup (links, "/run/fifo", &checksum), ==,
                   TARENTRY_LINK_SKIPPED);
  g_assert_null (checksum);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tarentry/kinds-owner-and-mode-are-read", test_kinds_owner_and_mode_are_read);
  g_test_add_func ("/tarentry/a-hardlink-is-a-hardlink-whatever-its-type",
                   test_a_hardlink_is_a_hardlink_whatever_its_type);
  g_test_add_func ("/tarentry/devices-fifos-and-sockets-are-special-and-named",
                   test_devices_fifos_and_sockets_are_special_and_named);
  g_test_add_func ("/tarentry/no-xattrs-give-null", test_no_xattrs_give_null);
  g_test_add_func ("/tarentry/xattrs-are-sorted-and-a-repeated-name-keeps-its-last-value",
                   test_xattrs_are_sorted_and_a_repeated_name_keeps_its_last_value);
  g_test_add_func ("/tarentry/paths-become-components", test_paths_become_components);
  g_test_add_func ("/tarentry/paths-outside-the-tree-are-refused",
                   test_paths_outside_the_tree_are_refused);
  g_test_add_func ("/tarentry/hardlinks-name-earlier-files-or-skipped-entries",
                   test_hardlinks_name_earlier_files_or_skipped_entries);
  return g_test_run ();
}
