/* cache.h — the download cache: files stored as CACHE_DIR/SHA256 (see
 * fetch_cached()), and the checks a .deb gets before anything is written.
 * GLib alone: unpack-deb's lean path (cmd/main.c) reads the cache too. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The sha256 of a file, lowercase hex. */
char *cache_sha256_file (const char *path, GError **error);

/* Does the cached file PATH hold SIZE bytes (when >= 0) with this SHA256? */
gboolean cache_is_valid (const char *path, const char *sha256, gint64 size);

/* TRUE when S is 64 lowercase or uppercase hex digits. */
gboolean cache_is_sha256 (const char *s);

/* TRUE for the URL schemes fetch_* understand (http, https, file). */
gboolean cache_is_url (const char *s);

/* A download's progress line, as apt shows one: "N% LABEL: DONE of TOTAL,
 * RATE/s, TIME left" (TOTAL unknown, -1: "LABEL: DONE, RATE/s"), SECONDS
 * after it began. */
char *cache_progress_line (const char *label, guint64 done, gint64 total, double seconds);

/* The file name URL ends with, for a progress line: its first 30
 * characters (the line then fits in 80 columns). */
char *cache_url_label (const char *url);

G_END_DECLS
