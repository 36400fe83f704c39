/* stage2.h — configure an unpacked image: the work of "apt2ostree
 * configure", run with mod_run() over the stage-1 tree as "/". */
#pragma once

#include <ostree.h>

#include "deb/stage1.h"
#include "sandbox/runlimits.h"

G_BEGIN_DECLS


typedef struct {
  const char *in;              /* the stage-1 tree */
  const char *out_ref;
  const char *const *hooks;    /* shell commands run before dpkg --configure -a, or NULL */
  gboolean verbose;            /* dpkg's output on stderr as it runs */
  gboolean keep_on_failure;    /* a failed run's scratch tree is kept (mod.h) */
  const RunLimits *limits;     /* the sandbox's deadline, memory, processes; NULL: none */
} Stage2Options;

/* Commit metadata of an incremental image (stage2_configure_incremental),
 * which a from-scratch one never has: the configured commit it started from
 * and the stage-1 commit whose packages it was brought to (both "s"). */
#define STAGE2_META_INCREMENTAL "apt2ostree.incremental"
#define STAGE2_META_INCREMENTAL_STAGE1 "apt2ostree.incremental.stage1"

/* What an incremental stage 2 does over the image it replaces. */
typedef struct {
  const char *prev;             /* the configured image it starts from */
  const char *const *purge;     /* dpkg names of the packages that left, or NULL */
  const char *const *debs;      /* .debs (host paths) that changed or arrived, in
                                 * install order, or NULL */
} Stage2Incremental;

/* The configured image's commit subject: what it is, from what it is made
 * of alone ("Debian GNU/Linux 13 (trixie): 88 packages for amd64,
 * configured"): the release its os-release names (RELEASE, or NULL: left
 * out), the number of packages, the architecture; INCREMENTAL says so.
 * Not the ref nor the lockfile's name: the same packages give the same
 * commit under any name (a cache serves it to every image of them). */
char *stage2_subject (const char *release, guint n_packages, const char *arch,
                      gboolean incremental);

/* Run the stage-2 script over IN (see stage2.c for each step) and commit the
 * configured image to OUT_REF. */
gboolean stage2_configure (OstreeRepo *repo, const Stage2Options *options, char **out_commit,
                           GCancellable *cancellable, GError **error);

/* Bring the configured image INCREMENTAL->prev to the packages of the
 * stage-1 tree OPTIONS->in as apt-get would on a device: purge, unpack
 * (dpkg's own, preinsts included), hooks, dpkg --configure -a, then the
 * same cleaning as stage2_configure().  The commit says it is incremental
 * (STAGE2_META_INCREMENTAL); on failure OPTIONS->out_ref is not written. */
gboolean stage2_configure_incremental (OstreeRepo *repo, const Stage2Options *options,
                                       const Stage2Incremental *incremental, char **out_commit,
                                       GCancellable *cancellable, GError **error);

G_END_DECLS
