/* tree.h — metadata-only operations on OSTree trees.
 *
 * Everything here works on dirtree and dirmeta objects and on the checksums
 * of file objects; no function reads file content, so a repository whose
 * content objects are missing can still be edited. */
#pragma once

#include <ostree.h>

#include "store/repo.h"

G_BEGIN_DECLS

/* A tree loaded lazily: subdirectories are read only when an edit reaches
 * into them, and untouched ones are written back by checksum. */
OstreeMutableTree *tree_load (OstreeRepo *repo, const RepoRev *rev);

typedef enum {
  TREE_COMBINE_NONE = 0,
  /* A later tree replaces a different file, or a file/directory clash, and
   * its directory metadata replaces the earlier one's. */
  TREE_COMBINE_LATER_WINS = 1 << 0,
  /* Two different files at one path: the earlier stays and the later is
   * reported in the conflicts instead of failing (stage 1, where a preinst's
   * diversion decides later where each of the two belongs). */
  TREE_COMBINE_SET_ASIDE = 1 << 1,
} TreeCombineFlags;

/* A file set aside by TREE_COMBINE_SET_ASIDE. */
typedef struct {
  char *path;        /* "/usr/bin/x" */
  guint earlier;     /* index in REVS of the first tree with a file there (it stays) */
  guint later;       /* index in REVS of the tree whose file was set aside */
  char *checksum;    /* the file set aside */
} TreeConflict;

void tree_conflict_free (TreeConflict *conflict);

/* Union of REVS (RepoRev*), later on top.  Directories merge; a directory
 * keeps the metadata of the first tree that has it, as dpkg keeps an
 * existing directory; the same file at one path is fine; a different file,
 * or a file against a directory, at one path is an error naming the path
 * and both trees, unless TREE_COMBINE_LATER_WINS (or, for two files,
 * TREE_COMBINE_SET_ASIDE, which adds a TreeConflict to OUT_CONFLICTS). */
OstreeMutableTree *tree_combine (OstreeRepo *repo, GPtrArray *revs, TreeCombineFlags flags,
                                 GPtrArray *out_conflicts, GCancellable *cancellable,
                                 GError **error);

/* Options for a new directory. */
typedef struct {
  guint32 uid, gid, mode;
  gboolean parents;        /* create missing parents (0755 root:root); an existing PATH is fine */
} TreeMkdirOptions;

/* (Its dirmeta objects go through SINK.) */
gboolean tree_mkdir (StoreSink *sink, OstreeMutableTree *root, const char *path,
                     const TreeMkdirOptions *options, GCancellable *cancellable, GError **error);

/* A symlink LINKPATH -> TARGET (root-owned); LINKPATH must not exist. */
gboolean tree_symlink (StoreSink *sink, OstreeMutableTree *root, const char *target,
                       const char *linkpath, GCancellable *cancellable, GError **error);

/* Move SRC to DST; DST must not exist, its parent must. */
gboolean tree_move (OstreeRepo *repo, OstreeMutableTree *root, const char *src, const char *dst,
                    GCancellable *cancellable, GError **error);

/* Remove PATH: a directory only with RECURSIVE; a missing PATH only with FORCE. */
gboolean tree_remove (OstreeMutableTree *root, const char *path, gboolean recursive,
                      gboolean force, GError **error);

/* Place the tree FROM at PATH; PATH must not exist, its parent must. */
gboolean tree_graft (OstreeMutableTree *root, const char *path, OstreeRepo *repo,
                     const RepoRev *from, GError **error);

/* What PATH is in ROOT: *out_file_checksum for a file or symlink, *out_dir
 * for a directory, both NULL (and no error) when it does not exist.  Either
 * out pointer may be NULL. */
gboolean tree_lookup (OstreeMutableTree *root, const char *path, char **out_file_checksum,
                      OstreeMutableTree **out_dir, GError **error);

/* The content of the file at PATH in ROOT in *out_bytes, or NULL (and no
 * error) when PATH does not exist. */
gboolean tree_read_file (OstreeRepo *repo, OstreeMutableTree *root, const char *path,
                         GBytes **out_bytes, GCancellable *cancellable, GError **error);

/* Put the file object CHECKSUM at PATH, replacing a file already there; the
 * parent must exist. */
gboolean tree_replace_file (OstreeMutableTree *root, const char *path, const char *checksum,
                            GError **error);

/* Find PATH in REV without loading anything but the dirtrees on the way.
 * On success exactly one of *out_file_checksum (file or symlink) or
 * *out_dir_contents + *out_dir_meta (directory) is set. */
gboolean tree_find (OstreeRepo *repo, const RepoRev *rev, const char *path,
                    char **out_file_checksum, char **out_dir_contents, char **out_dir_meta,
                    GError **error);

G_END_DECLS
