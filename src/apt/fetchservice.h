/* fetchservice.h — the fetch service of one download cache (see
 * fetchclient.h for why and for its protocol).
 *
 * One process, one libcurl multi handle: a name lookup per host and kept
 * connections (HTTP/2 where an https server offers it) for every download,
 * at most $APT2OSTREE_DOWNLOAD_CONNECTIONS at once (1-64, default 16).
 * Downloads are fetch.c's (FetchTransfer): the same retries, checks and
 * errors as a download made by the edge itself.  What an edge asks for goes
 * first; the build's download list ("prefetch") fills the connections left,
 * skipping what the cache holds and the packages whose tree the repository
 * has.  The service exits once idle (no client, no download) for
 * FETCH_SERVICE_IDLE_SECONDS, and forgets the download list when no client
 * has come for FETCH_SERVICE_PREFETCH_SECONDS (a build that was stopped). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define FETCH_SERVICE_IDLE_SECONDS 3
#define FETCH_SERVICE_PREFETCH_SECONDS 15

/* Serve CACHE_DIR until idle.  FALSE when it could not listen (another
 * service does: not an error then, *OUT_OTHER is set). */
gboolean fetch_service_run (const char *cache_dir, gboolean *out_other, GError **error);

G_END_DECLS
