/* buildstatus.h — what a build shows on a terminal while ninja runs.
 *
 * Ninja, its output not a terminal, prints "[N/M] DESCRIPTION" as each
 * step ends; the steps' own words (base/progress.h: the download line, the
 * package stage 2 sets up, the trigger it runs) come through a socket
 * whose path the steps find in $APT2OSTREE_PROGRESS.  Together they make
 * one line, redrawn in place: the steps done of the steps to run, and what
 * the longest-running step says it does now.  Everything else ninja prints
 * (a failed step's output, its own messages) goes above that line.  At
 * the end, the line goes and one line says the total: the steps run, the
 * time, the .debs fetched, the step that took longest.  In a log (not a terminal) there is
 * no line: ninja's lines as ninja prints them, and the total. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct BuildStatus BuildStatus;

/* ninja's status format that buildstatus_ninja_output() reads. */
#define BUILDSTATUS_NINJA_STATUS "[a2o %f/%t] "

/* A display on OUT_FD: a TERMINAL's line, with its socket listening (its
 * sources in CONTEXT), or, in a log, ninja's lines as ninja prints them
 * there and the total; NULL with ERROR. */
BuildStatus *buildstatus_new (int out_fd, gboolean terminal, GMainContext *context,
                              GError **error);
void buildstatus_free (BuildStatus *status);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (BuildStatus, buildstatus_free)

/* The socket's path, for $APT2OSTREE_PROGRESS; NULL in a log. */
const char *buildstatus_socket_path (BuildStatus *status);

/* A piece of what ninja printed on its standard output. */
void buildstatus_ninja_output (BuildStatus *status, const char *data, gsize len);

/* What a run of ninja did, for its total line. */
typedef struct {
  guint steps;             /* ninja's steps done */
  double seconds;
  char *longest;           /* the name of the step that took longest, or NULL */
  double longest_seconds;
} BuildTotal;
void build_total_clear (BuildTotal *total);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (BuildTotal, build_total_clear)

/* Ninja ended: the line is erased, and *OUT_TOTAL (when not NULL) says
 * what it did. */
void buildstatus_finish (BuildStatus *status, BuildTotal *out_total);

/* The .debs of IMAGES (BuildImage*, their LockPackage* borrowed) that
 * the download cache CACHE_DIR lacks now, each once. */
GPtrArray *buildstatus_missing_debs (const char *cache_dir, GPtrArray *images);

/* The total line on standard output, after a build that ran steps: TOTAL,
 * and of MISSING (from buildstatus_missing_debs() before the build) the
 * .debs the cache holds now, those the build fetched:
 * "apt2ostree build: 31 steps in 14.2 s, 29 .debs fetched (12.3 MB); the
 * longest: configure img (6.1 s)". */
void buildstatus_say_total (const BuildTotal *total, const char *cache_dir, GPtrArray *missing);

G_END_DECLS
