/* debmeta.h — a package's dpkg metadata, from control.tar to what dpkg's
 * database holds for it:
 *  - the control file's fields, parsed (one deb822 stanza, kept in order and
 *    verbatim) and checked as dpkg checks them (Package, Version and
 *    Architecture by Debian's grammar, Multi-Arch, no status-only fields);
 *  - the conffiles, with the md5sum of each as data.tar delivers it;
 *  - the files it becomes in the tree: var/lib/dpkg/info/PKG.* (maintainer
 *    scripts, md5sums, triggers...; members whose name has a dot are left
 *    out, as dpkg leaves them out), the .list file of shipped paths, and the
 *    status stanza under DEB_STATUS_DIR (below).
 * Errors name the package as the caller does ("NAME: control file has no
 * Version field"). */
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <glib.h>

G_BEGIN_DECLS

/* Where each package's status stanza lives inside its tree:
 * DEB_STATUS_DIR/NAME:ARCH.  The stanza is the package's control fields in
 * dpkg's order plus "Status: install ok unpacked" and "Conffiles:" with the
 * md5sum of each conffile; it ends with one newline (no blank line).  The
 * step that assembles var/lib/dpkg/status concatenates these files. */
#define DEB_STATUS_DIR "var/lib/apt2ostree/status"

/* "NAME" or "NAME:ARCH" (Multi-Arch: same): how dpkg names the package's
 * files in var/lib/dpkg/info. */
char *deb_info_basename (const char *name, const char *arch, const char *multi_arch);

typedef struct DebMeta DebMeta;

/* NAME (how errors name the .deb) must outlive the DebMeta. */
DebMeta *debmeta_new (const char *name);
void debmeta_free (DebMeta *meta);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DebMeta, debmeta_free)

/* One entry of control.tar (MEMBER, "control.tar.xz"): a member dpkg
 * installs is kept, with its data read from A. */
gboolean debmeta_control_entry (DebMeta *meta, const char *member, struct archive *a,
                                struct archive_entry *entry, GError **error);

/* After control.tar: the control file parsed and checked, the conffiles
 * read. */
gboolean debmeta_load (DebMeta *meta, GError **error);

/* A one-word field (Package, Version...) without surrounding blanks, or
 * NULL when absent or empty; after debmeta_load(). */
char *debmeta_field_word (DebMeta *meta, const char *name);

/* The control file's fields as one stanza, in its order and verbatim,
 * each line ending in a newline, without the fields LEAVE_OUT names
 * (NULL-terminated, or NULL); after debmeta_load(). */
char *debmeta_control_stanza (DebMeta *meta, const char *const *leave_out);

/* data.tar's side: each entry's shipped path, as components, for the .list
 * file (the root is "/."). */
void debmeta_list_append (DebMeta *meta, GPtrArray *shipped);

/* Is SHIPPED_PATH ("/etc/foo") a conffile?  Then its md5sum (hex) goes to
 * debmeta_conffile_set_md5(). */
gboolean debmeta_is_conffile (DebMeta *meta, const char *shipped_path);
void debmeta_conffile_set_md5 (DebMeta *meta, const char *shipped_path, const char *md5);

/* The entry at SHIPPED_PATH is a hardlink to TARGET (TARGET_SHIPPED_PATH
 * normalized): a conffile that is a hardlink has its target's md5sum, and
 * its target must be a conffile seen before. */
gboolean debmeta_conffile_hardlink (DebMeta *meta, const char *shipped_path,
                                    const char *target_shipped_path, const char *target,
                                    GError **error);

/* One file of the metadata: PATH in the tree ("var/lib/dpkg/info/x.list"),
 * its DATA and MODE (owned by root). */
typedef gboolean (*DebMetaFileFunc) (gpointer user_data, const char *path, GBytes *data,
                                     guint32 mode, GError **error);

/* A package that ships no md5sums gets the one dpkg --unpack writes for it:
 * every regular file in data.tar order, conffiles and hard links included
 * (a link with its target's md5), as "MD5  path/without/leading/slash";
 * empty (but there) when it has no regular file. */
gboolean debmeta_wants_md5sums (DebMeta *meta);
void debmeta_md5sum_add (DebMeta *meta, const char *shipped_path, const char *md5);
void debmeta_md5sum_hardlink (DebMeta *meta, const char *shipped_path,
                              const char *target_shipped_path);

/* After data.tar: FUNC for each file the metadata becomes, in a fixed
 * order (info files by name, the .list file, the status stanza).  PACKAGE,
 * ARCH and MULTI_ARCH name the info files (deb_info_basename()) and the
 * stanza.  Fails when a conffile is missing from data.tar. */
gboolean debmeta_foreach_file (DebMeta *meta, const char *package, const char *arch,
                               const char *multi_arch, DebMetaFileFunc func,
                               gpointer user_data, GError **error);

G_END_DECLS
