/* keptcheckout.h — a hardlink checkout kept between runs, one per ref:
 * the checkout of the commit a ref's last run made, so that the next run
 * over that commit (build --incremental) need not check it out again, and
 * a run over another commit only brings it to that one (checkout_update()).
 *
 * REPOSITORY/apt2ostree-checkouts/REF (a "/" of REF as "%2F") holds tree/,
 * the checkout, and key: the commit it is a checkout of and its fingerprint
 * (checkout_fingerprint()) when it was kept.  A kept checkout is only used
 * when its tree still has that fingerprint; anything else is removed.  As root, of a bare
 * repository only (checkout_update()). */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

/* Move what is kept for REF to the new directory DEST (on the repository's
 * filesystem) and, when nothing changed in it since it was kept, give its
 * tree's path (DEST/tree) and the commit it is a checkout of; otherwise
 * *OUT_TREE is NULL and *OUT_WHY says why (NULL when nothing was kept for
 * REF).  Either way DEST, when it exists, is the caller's, to use or
 * remove. */
gboolean kept_checkout_take (OstreeRepo *repo, const char *ref, const char *dest,
                             char **out_tree, char **out_commit, char **out_why,
                             GError **error);

/* Keep DIR (DIR/tree: a checkout of COMMIT) as REF's, in place of what was
 * kept for REF (moved into DIR.old, the caller's to remove). */
gboolean kept_checkout_put (OstreeRepo *repo, const char *ref, const char *commit,
                            const char *dir, GError **error);

/* Remove the kept checkouts whose ref is gone or holds another commit
 * (they hold objects that prune would otherwise free); *OUT_REMOVED says
 * how many. */
gboolean kept_checkout_prune (OstreeRepo *repo, guint *out_removed, GCancellable *cancellable,
                              GError **error);

/* Remove every kept checkout (after the machine stopped while some were
 * not all on disk: graph/buildsync.c). */
gboolean kept_checkout_remove_all (OstreeRepo *repo, GError **error);

G_END_DECLS
