/* partial.h — the commitpartial markers of this program's transactions
 * (see partial.c): a commit whose objects may not all be durable yet is
 * marked partial, as libostree's pulls mark theirs. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct PartialMarks PartialMarks;

/* The markers of one transaction in the repository REPO_DFD (not owned).
 * Without SYNC (core.fsync=false) nothing is marked: objects go straight
 * into objects/, content before the commit, and no promise is made for a
 * power loss. */
PartialMarks *partial_marks_new (int repo_dfd, const char *repo_path, gboolean sync);
void partial_marks_free (PartialMarks *marks);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PartialMarks, partial_marks_free)

/* Mark the commit CHECKSUM partial before it can appear in objects/: a new
 * marker, or one left by a killed run of ours or by another program (a
 * libostree pull that failed), taken over: this transaction writes the
 * commit in full, so the marker goes when its objects are durable.
 * Nothing is done for a commit that objects/ holds unmarked (it is
 * complete), nor for a marker another live transaction of ours holds. */
gboolean partial_marks_add (PartialMarks *marks, const char *checksum, GError **error);

/* Every object of the marked commits is on disk (the file system was
 * synced after they went into objects/): remove the markers. */
gboolean partial_marks_remove (PartialMarks *marks, GError **error);

/* Resolve the markers of ours that no live transaction holds (runs that
 * were killed, or a power loss): a commit that is not in objects/ loses its
 * marker; one whose every object is there loses it after a syncfs (with
 * SYNC); one that misses an object keeps it, so nothing takes it for
 * complete.  FILE_SUFFIX names content objects ("file", or "filez" in an
 * archive repository). */
gboolean partial_resolve_leftovers (int repo_dfd, const char *repo_path, const char *file_suffix,
                                    gboolean sync, GError **error);

/* Is the commit CHECKSUM marked partial (by anyone)? */
gboolean partial_is_marked (int repo_dfd, const char *checksum);

G_END_DECLS
