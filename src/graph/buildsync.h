/* buildsync.h — a build that makes its writes durable once, at its end
 * (barestore/unsynced.h), and what the next build does when the machine
 * stopped before one did. */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

/* Before a build of REPO writes anything, what earlier builds left.  A
 * marker of a build that was killed in this boot: its writes are in the
 * page cache, whole; they are synced and the marker removed.  A marker of
 * another boot: the machine stopped while that build's writes were not
 * all on disk, so every ref written from a minute before the marker's
 * time on is deleted (their edges run again), and with them every object
 * no other ref reaches (prune); one line says so.  Until then no
 * transaction begins on REPO (barestore/unsynced.h). */
gboolean buildsync_recover (OstreeRepo *repo, GCancellable *cancellable, GError **error);

/* Just before a build of REPO runs its steps: name its marker in the
 * environment its steps get, so that they skip their syncs (the first that
 * writes makes it).  *OUT_MARKER is its name, for buildsync_end(). */
gboolean buildsync_begin (OstreeRepo *repo, char **out_marker, GError **error);

/* After the build's steps, whether they succeeded or not: when a step made
 * MARKER, sync the file system and remove it; its name leaves the
 * environment. */
gboolean buildsync_end (OstreeRepo *repo, const char *marker, GError **error);

G_END_DECLS
