/* staging.h — the staging directory of the open transaction, emptied into
 * objects/ without being deleted (see staging.c). */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

/* A new file descriptor for the staging directory of REPO's open
 * transaction, or -1 when it cannot be told (then commit the usual way). */
int staging_open (OstreeRepo *repo);

/* Does the staging directory hold only XX directories, as this code expects? */
gboolean staging_known_layout (int stage_dfd);

/* Rename every staged object into objects/XX/, leaving the XX directories
 * in place (empty) for the next transaction. */
gboolean staging_move_objects (OstreeRepo *repo, int stage_dfd, GError **error);

G_END_DECLS
