/* fsimage.h — a tree as a file system image, made by the tools Debian users
 * have: squashfs with mksquashfs (squashfs-tools), ext4 with "mkfs.ext4 -d"
 * (e2fsprogs).
 *
 * The tree is checked out (as root, so owners, modes and extended
 * attributes such as file capabilities are real; every file a copy, so no
 * hardlinks appear that the tree does not have) into a private directory
 * beside the output, every timestamp set to the commit's, and the tool
 * run over it.  Everything the tools would take from the clock or from
 * chance is fixed: squashfs's times (-mkfs-time, -all-time); ext4's UUID and
 * directory hash seed (derived from the commit checksum) and its clock
 * (E2FSPROGS_FAKE_TIME).  The same ref gives the same bytes.  The image is
 * written under a temporary name and renamed into place. */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

typedef enum {
  FSIMAGE_SQUASHFS,
  FSIMAGE_EXT4,
} FsimageKind;

typedef struct {
  guint64 size;             /* ext4: bytes, or 0 for the tree's size with room to spare */
  const char *compression;  /* squashfs: one of fsimage_compressions(); NULL: gzip */
} FsimageOptions;

/* The squashfs compressions (mksquashfs -comp), NULL-terminated. */
const char *const *fsimage_compressions (void);

gboolean fsimage_write_commit (OstreeRepo *repo, const char *commit, FsimageKind kind,
                               const char *dest, const FsimageOptions *opts,
                               GCancellable *cancellable, GError **error);

/* "512M", "2G", "1048576" (bytes; K, M, G, T are powers of 1024). */
gboolean fsimage_parse_size (const char *text, guint64 *out, GError **error);

G_END_DECLS
