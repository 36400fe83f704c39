/* cachepull.h — commits pulled from a build cache: an OSTree archive
 * repository that another machine's build published (see publish.h),
 * served over HTTP (or file://).
 *
 * The fetch is this program's own for a bare or bare-user repository
 * (cachefetch.h): the objects over libcurl, a few connections at once,
 * each checked against its checksum before the store's own writer writes
 * it, in the store's own transaction, so a damaged object is never
 * stored and a fetch that fails leaves nothing visible.  With a key file
 * the commit must carry a GPG signature by that key, checked through
 * libostree's public verifier before the tree is fetched; the cache is
 * then named to libostree as a remote of the repository
 * ("apt2ostree-cache-" and a hash of the URL and the key file's path),
 * added the first time it is used, which holds the key.  libostree's
 * pull does what the own path does not serve: an archive-mode repository
 * (no own writer there) or a repository whose own transaction cannot be
 * had; it checks every object too. */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

typedef struct {
  const char *url;       /* the archive repository's URL */
  const char *key_path;  /* an armored or binary GPG public key file: commits
                          * must be signed by it; NULL: no signature check */
} CachePullSource;

/* Pull REF from CACHE into REPO and return its commit's checksum; each
 * of SET_REFS (NULL-terminated, or NULL) then points at it, written in the
 * same transaction as the objects when the fetch is this program's.  Any
 * failure (the cache lacks the ref, does not answer, sent a damaged
 * object, a missing or wrong signature) is an error, and nothing
 * unverified is kept. */
char *cachepull_pull (OstreeRepo *repo, const CachePullSource *cache, const char *ref,
                      const char *const *set_refs, GCancellable *cancellable, GError **error);

/* The fingerprint of the primary key in CACHE's key file, as libostree's
 * verifier reads it, or NULL (no key file, or none it can read). */
char *cachepull_key_fingerprint (OstreeRepo *repo, const CachePullSource *cache,
                                 GCancellable *cancellable);

G_END_DECLS
