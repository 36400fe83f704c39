/* pathfilter.h — dpkg's path filters (dpkg.cfg's path-exclude and
 * path-include), as dpkg 1.21 applies them when it unpacks a package.
 *
 * A filter is a list of rules in order, each one line of dpkg.cfg:
 * "path-exclude=GLOB" or "path-include=GLOB", GLOB an absolute path with
 * the shell's wildcards, "*" and "?" matching "/" too (fnmatch without
 * flags).  For a path a package ships ("/usr/share/doc/foo/README", no
 * trailing slash) the last rule whose GLOB matches decides; no match keeps
 * it.  An excluded directory or symlink is kept after all when the fixed
 * part of some include GLOB (before its first "*", "?", "[" or "\", less
 * trailing slashes) is a prefix of its path, so that the files the include
 * rule keeps have somewhere to go: dpkg's own rule, which keeps more than
 * strictly needed (/usr/share/doc/PKG for "/usr/share/doc/[*]/copyright",
 * and every symlink under /usr/share/doc). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define PATHFILTER_EXCLUDE "path-exclude="
#define PATHFILTER_INCLUDE "path-include="

/* NULL when GLOB may be a rule's glob, else why not: empty, not starting
 * with "/", or holding a control character (a newline would end the
 * dpkg.cfg line). */
const char *pathfilter_glob_problem (const char *glob);

/* The same for a whole rule, "path-exclude=GLOB" or "path-include=GLOB". */
const char *pathfilter_rule_problem (const char *rule);

/* Does dpkg leave PATH out with RULES (checked rules, NULL-terminated)?
 * DIR_OR_SYMLINK: PATH is a directory or a symlink (see above). */
gboolean pathfilter_excludes (const char *const *rules, const char *path, gboolean dir_or_symlink);

/* Could an excluded symlink at PATH be kept by an include rule?  (Saves
 * the caller from finding out whether PATH is a symlink when it cannot.) */
gboolean pathfilter_may_reinclude (const char *const *rules, const char *path);

/* The text of a dpkg.cfg.d file holding RULES: a comment, one rule a line. */
char *pathfilter_dpkg_cfg (const char *const *rules);

G_END_DECLS
