/* cachepull.h — commits pulled from a build cache: an OSTree archive
 * repository that another machine's build published (see publish.h),
 * served over HTTP (or file://).
 *
 * The pull is libostree's own: every object is checked against its
 * checksum as it arrives and one that does not match is never stored, and
 * with a key file the commit must carry a GPG signature by that key.  The
 * cache is named to libostree as a remote of the repository
 * ("apt2ostree-cache-" and a hash of the URL and the key file's path),
 * added the first time it is used. */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

typedef struct {
  const char *url;       /* the archive repository's URL */
  const char *key_path;  /* an armored or binary GPG public key file: commits
                          * must be signed by it; NULL: no signature check */
} CachePullSource;

/* Pull REF from CACHE into REPO and return its commit's checksum.  REPO's
 * own refs are not touched: the caller sets the ref it wants.  Any failure
 * (the cache lacks the ref, does not answer, sent a damaged object, a
 * missing or wrong signature) is an error, and nothing unverified is
 * kept. */
char *cachepull_pull (OstreeRepo *repo, const CachePullSource *cache, const char *ref,
                      GCancellable *cancellable, GError **error);

G_END_DECLS
