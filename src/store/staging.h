/* staging.h — the staging directory of the open transaction, emptied into
 * objects/ without being deleted (see staging.c). */
#pragma once

#include <ostree.h>

#include "store/writer.h"

G_BEGIN_DECLS

/* A new file descriptor for the staging directory of REPO's open
 * transaction, or -1 when it cannot be told (then commit the usual way). */
int staging_open (OstreeRepo *repo);

/* Rename the staged objects into objects/XX/: the commits with COMMITS,
 * the others without (call it for those first), leaving the XX directories
 * in place (empty) for the next transaction.  *OUT_KNOWN is FALSE when the
 * staging directory holds anything but XX directories and the writer's own
 * files (what is left is for ostree_repo_commit_transaction()). */
gboolean staging_move_objects (OstreeRepo *repo, int stage_dfd, gboolean commits,
                               gboolean *out_known, GError **error);

/* The writer (writer.c) for REPO's open transaction, its objects waiting
 * in STAGE_DFD and its commits marked partial in MARKS, or NULL when the repository asks for something it does
 * not do (not bare or bare-user, fsync per object, fs-verity) or the file
 * system has no O_TMPFILE: then use libostree. */
ObjectWriter *staging_writer_new (OstreeRepo *repo, int stage_dfd, PartialMarks *marks);

/* Write the dirtree objects of MTREE and of every directory under it that
 * has none yet (the same objects ostree_repo_write_mtree() writes), and set
 * their contents checksums, so that ostree_repo_write_mtree() then finds
 * nothing left to write. */
gboolean staging_write_mtree (ObjectWriter *w, OstreeMutableTree *mtree, GError **error);

G_END_DECLS
