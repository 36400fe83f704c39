/* incremental.h — what "build --incremental" changes in the image it
 * replaces: the packages of the lockfile against the previous configured
 * image's dpkg database.  Stage 2 (sandbox/stage2.h) then does it. */
#pragma once

#include <ostree.h>

#include "apt/lockfile.h"
#include "sandbox/stage2.h"

G_BEGIN_DECLS

typedef struct {
  char *prev;           /* the configured commit it starts from */
  GPtrArray *purge;     /* dpkg names of the packages that left (NULL-terminated) */
  GPtrArray *debs;      /* .debs that changed or arrived, in install order (NULL-terminated) */
  char *fallback;       /* why stage 2 must run from scratch instead, or NULL */
} IncrementalPlan;

void incremental_plan_free (IncrementalPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (IncrementalPlan, incremental_plan_free)

/* The plan to bring PREV (a configured commit) to the packages of LOCK
 * (read from LOCK_PATH), whose stage-1 tree is STAGE1.  A package is
 * unpacked again when PREV lacks it, holds another version, or another
 * md5sums file (a package rebuilt with the same version); one PREV has and
 * LOCK does not is purged.  A .deb comes from DEBS_DIR/SHA256 (the build's
 * download cache) or, for a local package, from its path; one that is in
 * neither makes a plan with a fallback. */
IncrementalPlan *incremental_plan (OstreeRepo *repo, const char *prev, const char *stage1,
                                   Lockfile *lock, const char *lock_path, const char *debs_dir,
                                   GCancellable *cancellable, GError **error);

/* configure --incremental: stage 2 of OPTIONS->in from the image
 * OPTIONS->out_ref holds, with the lockfile LOCK_PATH the stage-1 tree was
 * made from and the .debs of DEBS_DIR.  *OUT_COMMIT: the configured image
 * (the previous one when nothing changed), or NULL when it must be
 * configured from scratch: no previous image, or *OUT_FALLBACK says why. */
gboolean incremental_configure (OstreeRepo *repo, const Stage2Options *options,
                                const char *lock_path, const char *debs_dir, char **out_fallback,
                                char **out_commit, GCancellable *cancellable, GError **error);

G_END_DECLS
