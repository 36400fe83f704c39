/* localcheck.h — a local .deb rebuilt after "lock", met by a build whose
 * repository already holds the locked one's tree: the locked content wins
 * (package trees are keyed by sha256, so ninja has nothing to do), and the
 * build says so in one line per file. */
#pragma once

#include "graph/build.h"

G_BEGIN_DECLS

/* For each local .deb of ARGS's images (loaded) whose tree the repository
 * holds: when the file no longer has the locked size and sha256, one line on
 * stderr naming it and saying that "lock --update" takes the new one.  Cheap
 * on a no-op build: a stat of each file and of its tree's ref (a file not
 * changed since the ref was written is the locked one); a file changed since
 * is checked against BUILDDIR/cache/local-debs (the size, mtime, ctime and
 * sha256 last seen for each path), hashed only when they moved, and only
 * then is the record written. */
void localcheck_say_changed (BuildArgs *args);

G_END_DECLS
