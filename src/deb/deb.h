/* deb.h — one .deb read with libarchive straight into an OSTree tree: the
 * files of data.tar, and the package's dpkg metadata (info files and its
 * status stanza) so that a union of such trees is a dpkg database with every
 * package "unpacked". */
#pragma once

#include <glib.h>

#include "deb/debmeta.h"
#include "barestore/linkgroups.h"
#include "barestore/objects.h"
#include "barestore/sink.h"

G_BEGIN_DECLS


/* Commit metadata keys written by deb_commit_metadata(). */
#define DEB_META_PACKAGE "apt2ostree.package"
#define DEB_META_VERSION "apt2ostree.version"
#define DEB_META_ARCHITECTURE "apt2ostree.architecture"
#define DEB_META_MULTI_ARCH "apt2ostree.multi-arch"
#define DEB_META_SHA256 "apt2ostree.deb-sha256"
#define DEB_META_SIZE "apt2ostree.deb-size"
#define DEB_META_MERGED_USR "apt2ostree.merged-usr"
#define DEB_META_SKIPPED "apt2ostree.skipped"
/* The paths data.tar links together (barestore/linkgroups.h), only in the
 * commit of a package that has hard links. */
#define DEB_META_HARDLINKS LINKGROUPS_META_KEY
/* The version of the rules deb_unpack() follows (a uint32): it
 * changes when the same .deb would give another tree (2: control.tar
 * members whose name has a dot are left out, as dpkg leaves them out; 3: an
 * empty md5sums for a package that ships none and has no regular file, as
 * dpkg --unpack writes it, and the hard-link groups recorded). */
#define DEB_META_FORMAT "apt2ostree.deb-format"
#define DEB_FORMAT_VERSION 3

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
  /* The final paths data.tar links together (LINKGROUPS_TYPE), or NULL. */
  GVariant *hardlinks;
} DebInfo;

void deb_info_free (DebInfo *info);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DebInfo, deb_info_free)

/* Read the .deb at PATH into a tree and commit it (parentless, dated
 * TIMESTAMP, with deb_commit_metadata() and the subject "NAME VERSION
 * ARCH"): every object through SINK.  Nothing is checked out on disk.
 * Every directory gets its metadata (from its tar entry, else 0755
 * root:root), the root included.  Sets *OUT_COMMIT. */
DebInfo *deb_unpack (StoreSink *sink, const char *path, const DebUnpackOptions *opts,
                     guint64 timestamp, char **out_commit, GError **error);

/* The commit metadata (a{sv}, floating) recording what was unpacked. */
GVariant *deb_commit_metadata (const DebInfo *info);

/* Is the commit object COMMIT exactly what unpacking the .deb with this
 * SHA256 and these options now would make (same rules, same merged-/usr
 * choice, dated TIMESTAMP)?  Then a caller can keep it without reading the
 * .deb. */
gboolean deb_commit_is_unpack_of (GVariant *commit, const char *sha256, gboolean merged_usr,
                                  guint64 timestamp);

/* The ref a package's tree gets: deb/NAME/VERSION/ARCH/SHA256, each of
 * NAME, VERSION and ARCH escaped so that any Debian version is a valid ref
 * component: every byte outside [A-Za-z0-9.-] becomes "_" and two lowercase
 * hex digits ("1:2.3+b1~rc" -> "1_3a2.3_2bb1_7erc").  Content-keyed: the
 * same .deb gives the same ref, and two builds of one version from two
 * archives get two refs. */
char *deb_ref_name (const char *name, const char *version, const char *arch,
                    const char *sha256);


G_END_DECLS
