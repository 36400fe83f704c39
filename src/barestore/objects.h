/* objects.h — OSTree's object formats, built and checksummed with GLib
 * alone: the file header of a content object, dirmeta, dirtree and commit
 * variants.  The bytes are libostree's (the unit tests compare checksums
 * with libostree's own); nothing here needs libostree, so the lean
 * unpack-deb path (cmd/main.c) can write a repository without loading it. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The object types, numbered as OstreeObjectType numbers them. */
typedef enum {
  OBJECTS_FILE = 1,
  OBJECTS_DIR_TREE = 2,
  OBJECTS_DIR_META = 3,
  OBJECTS_COMMIT = 4,
} ObjectsType;

/* "file", "dirtree", "dirmeta", "commit": the object's file name suffix. */
const char *objects_type_name (ObjectsType type);

/* Where objects live: an object's path under objects/ is "XX/REST.SUFFIX"
 * (XX the first two hex digits of its checksum, REST the others; SUFFIX
 * the type's name, or "filez" for content in an archive repository).
 * This module alone spells that layout out. */
#define OBJECTS_PATH_MAX 80

/* "XX/REST.SUFFIX" for CHECKSUM (64 hex digits) into PATH. */
void objects_path (char path[OBJECTS_PATH_MAX], const char *checksum, const char *suffix);

/* The same with the suffix of TYPE. */
void objects_type_path (char path[OBJECTS_PATH_MAX], const char *checksum, ObjectsType type);

/* "objects/XX/REST.SUFFIX", the path under the repository. */
#define OBJECTS_REPO_PATH_MAX (OBJECTS_PATH_MAX + 8)
void objects_repo_path (char path[OBJECTS_REPO_PATH_MAX], const char *checksum,
                        const char *suffix);

/* Make the directory XX of the object path PATH (from objects_path())
 * under OBJECTS_DFD (the objects/ directory); one there already is fine.
 * FALSE with errno set otherwise. */
gboolean objects_make_dir (int objects_dfd, const char *path);

/* The header OSTree puts before a content object's data and hashes with
 * it.  MODE is the whole st_mode (S_IFREG | perms, or S_IFLNK | 0777 with
 * TARGET); XATTRS an a(ayay), or NULL for none. */
GBytes *objects_file_header (guint32 uid, guint32 gid, guint32 mode, const char *target,
                             GVariant *xattrs, GError **error);

/* A cache of regular-file headers (of files without xattrs, by owner and
 * mode), to free with g_hash_table_unref(). */
GHashTable *objects_headers_new (void);

/* The header of a regular file (MODE: permission bits; S_IFREG is added),
 * from HEADERS when it has it (HEADERS may be NULL). */
GBytes *objects_regular_header (GHashTable *headers, guint32 uid, guint32 gid, guint32 mode,
                                GVariant *xattrs, GError **error);

/* The content checksum (64 hex digits) of HEADER followed by DATA. */
char *objects_content_checksum (GBytes *header, const guint8 *data, gsize size);

/* 64 hex digits as the 32-byte "ay" OSTree stores (floating), and back. */
GVariant *objects_checksum_to_bytes_v (const char *checksum);
char *objects_checksum_from_bytes_v (GVariant *bytes);

/* A dirmeta object (floating): owner, S_IFDIR | perms of MODE, XATTRS
 * (NULL: none). */
GVariant *objects_dirmeta_new (guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs);

/* A dirtree object (floating): FILES maps names to content checksums,
 * DIRS names to a pair of strings (contents checksum, metadata checksum),
 * both sorted by name here. */
GVariant *objects_dirtree_new (GHashTable *files, GHashTable *dir_contents,
                               GHashTable *dir_meta);

/* A parentless commit object (floating) with METADATA (an a{sv}, or NULL),
 * SUBJECT, TIMESTAMP (seconds) and the root's dirtree and dirmeta. */
GVariant *objects_commit_new (GVariant *metadata, const char *subject, guint64 timestamp,
                              const char *root_contents, const char *root_meta);

/* The variant type of a commit object, to load one. */
#define OBJECTS_COMMIT_TYPE "(a{sv}aya(say)sstayay)"

G_END_DECLS
