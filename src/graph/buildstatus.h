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
 * time, the step that took longest.  In a log (not a terminal) there is
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

/* Ninja ended (SUCCESS: it built everything): the line is erased and,
 * after a success, the total said. */
void buildstatus_finish (BuildStatus *status, gboolean success);

G_END_DECLS
