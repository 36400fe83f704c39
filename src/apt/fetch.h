/* fetch.h — downloads with libcurl (http://, https://, file://): retried
 * with back-off on transient failures, checked for size and sha256, written
 * through a temporary file so a partial or wrong download never appears
 * under its final name. */
#pragma once

#include <gio/gio.h>

#include "apt/cache.h"

G_BEGIN_DECLS

typedef struct {
  const char *expected_sha256;  /* lowercase hex, or NULL: not checked */
  gint64 expected_size;         /* bytes, or -1: not checked */
  gboolean progress;            /* a progress line on stderr, when it is a terminal */
} FetchOptions;

/* Download URL into DEST through a temporary file in DEST's directory,
 * renamed into place only after the size (expected_size >= 0) and SHA256
 * (expected_sha256 != NULL) match.  Transient failures (connection reset,
 * 5xx, timeout, short transfer) are retried with back-off a few times, then
 * reported with the URL and the HTTP status.  A 404 or 410 (or a missing
 * file:// path) fails with UTIL_ERROR_NOT_FOUND at once so callers can fall
 * back (InRelease -> Release).  OPTS may be NULL. */
gboolean fetch_to_file (const char *url, const char *dest, const FetchOptions *opts,
                        GCancellable *cancellable, GError **error);

/* A small file into memory (same retries, same NOT_FOUND rule). */
GBytes *fetch_bytes (const char *url, GCancellable *cancellable, GError **error);

/* The download cache: files are stored as CACHE_DIR/<sha256>.  When that file
 * exists and matches SIZE (when >= 0) and SHA256 it is returned without any
 * network access; otherwise URL is downloaded, verified and renamed into
 * place.  A file that does not match is never left under that name.  With
 * SHA256 NULL the download is stored under the sha256 it turns out to have.
 * Returns the path in the cache. */
char *fetch_cached (const char *url, const char *cache_dir, const char *sha256, gint64 size,
                    GCancellable *cancellable, GError **error);

G_END_DECLS
