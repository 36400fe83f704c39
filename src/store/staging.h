/* staging.h — the object writer for a transaction on an OstreeRepo, and
 * mutable trees written through it (see staging.c). */
#pragma once

#include <ostree.h>

#include "store/writer.h"

G_BEGIN_DECLS

/* The writer (writer.c) for REPO's open transaction, its objects waiting
 * in STAGE_DFD (the transaction's own staging directory, stagedir.h) and
 * its commits marked partial in MARKS, or NULL when the repository asks
 * for something it does not do (not bare or bare-user, fsync per object,
 * fs-verity) or the file system has no O_TMPFILE: then use libostree. */
ObjectWriter *staging_writer_new (OstreeRepo *repo, int stage_dfd, PartialMarks *marks);

/* The writer of REPO's open transaction, or NULL (then libostree writes);
 * it rides on the OstreeRepo, as libostree keeps its own transaction state
 * there.  staging_writer_set() hands W over (NULL drops it). */
ObjectWriter *staging_writer_get (OstreeRepo *repo);
void staging_writer_set (OstreeRepo *repo, ObjectWriter *w);

/* Does the writer apply to REPO (staging_writer_new() may still say no)? */
gboolean staging_writer_applies (OstreeRepo *repo);

/* Write the dirtree objects of MTREE and of every directory under it that
 * has none yet (the same objects ostree_repo_write_mtree() writes), and set
 * their contents checksums, so that ostree_repo_write_mtree() then finds
 * nothing left to write. */
gboolean staging_write_mtree (ObjectWriter *w, OstreeMutableTree *mtree, GError **error);

G_END_DECLS
