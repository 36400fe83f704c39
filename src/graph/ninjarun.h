/* ninjarun.h — run ninja over the Ninja file "build" wrote.
 *
 * Ninja runs in a process group of its own, with SIGTERM as its
 * parent-death signal: however this process ends (SIGKILL of it or of its
 * process group included), ninja is told to stop, and it stops every step
 * it runs (each step is a process group of its own, which ninja signals).
 * Each step's sandbox ends with the step (bubblewrap's --die-with-parent).
 * SIGINT, SIGTERM and SIGHUP that reach this process are passed on to
 * ninja, and this process waits until ninja has stopped its steps.
 * Ninja's standard output goes through buildstatus.h: a line drawn in
 * place on a terminal, ninja's plain lines in a log, and a total. */
#pragma once

#include <glib.h>

#include "graph/buildstatus.h"

G_BEGIN_DECLS

/* NINJA (a program name or path) -f FILE [-jJOBS] over IMAGES
 * (BuildImage*) and, with SBOM, their documents; *OUT_TOTAL (may be NULL)
 * says what it did (no steps when ninja's output could not be read).  A
 * failure of ninja, or an interruption, is an error saying how to
 * continue. */
gboolean ninjarun_run (const char *ninja, const char *file, int jobs, GPtrArray *images,
                       const char *sbom, BuildTotal *out_total, GError **error);

G_END_DECLS
