/* progress.h — a step's word on what it does now, for the terminal of the
 * "build" that runs it.
 *
 * Under ninja a step's output is held until it ends, so a long step (a
 * download, stage 2) would say nothing while it runs.  "build", when its
 * output is a terminal, listens on a socket and gives its path to ninja's
 * steps in $APT2OSTREE_PROGRESS; each step that has something to say
 * connects (one connection per process: its end is the step's end) and
 * sends one line of text per message, what it does now.  With no such
 * variable (plain ninja, a log, a command run by hand) nothing is sent.
 * Sending never blocks and never fails the step: a message the reader has
 * no room for is dropped. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define PROGRESS_ENV "APT2OSTREE_PROGRESS"
/* The longest message; a longer one is cut. */
#define PROGRESS_MAX_MESSAGE 512

/* Is there a "build" listening? */
gboolean progress_active (void);

/* Say what this process does now (one line; control characters are
 * replaced).  Nothing when no one listens. */
void progress_say (const char *format, ...) G_GNUC_PRINTF (1, 2);

/* The command a process runs, said once as it starts: its name and the
 * ref it writes ("--ref REF"), from its arguments ARGV (ARGV[0] the
 * command's name). */
void progress_say_command (int argc, char **argv);

G_END_DECLS
