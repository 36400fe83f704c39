/* fuzz-util.h — what every libFuzzer harness in tests/fuzz/ shares: inputs
 * turned into the files or strings the parsers take, and GLib made to abort
 * on a critical or a warning, so that libFuzzer reports those as crashes. */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

/* Write DATA to a file called NAME in this process's scratch directory
 * (made on first use, removed at exit) and return its path (static
 * storage: valid until the next call). */
const char *fuzz_write_file (const char *name, const uint8_t *data, size_t size);

/* The scratch directory itself (a subdirectory DIR of it, emptied, when DIR
 * is not NULL). */
const char *fuzz_scratch_dir (const char *dir);

/* Print ERROR's message when $FUZZ_VERBOSE is set (to see why seeds are
 * refused); nothing otherwise. */
void fuzz_report (const GError *error);

/* Make GLib criticals and warnings fatal and keep debug messages quiet;
 * call from LLVMFuzzerInitialize(). */
void fuzz_init (void);

/* Abort with MESSAGE when COND is false: a property the harness checks,
 * reported by libFuzzer as a crash (it never depends on the input being
 * valid). */
#define fuzz_assert(cond, message) \
  do { if (!(cond)) { g_printerr ("fuzz property failed: %s\n", (message)); abort (); } } while (0)
