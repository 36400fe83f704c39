/* lockinput.c — what "apt2ostree lock" is asked; see lockinput.h. */
#include "config.h"

#include <string.h>

#include "apt/lockinput.h"
#include "base/debpolicy.h"
#include "base/util.h"

void
lock_args_clear (LockArgs *args)
{
  g_free (args->output);
  g_free (args->sources_path);
  g_free (args->arch);
  g_free (args->variant);
  g_free (args->cache);
  g_free (args->merged_usr);
  g_free (args->suite);
  g_strfreev (args->components);
  g_strfreev (args->mirrors);
  g_strfreev (args->debs);
  g_strfreev (args->path_filters);
}

void
lock_debs_dir_free (LockDebsDir *dir)
{
  g_free (dir->name);
  g_free (dir->dir);
  g_free (dir);
}

void
lock_input_clear (LockInput *in)
{
  g_clear_pointer (&in->previous, lockfile_free);
  g_strfreev (in->packages);
  g_free (in->sources_path);
  g_free (in->sources_file);
  g_free (in->architecture);
  g_free (in->output);
  g_free (in->cache);
  g_clear_pointer (&in->debs_dirs, g_ptr_array_unref);
  g_clear_pointer (&in->sources, sources_list_free);
}

/* A bad option value: the command's usage error, as GOption's own. */
#define bad_value(error, ...) \
  util_fail_code ((error), G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, __VA_ARGS__)

/* --update PATH: the request the lockfile records. */
static gboolean
input_from_lockfile (const LockArgs *args, const char *path, LockInput *in, GError **error)
{
  in->previous = lockfile_load (path, error);
  if (in->previous == NULL)
    return FALSE;
  in->req = in->previous->request;
  in->packages = g_strdupv (in->req.packages);
  in->req.packages = in->packages;
  in->output = g_strdup (args->output != NULL ? args->output : path);
  /* --sources replaces the recorded sources file (the same source
   * names must be in it): the way to update on another machine. */
  in->sources_path = args->sources_path != NULL
                     ? g_strdup (args->sources_path)
                     : lockfile_request_sources_path (in->previous, path);
  return TRUE;
}

/* The package list PATH and the options. */
static gboolean
input_from_package_list (const LockArgs *args, const char *path, LockInput *in, GError **error)
{
  in->packages = lock_read_package_list (path, error);
  if (in->packages == NULL)
    return FALSE;
  in->output = args->output != NULL ? g_strdup (args->output) : lock_default_output (path);
  in->architecture = args->arch != NULL ? g_strdup (args->arch) : lock_host_architecture (error);
  const char *arch = in->architecture;
  if (arch == NULL)
    return FALSE;
  if (debpolicy_arch_problem (arch) != NULL)
    return bad_value (error, "--arch \"%s\" %s", arch, debpolicy_arch_problem (arch));
  in->req.packages = in->packages;
  in->req.variant = args->variant;
  in->req.architecture = in->architecture;
  in->req.recommends = args->recommends;
  in->req.merged_usr = args->merged_usr != NULL ? args->merged_usr : "auto";
  in->req.record_uris = args->record_uris;
  in->req.suite = args->suite;
  in->req.components = args->components;
  in->req.path_filters = args->path_filters;
  in->sources_path = g_strdup (args->sources_path);
  return TRUE;
}

/* The sources file as the request records it: relative to the lockfile, so
 * both can move together (a repository checkout); an absolute one stays
 * absolute. */
static char *
request_sources_file (const LockArgs *args, LockInput *in)
{
  const char *given = args->update && args->sources_path == NULL ? in->req.sources_file
                                                                 : args->sources_path;
  if (given == NULL)
    return NULL;
  return g_path_is_absolute (given) ? g_strdup (given)
                                    : lockfile_relative_path (in->sources_path, in->output);
}

/* One --debs: "[name=NAME pin-priority=N] DIR", the options as a sources
 * line has them (each optional), or "DIR"; the name defaults to DIR's. */
static LockDebsDir *
parse_debs_spec (const char *spec, GError **error)
{
  g_autofree char *name = NULL;
  gint64 pin = SOURCE_DEFAULT_PIN_PRIORITY;
  const char *dir = spec;
  if (*spec == '[')
    {
      const char *end = strchr (spec, ']');
      if (end == NULL)
        return bad_value (error, "--debs \"%s\": \"[\" without \"]\"", spec), NULL;
      g_autofree char *inside = g_strndup (spec + 1, end - spec - 1);
      g_auto(GStrv) words = g_strsplit_set (inside, " \t", -1);
      for (char **w = words; *w != NULL; w++)
        if (g_str_has_prefix (*w, "name="))
          g_free (name), name = g_strdup (*w + 5);
        else if (**w != '\0' && (!g_str_has_prefix (*w, "pin-priority=")
                 || !g_ascii_string_to_signed (*w + 13, 10, -10000, 10000, &pin, NULL)))
          return bad_value (error, "--debs \"%s\": \"%s\" is not name=NAME or "
                            "pin-priority=N (-10000 to 10000)", spec, *w), NULL;
      for (dir = end + 1; g_ascii_isspace (*dir); dir++)
        ;
    }
  if (*dir == '\0')
    return bad_value (error, "--debs \"%s\": no directory", spec), NULL;
  if (name == NULL)
    {
      g_autofree char *trimmed = g_strdup (dir);
      for (gsize n = strlen (trimmed); n > 1 && trimmed[n - 1] == '/'; n--)
        trimmed[n - 1] = '\0';
      name = g_path_get_basename (trimmed);
    }
  const char *problem = debpolicy_name_problem (name);
  if (problem != NULL)
    {
      g_autofree char *shown = g_strescape (name, NULL);
      return bad_value (error, "--debs \"%s\": the source name \"%s\" %s; give one: "
                        "--debs '[name=NAME] %s'", spec, shown, problem, dir), NULL;
    }
  LockDebsDir *d = g_new0 (LockDebsDir, 1);
  d->name = g_steal_pointer (&name);
  d->pin_priority = (int) pin;
  d->dir = g_strdup (dir);
  return d;
}

/* The --debs directories. */
static GPtrArray *
debs_dirs_from_specs (char **specs, GError **error)
{
  g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func ((GDestroyNotify) lock_debs_dir_free);
  for (char **spec = specs; spec != NULL && *spec != NULL; spec++)
    {
      LockDebsDir *d = parse_debs_spec (*spec, error);
      if (d == NULL)
        return NULL;
      g_ptr_array_add (dirs, d);
    }
  return g_steal_pointer (&dirs);
}

gboolean
lock_input_load (const LockArgs *args, const char *path, LockInput *in, GError **error)
{
  if (args->update ? !input_from_lockfile (args, path, in, error)
                   : !input_from_package_list (args, path, in, error))
    return FALSE;
  in->sources = lock_load_sources (in->sources_path, in->req.suite,
                                   (const char *const *) in->req.components, in->previous,
                                   in->req.architecture, args->mirrors, error);
  if (in->sources == NULL)
    return FALSE;
  in->cache = g_strdup (args->cache != NULL ? args->cache : "build/cache/lists");
  in->debs_dirs = debs_dirs_from_specs (args->debs, error);
  if (in->debs_dirs == NULL)
    return FALSE;
  in->sources_file = request_sources_file (args, in);
  in->req.sources_file = in->sources_file;
  return TRUE;
}

Lockfile *
lock_input_replaced (const char *path, Lockfile *lock)
{
  g_autofree char *old_text = NULL;
  if (!g_file_get_contents (path, &old_text, NULL, NULL))
    return NULL;
  g_autofree char *text = lockfile_to_string (lock);
  if (g_str_equal (old_text, text))
    return NULL;
  g_autoptr(GError) local_error = NULL;
  Lockfile *before = lockfile_load (path, &local_error);
  if (before == NULL)
    g_debug ("no change list: %s", local_error->message);
  return before;
}

void
lock_warn_trusted (Lockfile *lock)
{
  for (guint i = 0; i < lock->sources->len; i++)
    {
      LockSource *s = lock->sources->pdata[i];
      if (s->trusted)
        g_printerr ("apt2ostree lock: warning: source \"%s\" is trusted=yes: its Release and "
                    "packages are not checked against any signing key\n", s->name);
    }
}
