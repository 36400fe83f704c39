/* buildcache.h — a build's trees from a shared cache (--cache-url): the
 * package trees by their refs, which name the .deb's sha256, and the
 * stage-1 and stage-2 results by a key of their inputs, under
 * cache/stage1/KEY and cache/configured/KEY (the image under
 * cache/image/KEY).  Every build writes those keyed refs beside its own,
 * with or without --cache-url, so that publishing its repository
 * (publish.h) fills the cache for the next machine. */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

typedef struct {
  char *url;       /* --cache-url, or NULL: no cache */
  char *key_path;  /* --cache-key: the GPG public key file the cache's
                    * commits must be signed with, absolute, or NULL */
} BuildCache;

void buildcache_clear (BuildCache *cache);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (BuildCache, buildcache_clear)

/* The GOptionEntry lines of --cache-url and --cache-key, filling CACHE. */
#define BUILDCACHE_OPTION_ENTRIES(cache)                                                    \
  { "cache-url", 0, 0, G_OPTION_ARG_STRING, &(cache)->url,                                  \
    "Pull the result from this OSTree archive repository (see publish) when it has it",    \
    "URL" },                                                                                \
  { "cache-key", 0, 0, G_OPTION_ARG_FILENAME, &(cache)->key_path,                           \
    "With --cache-url: accept only commits signed with the GPG public key in FILE",         \
    "FILE" }

/* Check the options as given: --cache-key needs --cache-url and a
 * readable file (made absolute). */
gboolean buildcache_check (BuildCache *cache, GError **error);

/* cache/KIND/KEY, KEY the SHA-256 of KIND, the program's version and
 * INPUTS (NULL-terminated, in order). */
char *buildcache_ref (const char *kind, const char *const *inputs);

/* The cache's name for stage 1 of the package trees REVS (RepoRev*, in
 * order) for ARCH with the path FILTERS: their commits say everything else
 * stage 1 reads. */
char *buildcache_stage1_ref (const char *arch, const char *const *filters, GPtrArray *revs);

/* The cache's name for stage 2 of the stage-1 commit STAGE1_COMMIT with
 * HOOKS: those, and SOURCE_DATE_EPOCH (a bad value is an error). */
char *buildcache_configured_ref (const char *stage1_commit, const char *const *hooks,
                                 GError **error);

/* Point each of REFS (NULL-terminated) at COMMIT, in one transaction. */
gboolean buildcache_set_refs (OstreeRepo *repo, const char *const *refs, const char *commit,
                              GCancellable *cancellable, GError **error);

/* BUILDCACHE_ERROR_REFUSED_BEFORE: the cache's commits were refused for
 * their signature before (within $APT2OSTREE_CACHE_TIMEOUT s): it is not
 * asked, the tree is counted among the refused ones. */
#define BUILDCACHE_ERROR (buildcache_error_quark ())
GQuark buildcache_error_quark (void);
#define BUILDCACHE_ERROR_REFUSED_BEFORE 1

/* A build starts afresh: the memory of CACHE's refusal goes. */
void buildcache_forget_refused (OstreeRepo *repo, const BuildCache *cache);

/* One line on standard error when CACHE's commits were refused for their
 * signature: how many trees, the key file and its fingerprint, why, what
 * to do. */
void buildcache_say_refused (OstreeRepo *repo, const BuildCache *cache, GCancellable *cancellable);

/* The refs of the trees refused so, one a line on standard error; FALSE
 * when none were. */
gboolean buildcache_list_refused (OstreeRepo *repo, const BuildCache *cache);

/* A step's result from CACHE, as buildcache_fetch_result() takes it, but
 * saying nothing: on a miss NULL and ERROR says why (CACHEFETCH_ERROR_NO_REF:
 * the cache has no CACHE_REF). */
char *buildcache_try_fetch (OstreeRepo *repo, const BuildCache *cache, const char *cache_ref,
                            const char *out_ref, GCancellable *cancellable, GError **error);

/* A step's result from CACHE: on a hit OUT_REF and CACHE_REF point at the
 * pulled commit (written in the pull's own transaction), which is
 * returned; on a miss (the cache lacks it, does not answer, sent something
 * that failed verification, or the refs could not be written) NULL, and one
 * line on standard error names WHAT, says the tree is built instead, and
 * why.  Commits refused for their signature are said once for the whole
 * cache: the other steps then build without asking it, saying nothing. */
char *buildcache_fetch_result (OstreeRepo *repo, const BuildCache *cache, const char *cache_ref,
                               const char *out_ref, const char *what, GCancellable *cancellable);

/* After the step ran: CACHE_REF points at what OUT_REF holds, so that
 * publishing the repository offers it to the next machine. */
gboolean buildcache_record_result (OstreeRepo *repo, const char *out_ref, const char *cache_ref,
                                   GCancellable *cancellable, GError **error);

/* Is REF one a build writes for itself and a cache consumer pulls as it
 * was built: a package tree (deb/...), a cache entry (cache/...), a stage
 * of an image (stage1/IMAGE and the like)?  Not the image refs. */
gboolean buildcache_is_build_ref (const char *ref);

G_END_DECLS
