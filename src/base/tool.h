/* tool.h — running one of the Debian programs a command builds on
 * (mkfs.ext4, sfdisk, grub-mkstandalone …): its failure becomes one line
 * naming the program, what it was doing and the last thing it said. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Run ARGV (ARGV[0] looked up in PATH) with ENV added to the environment
 * ("NAME=" removes NAME; ENV may be NULL), its standard input from
 * STDIN_PATH (or NULL: none).  OUT_STDOUT (or NULL) gets what it printed.
 * PACKAGE names the Debian package a missing program comes from; STEP (or
 * NULL) what it was run for ("making the root partition"), for errors. */
gboolean tool_run (const char *const *argv, const char *const *env, const char *stdin_path,
                   const char *package, const char *step, char **out_stdout, GError **error);

G_END_DECLS
