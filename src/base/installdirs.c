/* installdirs.c — the program's own directories, relative to where it
 * runs from; see installdirs.h. */
#include "config.h"

#include <string.h>

#include "base/installdirs.h"

/* The components of PATH made canonical (no "", ".", ".." components). */
static char **
components (const char *path)
{
  g_autofree char *canonical = g_canonicalize_filename (path, "/");
  g_auto(GStrv) parts = g_strsplit (canonical, "/", -1);
  g_autoptr(GPtrArray) out = g_ptr_array_new ();
  for (char **p = parts; *p != NULL; p++)
    if (**p != '\0')
      g_ptr_array_add (out, g_strdup (*p));
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&out), FALSE);
}

char *
installdirs_relative (const char *from, const char *to)
{
  g_auto(GStrv) a = components (from);
  g_auto(GStrv) b = components (to);
  guint common = 0;
  while (a[common] != NULL && b[common] != NULL && strcmp (a[common], b[common]) == 0)
    common++;
  g_autoptr(GString) out = g_string_new (NULL);
  for (guint i = common; a[i] != NULL; i++)
    g_string_append (out, out->len > 0 ? "/.." : "..");
  for (guint i = common; b[i] != NULL; i++)
    {
      if (out->len > 0)
        g_string_append_c (out, '/');
      g_string_append (out, b[i]);
    }
  if (out->len == 0)
    g_string_append_c (out, '.');
  return g_string_free (g_steal_pointer (&out), FALSE);
}

char *
installdirs_from_program (const char *configured)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  if (self == NULL || !g_path_is_absolute (self))
    return NULL;
  g_autofree char *dir = g_path_get_dirname (self);
  g_autofree char *relative = installdirs_relative (BINDIR, configured);
  g_autofree char *joined = g_build_filename (dir, relative, NULL);
  return g_canonicalize_filename (joined, "/");
}
