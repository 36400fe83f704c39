/* staging.h — the writer of a transaction on an OstreeRepo (the store's
 * own transaction, txn.h, for bare and bare-user repositories), found
 * from the OstreeRepo, and mutable trees written through it (see
 * staging.c). */
#pragma once

#include <ostree.h>

#include "store/writer.h"

G_BEGIN_DECLS

/* The writer of REPO's open transaction, or NULL (then libostree writes);
 * it rides on the OstreeRepo, as libostree keeps its own transaction state
 * there.  staging_writer_set() sets W (not taken: the transaction owns
 * it; NULL clears it). */
ObjectWriter *staging_writer_get (OstreeRepo *repo);
void staging_writer_set (OstreeRepo *repo, ObjectWriter *w);

/* Write the dirtree objects of MTREE and of every directory under it that
 * has none yet (the same objects ostree_repo_write_mtree() writes), and set
 * their contents checksums, so that ostree_repo_write_mtree() then finds
 * nothing left to write. */
gboolean staging_write_mtree (ObjectWriter *w, OstreeMutableTree *mtree, GError **error);

G_END_DECLS
