/* upper.h — fold an overlayfs upper directory into an OSTree tree.
 *
 * The result is the lower tree plus what the upper directory holds: new and
 * changed files and symlinks, whiteouts (character device 0/0) as deletions,
 * opaque directories as replaced directories, directories renamed with
 * redirect_dir=on (their lower contents taken from where they were), and
 * changed owners, modes and extended attributes.  Only the upper directory is read; the lower tree is
 * an OstreeMutableTree loaded lazily, so the cost follows what changed. */
#pragma once

#include <ostree.h>
#include <sys/stat.h>

#include "barestore/sink.h"

G_BEGIN_DECLS

/* What an entry of the upper directory says about itself, which the caller
 * may correct (the unprivileged mode: the real owner is the caller, the
 * owner the command gave it is in fakeroot's database).  PATH is the
 * entry's path in the tree ("/etc/passwd"); UPPER_PATH its host path. */
typedef gboolean (*UpperMetaFunc) (const char *path, const char *upper_path, struct stat *st,
                                   GVariant **xattrs, gpointer user_data, GError **error);

typedef struct {
  /* Overlay mounted with "userxattr": its own xattrs are user.overlay.*. */
  gboolean userxattr;
  /* Tree paths ("/dev") never taken from the upper directory: mount points. */
  const char *const *skip_paths;
  UpperMetaFunc meta_func;
  gpointer meta_data;
} UpperOptions;

/* Apply the upper directory UPPER_PATH onto ROOT (the lower tree) inside an
 * open transaction. */
gboolean upper_apply (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root,
                      const char *upper_path,
                      const UpperOptions *options, GCancellable *cancellable, GError **error);

/* The extended attributes of a host path as OSTree stores them (a(ayay),
 * sorted by name), without overlayfs' and OSTree's own. */
GVariant *upper_read_xattrs (const char *path, GError **error);

/* Give the file at PATH in ROOT another owner and mode, keeping its content
 * and xattrs (for ownership that changed without a copy-up). */
gboolean upper_set_file_owner (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root,
                               const char *path,
                               guint32 uid, guint32 gid, guint32 mode,
                               GCancellable *cancellable, GError **error);

G_END_DECLS
