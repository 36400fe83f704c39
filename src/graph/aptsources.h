/* aptsources.h — the apt configuration of a development image: the sources
 * a lockfile was made from, with the URIs and keys the build uses, as a
 * directory tree (etc/apt/sources.list.d/apt2ostree.sources and the keys
 * under etc/apt/keyrings/) that "build --apt-sources" puts over the
 * configured image, so that "apt-get update" works inside it. */
#pragma once

#include "apt/lockfile.h"
#include "apt/sources.h"

G_BEGIN_DECLS

/* Write DIR (made or emptied of what this module writes) from the sources
 * LOCK names, looked up in SOURCES.  A source the configuration lacks is an
 * error naming it; one without Signed-By gets none (the image's own
 * keyrings, such as debian-archive-keyring's, then apply). */
gboolean aptsources_write (Lockfile *lock, SourcesList *sources, const char *dir, GError **error);

G_END_DECLS
