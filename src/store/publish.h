/* publish.h — refs of a build repository copied into an OSTree "archive"
 * repository that any static web server can serve, for other machines to
 * pull with plain "ostree pull" (a shared build cache, an update server).
 *
 * Objects are written before refs (libostree's pull into the destination:
 * a ref is set only once its commit and everything it names are stored),
 * the summary is regenerated, and commits and summary are optionally signed
 * with GPG.  Two publishers at once are serialised by a lock file in the
 * destination (.apt2ostree-publish.lock, flock()), so neither sees the
 * other's half-written summary. */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

typedef struct {
  const char *gpg_key_id;    /* sign commits and the summary with it, or NULL */
  const char *gpg_homedir;   /* where that key is, or NULL for gpg's default */
} PublishOptions;

/* Copy REFS (all of SRC's refs when NULL or empty) from SRC into the
 * archive repository at DEST (made when missing).  Prints nothing; returns
 * the number of refs published in *OUT_COUNT. */
gboolean publish_refs (OstreeRepo *src, const char *const *refs, const char *dest,
                       const PublishOptions *opts, guint *out_count, GCancellable *cancellable,
                       GError **error);

G_END_DECLS
