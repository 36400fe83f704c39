/* unsynced.h — a build's writes left unsynced until its end.
 *
 * A transaction syncs the file system twice (txn.c): its objects before
 * they are linked, its refs after.  Within a build those waits stand on
 * the longest path: each package's edge waits for every other edge's data
 * to reach the disk (7% of a cold minbase build, 8% of a desktop-sized
 * one), while stage 2 leaves a core idle.  A build ("apt2ostree build")
 * may instead make its writes durable once, at its end: it names a marker,
 * REPO/apt2ostree-unsynced/BOOT_ID.PID, to its steps ($APT2OSTREE_UNSYNCED);
 * the first transaction that writes makes it, on disk, before anything
 * unsynced, and every transaction that finds it skips its syncs, as with
 * core.fsync=false; the build, when the marker is there, syncs the file
 * system and removes the marker at its end.  A marker of another boot found later means the
 * machine stopped (power, crash) while a build's writes were not all on
 * disk: what that build wrote from the marker's time on cannot be trusted
 * and is removed (graph/buildsync.c) before anything else runs. */
#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

#define UNSYNCED_DIR "apt2ostree-unsynced"
#define UNSYNCED_ENV "APT2OSTREE_UNSYNCED"

/* This boot's id (/proc/sys/kernel/random/boot_id), NULL when unknown. */
char *unsynced_boot_id (void);

/* Whether a transaction on the repository REPO_DFD may skip its syncs: the
 * environment names a marker of this boot, and it is on disk (the first
 * step to ask makes it, synced; the others find it so). */
gboolean unsynced_deferred (int repo_dfd);

/* Get the repository REPO_DFD (REPO_PATH for messages) ready for a build's
 * marker: the name (BOOT_ID.PID) to give its steps in $APT2OSTREE_UNSYNCED.
 * Nothing is made until a step writes, so a build that writes nothing
 * syncs nothing. */
char *unsynced_begin (int repo_dfd, const char *repo_path, GError **error);

/* When a step made the marker NAME: sync the file system of REPO_DFD, then
 * remove the marker. */
gboolean unsynced_end (int repo_dfd, const char *repo_path, const char *name, GError **error);

/* A marker left in the repository by a run that did not end it. */
typedef struct {
  char *name;        /* BOOT_ID.PID */
  gboolean foreign;  /* of another boot: the machine stopped since */
  gint64 mtime;      /* when it was made, in seconds */
  pid_t pid;         /* the build's */
} UnsyncedMarker;

void unsynced_marker_free (UnsyncedMarker *marker);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (UnsyncedMarker, unsynced_marker_free)

/* The markers of REPO_DFD left by runs that are gone: of another boot, or
 * of this one and a process that no longer runs. */
GPtrArray *unsynced_leftovers (int repo_dfd, const char *repo_path, GError **error);

/* FALSE, with an error that says what to run, when the repository holds a
 * marker of another boot: what the build that left it wrote may not be on
 * disk whole, and no transaction may build on it until a build has
 * removed it (graph/buildsync.c). */
gboolean unsynced_check (int repo_dfd, const char *repo_path, GError **error);

/* Remove the marker NAME (after the caller has dealt with what it says). */
gboolean unsynced_remove (int repo_dfd, const char *repo_path, const char *name, GError **error);

G_END_DECLS
