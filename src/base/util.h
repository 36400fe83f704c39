/* util.h — small helpers shared by every module: paths, time, errors. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The commit time every command uses: $SOURCE_DATE_EPOCH, or 0 when unset,
 * so that the same inputs give the same commit checksum on every machine. */
gboolean util_source_date_epoch (guint64 *out_epoch, GError **error);

/* Split a path inside a tree ("usr/bin/sh", "/usr/bin/sh", "./usr//bin/")
 * into its components.  "." and empty components are dropped; ".." is an
 * error, so no path can climb out of the tree.  The root ("/" or "") gives an
 * empty array. */
GPtrArray *util_split_tree_path (const char *path, GError **error);

/* "/a/b/c" from components, for error messages. */
char *util_join_tree_path (GPtrArray *components, guint n);

/* Why PATH, a member name from an archive (a .deb, a tarball) or a hard
 * link's target, cannot name a file in a tree, or NULL when it can: a
 * newline (dpkg refuses it: a .list file holds one path a line), bytes that
 * are not UTF-8 (OSTree keeps names as strings), a component longer than
 * NAME_MAX (255 bytes) or a path longer than PATH_MAX - 1 (4095 bytes,
 * leading "./" left out, one "/" counted), which no file system holds and
 * dpkg cannot reach, or a ".." component.  A short phrase for an error
 * ("contains a newline, which dpkg refuses"). */
const char *util_tree_path_problem (const char *path);

/* PATH as an error message can show it on one line: control characters,
 * backslashes and bytes that are not UTF-8 escaped ("a\n/etc" for a
 * newline), cut after 200 bytes ("..."). */
char *util_shown_path (const char *path);

/* The domain of the errors made here (code 0): messages for the user. */
#define UTIL_ERROR (util_error_quark ())
/* UTIL_ERROR codes: 0 for any failure; UTIL_ERROR_MISMATCH when fetched
 * bytes are not the ones a checksum or size promised (never retried
 * elsewhere: the source serves something else). */
#define UTIL_ERROR_MISMATCH 1
/* UTIL_ERROR code: the server or directory has no such file (HTTP 404). */
#define UTIL_ERROR_NOT_FOUND 2
GQuark util_error_quark (void);

/* Prefix an error with printf-style context, keeping it on one line. */
gboolean util_fail (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

/* The same with the error's DOMAIN and CODE, for a caller that must tell
 * one kind of failure from another; always FALSE. */
gboolean util_fail_code (GError **error, GQuark domain, int code, const char *format, ...)
  G_GNUC_PRINTF (4, 5);

/* strcmp() of two char* held in a GPtrArray, for g_ptr_array_sort(). */
gint util_compare_strings (gconstpointer a, gconstpointer b);

/* The keys of TABLE (strings, borrowed), sorted by strcmp(). */
GPtrArray *util_sorted_keys (GHashTable *table);

/* Set on FD each extended attribute of XATTRS (an OSTree a(ayay)); PATH
 * names the file in errors, and errno is left as the failing call set it. */
gboolean util_fd_set_xattrs (int fd, GVariant *xattrs, const char *path, GError **error);

/* The same on the file LINK names, itself when it is a symlink. */
gboolean util_path_set_xattrs (const char *link, GVariant *xattrs, const char *path,
                               GError **error);

/* Link FD, an O_TMPFILE, into DFD as PATH: by the descriptor itself
 * (AT_EMPTY_PATH, which needs CAP_DAC_READ_SEARCH before Linux 6.10) while
 * *BY_FD is TRUE, else through /proc/self/fd; *BY_FD turns FALSE when only
 * the second way works.  0, or -1 with errno set (EEXIST: PATH is taken). */
int util_link_tmpfile (int fd, int dfd, const char *path, gboolean *by_fd);

/* The whole file PATH under DFD (not following a final symlink), at most
 * MAX bytes; NULL with ERROR set (naming PATH) when it cannot be read, is
 * not a regular file or is larger. */
GBytes *util_read_at (int dfd, const char *path, gsize max, GError **error);

/* The same for a file the user named, a final symlink followed. */
GBytes *util_read_file (const char *path, gsize max, GError **error);

/* Close *FD when it is open (>= 0).  A variable declared util_autofd is
 * closed when it goes out of scope. */
void util_fd_close (int *fd);
#define util_autofd __attribute__ ((cleanup (util_fd_close)))

/* A UUID in its usual text form (8-4-4-4-12 hex digits) made from the
 * first 32 hex digits of HEX (a checksum), with the given VERSION digit and
 * the RFC 4122 variant bits set: the same checksum, the same UUID. */
char *util_uuid_from_hex (const char *hex, char version);

/* Whether the environment variable NAME is set to something other than
 * "" or "0". */
gboolean util_env_flag (const char *name);

G_END_DECLS
