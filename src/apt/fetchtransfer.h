/* fetchtransfer.h — one download as fetch.c makes it (a temporary file,
 * hashed on the way, checked, renamed into the cache), in steps a libcurl
 * multi handle can drive: the fetch service (fetchservice.c) runs many at
 * once over the connections it keeps; fetch.c's own functions run one with
 * curl_easy_perform.  The same retries, checks and errors either way. */
#pragma once

#include <curl/curl.h>

#include "apt/fetch.h"

G_BEGIN_DECLS

typedef struct FetchTransfer FetchTransfer;

typedef enum {
  FETCH_ATTEMPT_OK,
  FETCH_ATTEMPT_TRANSIENT,   /* worth another try, after the delay given */
  FETCH_ATTEMPT_FAILED,      /* error set, no more tries */
} FetchAttempt;

/* An easy handle that shares this process's name lookups and connections
 * with every other one made here (so a process looks a host up once). */
typedef CURL FetchCurl;
FetchCurl *fetch_curl_new (GError **error);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FetchCurl, curl_easy_cleanup)

/* A download of URL into a new temporary file in DIR (OPTS: the size and
 * sha256 it must have, may be NULL). */
FetchTransfer *fetch_transfer_new (const char *url, const char *dir, const FetchOptions *opts,
                                   GCancellable *cancellable, GError **error);
void fetch_transfer_free (FetchTransfer *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FetchTransfer, fetch_transfer_free)

const char *fetch_transfer_url (FetchTransfer *t);

/* Set CURL up for the next attempt of T (the file emptied, the hash reset). */
gboolean fetch_transfer_prepare (FetchTransfer *t, CURL *curl, GError **error);

/* The attempt on CURL ended with CODE: FETCH_ATTEMPT_TRANSIENT sets
 * *OUT_RETRY_US to the back-off before the next one; after the last
 * attempt a transient failure is FETCH_ATTEMPT_FAILED, "gave up after N
 * attempts". */
FetchAttempt fetch_transfer_done (FetchTransfer *t, CURL *curl, CURLcode code,
                                  gulong *out_retry_us, GError **error);

/* Check the finished download's size and sha256 and rename it into
 * CACHE_DIR under its sha256; the path.  On failure nothing is left. */
char *fetch_transfer_commit (FetchTransfer *t, const char *cache_dir, GError **error);

/* A mismatch in ERROR about a local file:// .deb said the way fetch_cached
 * says it (which file changed since it was locked). */
void fetch_transfer_explain (FetchTransfer *t, GError **error);

/* Remove the temporary files in DIR of downloads that were killed (left
 * untouched for an hour). */
void fetch_sweep_temporaries (const char *dir);

G_END_DECLS
