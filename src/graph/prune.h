/* prune.h — keeping a long-lived repository to what its images need: the
 * refs a build wrote that none of the given images uses, and deleting
 * them, then every object no ref reaches any more (libostree's prune). */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

/* The refs of REPO that a build writes and that none of the images SPECS
 * (ImageSpec*, imagespec.h) needs, sorted.  A build writes package trees,
 * deb/NAME/VERSION/ARCH/SHA256 (deb.h); an image's stage refs
 * (stage1/IMAGE..., imagespec.h); and the image ref IMAGE itself, known as
 * one because a stage ref names it.  An image needs the package trees of
 * its lockfile, its stage refs and its ref.  Any other ref (the user's,
 * another tool's, a remote's) is never listed.  Every lockfile is read
 * before anything else: one that cannot be is the error. */
GPtrArray *prune_plan (OstreeRepo *repo, GPtrArray *specs, GError **error);

/* The derived refs (derived/..., graph/treerules.h) a project's Ninja file
 * GRAPH writes: its targets ("ninja -f GRAPH -t targets all", run in the
 * current directory, as the build is) that are ref files
 * .../refs/heads/derived/NAME. */
GHashTable *prune_graph_refs (const char *graph, GError **error);

/* The derived refs of REPO that are not in NAMED (prune_graph_refs), added
 * to PLAN (from prune_plan) and sorted with it. */
gboolean prune_plan_derived (OstreeRepo *repo, GHashTable *named, GPtrArray *plan,
                             GError **error);

typedef struct {
  gint objects_total;     /* objects in the repository before */
  gint objects_pruned;    /* objects deleted */
  guint64 bytes_freed;
} PruneStats;

/* Delete REFS (one transaction), the directories of refs/heads they leave
 * empty (an image named like such a directory could not be written), then
 * every object no ref of REPO reaches. */
gboolean prune_delete (OstreeRepo *repo, GPtrArray *refs, PruneStats *stats,
                       GCancellable *cancellable, GError **error);

/* The same, each ref deleted at once, outside any transaction of this
 * program: what a build does when the machine stopped while the trees
 * REFS name were not all on disk (buildsync.c), while its transactions
 * refuse to begin (barestore/unsynced.h). */
gboolean prune_delete_untrusted (OstreeRepo *repo, GPtrArray *refs, PruneStats *stats,
                                 GCancellable *cancellable, GError **error);

G_END_DECLS
