/* stagedir.h — the staging directory of the project's own transaction:
 * tmp/apt2ostree-staging-XXXXXX under a bare or bare-user repository,
 * locked by the transaction that uses it (see stagedir.c).  GLib alone. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct StageDir StageDir;

/* A staging directory of the repository REPO_DFD (REPO_PATH for messages)
 * locked for this transaction: one no other transaction holds, emptied of
 * what a killed one left there, or a new one. */
StageDir *stage_dir_open (int repo_dfd, const char *repo_path, GError **error);

/* Its file descriptor (owned by DIR). */
int stage_dir_fd (StageDir *dir);

/* Release the lock; the directory stays, empty, for the next transaction. */
void stage_dir_free (StageDir *dir);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StageDir, stage_dir_free)

G_END_DECLS
