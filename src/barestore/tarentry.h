/* tarentry.h — what a tar entry (libarchive's archive_entry) is as an entry
 * of an OSTree tree, for every reader of tar streams: a .deb's data.tar
 * (deb/), `import --tar` and `export --tar` (tarball), and the file types
 * the overlay's upper directory may hold (sandbox/upper).
 *
 * One place for: the entry's kind (directory, file, symlink, hardlink, or a
 * file OSTree cannot store), its owner and permission bits, its symlink and
 * hardlink targets, its extended attributes in OSTree's a(ayay) form (and
 * back), its path as tree components, the names of device nodes, fifos and
 * sockets, and the table of earlier files that hardlinks name.  GLib and
 * libarchive only (no libostree): the lean unpack path uses it. */
#pragma once

#include <archive_entry.h>
#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

typedef enum {
  TARENTRY_DIR,
  TARENTRY_REGULAR,
  TARENTRY_SYMLINK,
  /* Names an earlier file (tar writes the data once, with the first name),
   * whatever file type the archive gives the entry. */
  TARENTRY_HARDLINK,
  /* A device node, fifo or socket: OSTree stores none (the sandbox mounts
   * /dev), so callers leave it out and say so. */
  TARENTRY_SPECIAL,
} TarEntryKind;

typedef struct {
  TarEntryKind kind;
  mode_t type;            /* the archive's file type bits (AE_IF*, equal to S_IF*) */
  guint32 uid;
  guint32 gid;
  guint32 mode;           /* permission bits, setuid/setgid/sticky included (07777) */
  const char *symlink;    /* TARENTRY_SYMLINK: the target, borrowed (may be NULL or "") */
  const char *hardlink;   /* TARENTRY_HARDLINK: the path it names, borrowed */
} TarEntry;

/* What ENTRY is; the strings stay ENTRY's. */
void tarentry_get (struct archive_entry *entry, TarEntry *out);

/* The name of a file type OSTree cannot store (MODE's S_IFMT bits, from
 * stat() or libarchive): "character device", "block device", "fifo",
 * "socket", else "unknown file type".  The one table of such names: .deb
 * commits record it (apt2ostree.skipped), import and the upper-directory
 * fold print it. */
const char *tarentry_special_name (guint32 mode);

/* The entry's extended attributes (security.capability, user.*...) as
 * OSTree stores them: a(ayay) sorted by name, so the checksum does not
 * depend on the archive's order; an attribute the archive carries twice
 * (pax headers may) keeps the value libarchive lists first, which is the
 * one added last.  NULL when it has none, which
 * OSTree's formats take as the empty array. */
GVariant *tarentry_xattrs (struct archive_entry *entry);

/* The other way, for writing an archive: XATTRS (a(ayay), may be NULL)
 * onto ENTRY. */
void tarentry_set_xattrs (struct archive_entry *entry, GVariant *xattrs);

/* PATHNAME (an archive member's name, or a hardlink's target) as tree
 * components: "./usr/bin/x" and "usr/bin/x" give usr, bin, x, and "./"
 * none (the root).  NULL with *OUT_PROBLEM set when it cannot name a file
 * inside the tree: an absolute path, ".." or whatever
 * util_tree_path_problem() refuses.  The caller words the error, naming
 * its archive. */
GPtrArray *tarentry_components (const char *pathname, const char **out_problem);

/* What hardlinks may name: the files of the archive so far (by tree path,
 * "/usr/bin/x", with their content checksums) and the entries left out. */
typedef struct TarEntryLinks TarEntryLinks;

TarEntryLinks *tarentry_links_new (void);
void tarentry_links_free (TarEntryLinks *links);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TarEntryLinks, tarentry_links_free)

/* PATH now holds the file CHECKSUM (a later entry at PATH replaces it). */
void tarentry_links_add_file (TarEntryLinks *links, const char *path, const char *checksum);
/* The entry at PATH was left out: a hardlink to it is left out too. */
void tarentry_links_add_skipped (TarEntryLinks *links, const char *path);

typedef enum {
  TARENTRY_LINK_FILE,      /* an earlier file: its checksum is the link's */
  TARENTRY_LINK_SKIPPED,   /* an entry that was left out */
  TARENTRY_LINK_MISSING,   /* nothing earlier in the archive (an error) */
} TarEntryLinkTarget;

/* What the hardlink to PATH names; *OUT_CHECKSUM (borrowed) for a file. */
TarEntryLinkTarget tarentry_links_lookup (TarEntryLinks *links, const char *path,
                                          const char **out_checksum);

G_END_DECLS
