/* netcheck.h — the network settings of the sources about to be fetched,
 * checked up front: which proxy each URI goes through (proxy.h) and, for
 * https, which CA file it is checked against (tls.h). */
#pragma once

#include <glib.h>

#include "apt/sources.h"

G_BEGIN_DECLS

/* The proxy and CA file of every URI of the N source lists LISTS, asked
 * before any download so that a malformed proxy setting or a missing CA
 * file is one error up front.  With VERBOSE, one line on stderr for each
 * URI (a URI the lists share is said once): "apt2ostree COMMAND: source
 * NAME: URI: proxy URL (WHY)", then "; CA file PATH (WHY)" when one is
 * set. */
gboolean netcheck_sources (const char *command, SourcesList *const *lists, guint n,
                           gboolean verbose, GError **error);

G_END_DECLS
