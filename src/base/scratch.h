/* scratch.h — scratch directories beside a repository's objects (its tmp/,
 * or a --workdir): made under a name of ours, locked for as long as the run
 * that made them lives, removed by that run, and removed by a later run when
 * the one that made them was killed. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  char *path;     /* absolute */
  int lock_fd;    /* the directory itself, flock()ed while the run lives */
} Scratch;

/* Make PARENT/PREFIX-XXXXXX, locked, after removing the directories of that
 * name that killed runs left in PARENT (those no live run holds locked). */
Scratch *scratch_new (const char *parent, const char *prefix, GError **error);

/* Remove SCRATCH's directory (it stays locked until it is gone). */
gboolean scratch_remove (Scratch *scratch, GError **error);

/* Leave SCRATCH's directory for the user: later runs do not remove it. */
gboolean scratch_keep (Scratch *scratch, GError **error);

/* Release the lock; the directory stays unless removed or kept before. */
void scratch_free (Scratch *scratch);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Scratch, scratch_free)

/* Remove the directories PARENT/PREFIX-XXXXXX that no live run holds;
 * what cannot be removed is left, with a warning. */
void scratch_reap (const char *parent, const char *prefix);

/* A new directory .apt2ostree-NAME-XXXXXX (mode 0700) beside DEST, in its
 * parent directory, where a result is made before it is renamed onto DEST
 * (the same file system); the caller removes it (scratch_rm_rf()).  Not
 * locked nor reaped as the others: DEST's directory is the user's. */
char *scratch_beside (const char *dest, const char *name, GError **error);

/* Remove the tree at PATH (a scratch directory or part of one): never
 * following symlinks nor crossing mounts, opening up directories without
 * write or search permission (a checkout's, overlayfs' work directory). */
gboolean scratch_rm_rf (const char *path, GError **error);

G_END_DECLS
