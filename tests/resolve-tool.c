/* resolve-tool.c — resolve_request() from the shell, for tests and
 * benchmarks (not installed):
 *
 *   resolve-tool [--arch ARCH] [--variant V] [--recommends] [--cache DIR]
 *                --source NAME[:PRIORITY]=PACKAGES [--source ...] [PACKAGE...]
 *
 * Prints name=version lines in install order; with --fields also the
 * architecture, size, sha256 and filename.  --time prints the time taken to
 * stderr. */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include "apt/resolve.h"

static ResolveSource *
parse_source (const char *spec)
{
  const char *eq = strchr (spec, '=');
  if (eq == NULL)
    return NULL;
  g_autofree char *head = g_strndup (spec, eq - spec);
  int priority = 500;
  char *colon = strchr (head, ':');
  if (colon != NULL)
    {
      *colon = '\0';
      priority = atoi (colon + 1);
    }
  ResolveSource *source = resolve_source_new (head, priority);
  g_ptr_array_add (source->index_paths, g_strdup (eq + 1));
  return source;
}

int
main (int argc, char **argv)
{
  g_autofree char *arch = NULL;
  g_autofree char *variant = NULL;
  g_autofree char *cache_dir = NULL;
  g_auto(GStrv) source_specs = NULL;
  gboolean recommends = FALSE, fields = FALSE, timing = FALSE;
  GOptionEntry entries[] = {
    { "arch", 0, 0, G_OPTION_ARG_STRING, &arch, "Image architecture (default amd64)", "ARCH" },
    { "variant", 0, 0, G_OPTION_ARG_STRING, &variant, "mmdebstrap variant", "VARIANT" },
    { "recommends", 0, 0, G_OPTION_ARG_NONE, &recommends, "Install Recommends", NULL },
    { "source", 0, 0, G_OPTION_ARG_STRING_ARRAY, &source_specs, "A source and its index",
      "NAME[:PRIO]=FILE" },
    { "cache", 0, 0, G_OPTION_ARG_FILENAME, &cache_dir, "Keep parsed indices here", "DIR" },
    { "fields", 0, 0, G_OPTION_ARG_NONE, &fields, "Print the lockfile fields too", NULL },
    { "time", 0, 0, G_OPTION_ARG_NONE, &timing, "Print the time taken to stderr", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("[PACKAGE...]");
  g_option_context_add_main_entries (context, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      fprintf (stderr, "resolve-tool: %s\n", error->message);
      return 2;
    }

  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func ((GDestroyNotify) resolve_source_free);
  for (char **s = source_specs; s && *s; s++)
    {
      ResolveSource *source = parse_source (*s);
      if (source == NULL)
        {
          fprintf (stderr, "resolve-tool: --source %s: write NAME[:PRIORITY]=FILE\n", *s);
          return 2;
        }
      g_ptr_array_add (sources, source);
    }

  ResolveRequest request = {
    .packages = argv + 1,
    .variant = variant,
    .arch = arch ? arch : "amd64",
    .recommends = recommends,
    .cache_dir = cache_dir,
  };
  gint64 start = g_get_monotonic_time ();
  g_autoptr(GPtrArray) result = resolve_request (sources, &request, &error);
  if (timing)
    fprintf (stderr, "resolve-tool: %.3f s\n", (g_get_monotonic_time () - start) / 1e6);
  if (result == NULL)
    {
      fprintf (stderr, "resolve-tool: error: %s\n", error->message);
      return 1;
    }
  for (guint i = 0; i < result->len; i++)
    {
      DebPackage *p = result->pdata[i];
      if (fields)
        printf ("%s=%s %s %s %" G_GUINT64_FORMAT " %s %s %s %s\n", p->name, p->version,
                p->architecture, p->multi_arch, p->size, p->sha256 ? p->sha256 : "-",
                p->filename ? p->filename : "-", p->source_name, p->source_package);
      else
        printf ("%s=%s\n", p->name, p->version);
    }
  return 0;
}
