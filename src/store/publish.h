/* publish.h — refs of a build repository copied into an OSTree "archive"
 * repository that any static web server can serve, for other machines to
 * pull with plain "ostree pull" (a shared build cache, an update server).
 *
 * Nothing is visible in the destination before all of it is done: the
 * objects, new commits, signatures and static deltas are made in a staging
 * repository under the destination's tmp/ (its parent is the destination,
 * so what it has is not copied again), moved in, and only then are the
 * refs set; a failure before leaves the destination byte-identical.  The
 * summary is regenerated last, and commits and summary are optionally signed
 * with GPG (with a history, the new commits are what is signed).  Two publishers at once are serialised by a lock file in the
 * destination (.apt2ostree-publish.lock, flock()), so neither sees the
 * other's half-written summary. */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

typedef struct {
  const char *gpg_key_id;    /* sign commits and the summary with it, or NULL */
  const char *gpg_homedir;   /* where that key is, or NULL for gpg's default */
  gboolean history;          /* publish refs with a history (pubhistory.h) */
  gboolean (*as_built) (const char *ref);  /* with history: refs published as
                                            * built all the same, or NULL */
  const char *version;       /* with history: the version, or NULL: counted */
  const char *const *delta_from;  /* with history: more delta bases (revs in DEST) */
  gboolean no_deltas;        /* with history: write no static delta */
} PublishOptions;

/* Copy REFS (all of SRC's refs when NULL or empty) from SRC into the
 * archive repository at DEST (made when missing).  With OPTS->history,
 * each ref but those OPTS->as_built names gets a new commit over the built
 * tree whose parent is the one published before (none when that one was
 * made from the same built commit), and a static delta from the previous
 * commit and each OPTS->delta_from to it.  A ref DEST already holds with
 * a history is refused without OPTS->history.  Prints nothing; returns
 * the number of refs published in *OUT_COUNT, of which *OUT_UNCHANGED were
 * already there. */
gboolean publish_refs (OstreeRepo *src, const char *const *refs, const char *dest,
                       const PublishOptions *opts, guint *out_count, guint *out_unchanged,
                       GCancellable *cancellable, GError **error);

G_END_DECLS
