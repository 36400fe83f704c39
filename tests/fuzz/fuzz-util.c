/* fuzz-util.c — the scratch files and GLib set-up the harnesses share; see
 * fuzz-util.h. */
#include "config.h"

#include "fuzz-util.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char *scratch;

static void
remove_tree (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

static void
remove_scratch (void)
{
  if (scratch != NULL)
    remove_tree (scratch);
}

const char *
fuzz_scratch_dir (const char *dir)
{
  if (scratch == NULL)
    {
      scratch = g_dir_make_tmp ("a2o-fuzz-XXXXXX", NULL);
      if (scratch == NULL)
        {
          g_printerr ("fuzz: cannot make a scratch directory: %s\n", g_strerror (errno));
          abort ();
        }
      atexit (remove_scratch);
    }
  if (dir == NULL)
    return scratch;
  static char *sub;
  g_free (sub);
  sub = g_build_filename (scratch, dir, NULL);
  remove_tree (sub);
  if (g_mkdir (sub, 0700) != 0)
    {
      g_printerr ("fuzz: %s: %s\n", sub, g_strerror (errno));
      abort ();
    }
  return sub;
}

const char *
fuzz_write_file (const char *name, const uint8_t *data, size_t size)
{
  static char *path;
  g_free (path);
  path = g_build_filename (fuzz_scratch_dir (NULL), name, NULL);
  /* Not g_file_set_contents(): its fsync would make the disk the limit. */
  FILE *fp = fopen (path, "we");
  if (fp == NULL || fwrite (data, 1, size, fp) != size || fclose (fp) != 0)
    {
      g_printerr ("fuzz: %s: %s\n", path, g_strerror (errno));
      abort ();
    }
  return path;
}

void
fuzz_report (const GError *error)
{
  static int verbose = -1;
  if (verbose < 0)
    verbose = g_getenv ("FUZZ_VERBOSE") != NULL;
  if (verbose && error != NULL)
    g_printerr ("fuzz: %s\n", error->message);
}

static void
quiet (const char *domain, GLogLevelFlags level, const char *message, gpointer user_data)
{
}

void
fuzz_init (void)
{
  g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  g_log_set_handler (NULL, G_LOG_LEVEL_DEBUG | G_LOG_LEVEL_INFO, quiet, NULL);
  g_log_set_handler ("apt2ostree", G_LOG_LEVEL_DEBUG | G_LOG_LEVEL_INFO, quiet, NULL);
}
