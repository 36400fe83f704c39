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

/* A version "[EPOCH:]UPSTREAM[-REVISION]" (policy 5.6.12): EPOCH digits,
 * UPSTREAM alphanumerics and ".+~-:" (":" only after an epoch, "-" only
 * before a revision), REVISION alphanumerics and ".+~". */
const char *debpolicy_version_problem (const char *version);

/* An architecture name: "all", or lower-case alphanumerics and "-",
 * starting with an alphanumeric ("amd64", "arm64", "hurd-i386"). */
const char *debpolicy_arch_problem (const char *arch);

G_END_DECLS
