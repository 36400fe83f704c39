/* deb.h — one .deb read with libarchive straight into an OSTree tree: the
 * files of data.tar, and the package's dpkg metadata (info files and its
 * status stanza) so that a union of such trees is a dpkg database with every
 * package "unpacked". */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

/* Where each package's status stanza lives inside its tree:
 * DEB_STATUS_DIR/NAME:ARCH.  The stanza is the package's control fields in
 * dpkg's order plus "Status: install ok unpacked" and "Conffiles:" with the
 * md5sum of each conffile; it ends with one newline (no blank line).  The
 * step that assembles var/lib/dpkg/status concatenates these files. */
#define DEB_STATUS_DIR "var/lib/apt2ostree/status"

/* Commit metadata keys written by deb_commit_metadata(). */
#define DEB_META_PACKAGE "apt2ostree.package"
#define DEB_META_VERSION "apt2ostree.version"
#define DEB_META_ARCHITECTURE "apt2ostree.architecture"
#define DEB_META_MULTI_ARCH "apt2ostree.multi-arch"
#define DEB_META_SHA256 "apt2ostree.deb-sha256"
#define DEB_META_SIZE "apt2ostree.deb-size"
#define DEB_META_MERGED_USR "apt2ostree.merged-usr"
#define DEB_META_SKIPPED "apt2ostree.skipped"
/* The version of the rules deb_unpack_to_mtree() follows (a uint32): it
 * changes when the same .deb would give another tree. */
#define DEB_META_FORMAT "apt2ostree.deb-format"
#define DEB_FORMAT_VERSION 1

typedef struct {
  /* Rewrite bin, sbin, lib, lib32, lib64 and libx32 into usr/ (the .list
   * file keeps the shipped paths). */
  gboolean merged_usr;
  /* How errors name the package: a URL, or NULL for the file's path. */
  const char *display_name;
  /* The .deb's sha256 when the caller knows it (recorded, not checked). */
  const char *sha256;
} DebUnpackOptions;

typedef struct {
  char *package;
  char *version;
  char *architecture;
  char *multi_arch;         /* "no" when the control file has none */
  char *sha256;             /* as given in DebUnpackOptions */
  guint64 size;             /* of the .deb */
  gboolean merged_usr;
  /* Entries OSTree cannot store (device nodes, fifos, sockets), skipped:
   * pairs of strings, the shipped path ("/dev/null") and its kind ("fifo"). */
  GPtrArray *skipped;
} DebInfo;

void deb_info_free (DebInfo *info);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DebInfo, deb_info_free)

/* Read the .deb at PATH into MTREE (which must be empty), writing content
 * objects into REPO, which must be in a transaction.  Nothing is checked out
 * on disk.  Every directory gets its metadata (from its tar entry, else
 * 0755 root:root), the root included. */
DebInfo *deb_unpack_to_mtree (OstreeRepo *repo, const char *path, const DebUnpackOptions *opts,
                              OstreeMutableTree *mtree, GCancellable *cancellable,
                              GError **error);

/* The commit metadata (a{sv}, floating) recording what was unpacked. */
GVariant *deb_commit_metadata (const DebInfo *info);

/* Is COMMIT exactly what unpacking the .deb with this SHA256 and these
 * options now would make (same rules, same merged-/usr choice, dated
 * TIMESTAMP)?  Then a caller can keep it without reading the .deb. */
gboolean deb_commit_is_unpack_of (OstreeRepo *repo, const char *commit, const char *sha256,
                                  gboolean merged_usr, guint64 timestamp);

/* The ref a package's tree gets: deb/NAME/VERSION/ARCH/SHA256, each of
 * NAME, VERSION and ARCH escaped so that any Debian version is a valid ref
 * component: every byte outside [A-Za-z0-9.-] becomes "_" and two lowercase
 * hex digits ("1:2.3+b1~rc" -> "1_3a2.3_2bb1_7erc").  Content-keyed: the
 * same .deb gives the same ref, and two builds of one version from two
 * archives get two refs. */
char *deb_ref_name (const char *name, const char *version, const char *arch,
                    const char *sha256);

/* "NAME" or "NAME:ARCH" (Multi-Arch: same): how dpkg names the package's
 * files in var/lib/dpkg/info. */
char *deb_info_basename (const char *name, const char *arch, const char *multi_arch);

G_END_DECLS
