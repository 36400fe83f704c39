/* fetchclient.h — asking the fetch service (fetchservice.h) for a .deb.
 *
 * Every unpack edge of a build is a process of its own; were each to
 * download its .deb itself, each would look the mirror up and connect
 * again.  Instead the edges of one download cache share one service: a
 * process started by the first edge that needs a download, listening on a
 * socket in the cache directory, which keeps its connections (and its one
 * name lookup per host) for every edge, fetches the build's download list
 * ahead of the edges, and exits when idle.  GLib alone: the lean front
 * (cmd/main.c) asks it too.
 *
 * The build's download lists ("REF SHA256 SIZE URL" lines, one list per
 * Ninja file, written with it) are in the cache's FETCH_SERVICE_LISTS
 * directory; the service works through them ahead of the edges.
 *
 * The protocol, one line each way per message, fields split by tabs:
 *   client: "get SHA256 SIZE URL REPO" (REPO: the repository, absolute,
 *                                       whose refs tell which of the lists'
 *                                       packages are built already)
 *   service: "note TEXT"              (any number, printed on stderr)
 *   service: "ok" | "error KIND MESSAGE" (KIND: notfound, mismatch, failed) */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The service's files in the cache directory. */
#define FETCH_SERVICE_LOCK ".fetch-service.lock"
#define FETCH_SERVICE_LOG ".fetch-service.log"
#define FETCH_SERVICE_LISTS ".downloads"

/* The name of the socket in the cache directory of the service for this
 * process's environment: ".fetch-service-HASH.sock", HASH over the
 * variables that change how downloads are made (proxies, timeouts, the
 * apt configuration's root and $APT_CONFIG) and over the apt
 * configuration's files as they are (their size, mtime and inode: a proxy
 * or CA file set there), so a build never borrows a service that another
 * environment or configuration started. */
char *fetch_service_socket_name (void);

/* Where the download list of the Ninja file NINJA_PATH goes in CACHE_DIR. */
char *fetch_client_list_path (const char *cache_dir, const char *ninja_path);

/* FETCH_CLIENT_ERROR_UNAVAILABLE: no service could be reached or started
 * (or $APT2OSTREE_FETCH_SERVICE is 0); the caller downloads itself. */
#define FETCH_CLIENT_ERROR (fetch_client_error_quark ())
GQuark fetch_client_error_quark (void);
#define FETCH_CLIENT_ERROR_UNAVAILABLE 1

/* Does URL go through the service (http:// and https://)? */
gboolean fetch_client_serves (const char *url);

/* The .deb URL names, with SHA256 and SIZE, in CACHE_DIR (as
 * fetch_cached() gives it: CACHE_DIR/SHA256, checked here), fetched by the
 * cache directory's service, started when there is none.  REPO is the
 * repository whose refs say which packages of the download lists need no
 * download.
 * Errors: UTIL_ERROR_NOT_FOUND and UTIL_ERROR_MISMATCH as fetch_cached's,
 * FETCH_CLIENT_ERROR_UNAVAILABLE, or any other failure. */
char *fetch_client_get (const char *cache_dir, const char *url, const char *sha256, gint64 size,
                        const char *repo, GError **error);

/* The address of the service's socket in DIR_FD's directory DIR, in a
 * sockaddr_un (through /proc/self/fd when the path is too long): the
 * length, or 0.  Shared with the service. */
gsize fetch_service_address (const char *dir, int dir_fd, void *sockaddr_un_out);

G_END_DECLS
