/* debpolicy.h — what Debian allows in the control fields that reach paths,
 * refs, Ninja files and command lines: package names, versions and
 * architectures.  Everything from outside (lockfiles, Packages indices,
 * .debs) is checked against these before it is used.
 *
 * Each check returns NULL when the value is allowed, else a short phrase
 * saying why not ("contains a control character"), for the caller to put
 * into a one-line error that names the file and the package. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A package name as dpkg accepts it: an alphanumeric character first, then
 * alphanumerics and "+", "-", ".", "_" (policy 5.6.1, dpkg's parser). */
const char *debpolicy_name_problem (const char *name);

/* Debian's order of two versions (policy 5.6.12, as dpkg --compare-versions):
 * negative, 0 or positive as A sorts before, with or after B. */
int debpolicy_version_compare (const char *a, const char *b);

/* A version "[EPOCH:]UPSTREAM[-REVISION]" (policy 5.6.12): EPOCH digits,
 * UPSTREAM alphanumerics and ".+~-:" (":" only after an epoch, "-" only
 * before a revision), REVISION alphanumerics and ".+~". */
const char *debpolicy_version_problem (const char *version);

/* An architecture name: "all", or lower-case alphanumerics and "-",
 * starting with an alphanumeric ("amd64", "arm64", "hurd-i386"). */
const char *debpolicy_arch_problem (const char *arch);

/* A release's name, as "lock --suite" takes it: lower-case letters, digits
 * and "." ("trixie", "sid", "noble"), no "-" or "/" (those name a suite of
 * the release). */
const char *debpolicy_release_problem (const char *release);

/* A package as a request lists it: "NAME", "NAME:ARCH", "NAME=VERSION" or
 * "NAME:ARCH=VERSION", each part by the grammar above. */
const char *debpolicy_request_problem (const char *spec);

/* Free text that is written into files and command lines (an Origin, a
 * Release date, a path or a command given on the command line): no control
 * character, so it can never end a line. */
const char *debpolicy_text_problem (const char *text);

/* A path inside an archive (a Packages "Filename:", a suite such as
 * "bookworm/updates", a component): relative, "/"-separated components that
 * are neither empty, "." nor "..", made of letters, digits and "+-._~%:=@,". */
const char *debpolicy_archive_path_problem (const char *path);

/* A SHA256 as the lockfile holds it: 64 lower-case hexadecimal digits. */
const char *debpolicy_sha256_problem (const char *hex);

/* An OpenPGP fingerprint: 40 or 64 hexadecimal digits. */
const char *debpolicy_fingerprint_problem (const char *hex);

/* The URI schemes apt2ostree fetches from (libcurl's, restricted). */
#define DEBPOLICY_URI_SCHEMES "http://, https:// and file://"

/* A source's URI: "http://", "https://" or "file://" and no space or control
 * character.  NULL when allowed, else a newly allocated phrase that names
 * the scheme at fault and the supported ones. */
char *debpolicy_uri_problem (const char *uri);

G_END_DECLS
