/* apt2ostree lock — resolve a package list against signed apt sources into
 * a lockfile; "lock --update LOCKFILE" does it again from the request the
 * lockfile records. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "image/imagediff.h"
#include "deb/localdebs.h"
#include "base/debpolicy.h"
#include "base/pathfilter.h"
#include "apt/lockfile.h"
#include "apt/lock.h"
#include "apt/sources.h"
#include "base/util.h"

/* What changed from BEFORE, one package a line as "diff" prints it, for
 * the CI log. */
static void
print_changes (Lockfile *before, Lockfile *after)
{
  g_autoptr(ImageSide) a = image_side_from_lockfile (before, "before");
  g_autoptr(ImageSide) b = image_side_from_lockfile (after, "after");
  g_autoptr(GPtrArray) changes = image_diff_packages (a, b);
  g_autofree char *text = image_diff_packages_text (changes);
  g_print ("%s", text);
}

/* The lockfile at PATH that LOCK is about to replace, when there is one and
 * it differs; NULL too when it cannot be read: it is replaced either way,
 * and only the change list is left out. */
static Lockfile *
replaced_lockfile (const char *path, Lockfile *lock)
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

static gboolean
check_choice (CmdInvocation *inv, const char *option, const char *value,
              const char *const *choices, GError **error)
{
  if (value == NULL || g_strv_contains (choices, value))
    return TRUE;
  g_autofree char *joined = g_strjoinv ("|", (char **) choices);
  return cmd_usage_error (inv, error, "%s \"%s\": expected %s", option, value, joined);
}

/* The command line. */
typedef struct {
  char *output;
  char *sources_path;
  char *arch;
  char *variant;
  char *cache;
  char *merged_usr;
  char *suite;
  char **components;        /* --components, split at commas */
  char **mirrors;
  char **debs;
  char **path_exclude;
  char **path_include;
  char **path_filters;      /* both, in the order given, as dpkg.cfg lines */
  gboolean recommends;
  gboolean update;
  gboolean record_uris;
  gboolean verbose;
} LockOptions;

static void
lock_options_clear (LockOptions *o)
{
  g_free (o->output);
  g_free (o->sources_path);
  g_free (o->arch);
  g_free (o->variant);
  g_free (o->cache);
  g_free (o->merged_usr);
  g_free (o->suite);
  g_strfreev (o->components);
  g_strfreev (o->mirrors);
  g_strfreev (o->debs);
  g_strfreev (o->path_exclude);
  g_strfreev (o->path_include);
  g_strfreev (o->path_filters);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (LockOptions, lock_options_clear)

/* The next value of --path-exclude (INCLUDE false) or --path-include, as
 * GLib parsed them, counted by *N_EXCLUDE and *N_INCLUDE. */
static const char *
next_glob (LockOptions *o, gboolean include, guint *n_exclude, guint *n_include)
{
  char **globs = include ? o->path_include : o->path_exclude;
  guint *n = include ? n_include : n_exclude;
  if (globs == NULL || *n >= g_strv_length (globs))
    return NULL;
  return globs[(*n)++];
}

/* --path-exclude and --path-include keep their order, as dpkg's last
 * matching rule decides: ARGV (before parsing) says how the values GLib
 * collected, kind by kind, interleave.  Each glob is checked. */
static gboolean
order_path_filters (CmdInvocation *inv, LockOptions *o, char **argv, GError **error)
{
  static const char *const names[] = { "--path-exclude", "--path-include" };
  g_autoptr(GStrvBuilder) rules = g_strv_builder_new ();
  guint n_exclude = 0, n_include = 0;
  for (guint i = 1; argv[i] != NULL && strcmp (argv[i], "--") != 0; i++)
    for (gboolean include = FALSE; include <= TRUE; include++)
      {
        gsize len = strlen (names[include]);
        if (strncmp (argv[i], names[include], len) != 0
            || (argv[i][len] != '\0' && argv[i][len] != '='))
          continue;
        const char *glob = next_glob (o, include, &n_exclude, &n_include);
        if (glob == NULL)
          break;
        if (argv[i][len] == '\0')
          i++;
        const char *problem = pathfilter_glob_problem (glob);
        g_autofree char *shown = g_strescape (glob, NULL);
        if (problem != NULL)
          return cmd_usage_error (inv, error, "%s \"%s\" %s", names[include], shown, problem);
        g_autofree char *rule = g_strconcat (include ? PATHFILTER_INCLUDE : PATHFILTER_EXCLUDE,
                                             glob, NULL);
        g_strv_builder_add (rules, rule);
        break;
      }
  if (n_exclude != (o->path_exclude ? g_strv_length (o->path_exclude) : 0)
      || n_include != (o->path_include ? g_strv_length (o->path_include) : 0))
    return cmd_usage_error (inv, error, "cannot tell the order of --path-exclude and "
                            "--path-include; write each as --path-exclude=GLOB");
  o->path_filters = g_strv_builder_end (rules);
  return TRUE;
}

static gboolean
parse_options (CmdInvocation *inv, LockOptions *o, int *argc, char ***argv, GError **error)
{
  g_auto(GStrv) given = g_new0 (char *, *argc + 1);
  for (int i = 0; i < *argc; i++)
    given[i] = g_strdup ((*argv)[i]);
  const GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o->output,
      "the lockfile to write (default: PACKAGES.txt with .lock.json)", "LOCKFILE" },
    { "sources", 0, 0, G_OPTION_ARG_FILENAME, &o->sources_path,
      "apt sources, one-line or deb822 (default: the host's /etc/apt configuration)", "FILE" },
    { "arch", 0, 0, G_OPTION_ARG_STRING, &o->arch,
      "dpkg architecture of the image (default: the host's)", "ARCH" },
    { "variant", 0, 0, G_OPTION_ARG_STRING, &o->variant,
      "essential, apt, minbase, required, buildd, important, standard or custom "
      "(default: essential plus the listed packages)", "VARIANT" },
    { "recommends", 0, 0, G_OPTION_ARG_NONE, &o->recommends, "install Recommends too", NULL },
    { "cache", 0, 0, G_OPTION_ARG_FILENAME, &o->cache,
      "where verified indices are kept (default: build/cache/lists)", "DIR" },
    { "suite", 0, 0, G_OPTION_ARG_STRING, &o->suite,
      "lock another release of the configured archives: the sources named after their suite "
      "move to it (bookworm-security becomes trixie-security); recorded for build", "CODENAME" },
    { "components", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->components,
      "the components of every source, comma-separated, instead of the sources' own "
      "(as mmdebstrap's; recorded for --update)", "COMP[,COMP...]" },
    { "merged-usr", 0, 0, G_OPTION_ARG_STRING, &o->merged_usr,
      "auto (Debian 12+, Ubuntu 20.10+), yes or no", "auto|yes|no" },
    { "mirror", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->mirrors,
      "fetch source NAME from URI instead (repeatable; recorded only with --record-uris)", "NAME=URI" },
    { "debs", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->debs,
      "a directory of .debs with no index, resolved with the sources (repeatable); its name is "
      "the directory's, its pin priority 500, unless given as in a sources line: "
      "--debs '[name=l4t pin-priority=600] DIR'", "[[OPTIONS]] DIR" },
    { "record-uris", 0, 0, G_OPTION_ARG_NONE, &o->record_uris,
      "write each source's URI into the lockfile (never do this for a committed lockfile "
      "that must not name hosts)", NULL },
    { "update", 0, 0, G_OPTION_ARG_NONE, &o->update,
      "re-resolve LOCKFILE from the request it records", NULL },
    { "path-exclude", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->path_exclude,
      "leave matching paths out of the image, as dpkg's path-exclude does (repeatable; "
      "recorded, and written to the image's /etc/dpkg/dpkg.cfg.d)", "GLOB" },
    { "path-include", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->path_include,
      "keep matching paths an earlier --path-exclude left out (repeatable; the last "
      "matching rule decides)", "GLOB" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &o->verbose,
      "say which proxy each source goes through, and why (apt.conf, http_proxy, no_proxy), "
      "and the CA file apt.conf names for it", NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "PACKAGES.txt | --update LOCKFILE",
                  "Resolve a package list against signed apt sources into a lockfile.",
                  entries, argc, argv, error))
    return FALSE;
  if (!order_path_filters (inv, o, given, error))
    return FALSE;
  if (o->components != NULL)
    {
      /* "main,contrib" and repeated options alike, as mmdebstrap takes them */
      g_autofree char *joined = g_strjoinv (",", o->components);
      g_strfreev (o->components);
      o->components = g_strsplit (joined, ",", -1);
    }
  if (*argc != 2)
    return cmd_usage_error (inv, error, *argc < 2 ? "expected %s" : "unexpected argument \"%s\"",
                            *argc < 2 ? (o->update ? "LOCKFILE" : "PACKAGES.txt") : (*argv)[2]);
  static const char *const merged_choices[] = { "auto", "yes", "no", NULL };
  return check_choice (inv, "--variant", o->variant, lock_variants (), error)
         && check_choice (inv, "--merged-usr", o->merged_usr, merged_choices, error);
}

/* What is locked: the request, and the lockfile it was read from (with
 * --update) or the package list it holds (without). */
typedef struct {
  LockRequest req;          /* borrows from the fields below and the options */
  Lockfile *previous;
  char **packages;
  char *sources_path;       /* the sources file to read; NULL: the host's */
} LockInput;

static void
lock_input_clear (LockInput *in)
{
  g_clear_pointer (&in->previous, lockfile_free);
  g_strfreev (in->packages);
  g_free (in->sources_path);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (LockInput, lock_input_clear)

/* --update LOCKFILE: the request the lockfile records. */
static gboolean
input_from_lockfile (CmdInvocation *inv, LockOptions *o, const char *path, LockInput *in,
                     GError **error)
{
  if (o->arch != NULL || o->variant != NULL || o->recommends || o->merged_usr != NULL
      || o->record_uris || o->suite != NULL || o->components != NULL || o->debs != NULL
      || o->path_filters[0] != NULL)
    return cmd_usage_error (inv, error, "--update takes the request from the lockfile; "
                            "only -o, --sources, --cache and --mirror go with it");
  in->previous = lockfile_load (path, error);
  if (in->previous == NULL)
    return FALSE;
  in->req = in->previous->request;
  in->packages = g_strdupv (in->req.packages);
  in->req.packages = in->packages;
  if (o->output == NULL)
    o->output = g_strdup (path);
  /* --sources replaces the recorded sources file (the same source
   * names must be in it): the way to update on another machine. */
  in->sources_path = o->sources_path != NULL ? g_strdup (o->sources_path)
                                             : lockfile_request_sources_path (in->previous, path);
  return TRUE;
}

/* PACKAGES.txt and the options. */
static gboolean
input_from_package_list (CmdInvocation *inv, LockOptions *o, const char *path, LockInput *in,
                         GError **error)
{
  in->packages = lock_read_package_list (path, error);
  if (in->packages == NULL)
    return FALSE;
  if (o->output == NULL)
    o->output = lock_default_output (path);
  if (o->arch == NULL && (o->arch = lock_host_architecture (error)) == NULL)
    return FALSE;
  if (debpolicy_arch_problem (o->arch) != NULL)
    return cmd_usage_error (inv, error, "--arch \"%s\" %s", o->arch,
                            debpolicy_arch_problem (o->arch));
  in->req.packages = in->packages;
  in->req.variant = o->variant;
  in->req.architecture = o->arch;
  in->req.recommends = o->recommends;
  in->req.merged_usr = o->merged_usr != NULL ? o->merged_usr : "auto";
  in->req.record_uris = o->record_uris;
  in->req.suite = o->suite;
  in->req.components = o->components;
  in->req.path_filters = o->path_filters;
  in->sources_path = g_strdup (o->sources_path);
  return TRUE;
}

/* The sources file as the request records it: relative to the lockfile, so
 * both can move together (a repository checkout); an absolute one stays
 * absolute. */
static char *
request_sources_file (LockOptions *o, LockInput *in)
{
  const char *given = o->update && o->sources_path == NULL ? in->req.sources_file
                                                           : o->sources_path;
  if (given == NULL)
    return NULL;
  return g_path_is_absolute (given) ? g_strdup (given)
                                    : lockfile_relative_path (in->sources_path, o->output);
}

/* One --debs: "[name=NAME pin-priority=N] DIR", the options as a sources
 * line has them (each optional), or "DIR"; the name defaults to DIR's. */
static gboolean
parse_debs_option (CmdInvocation *inv, const char *spec, char **out_name, int *out_pin,
                   const char **out_dir, GError **error)
{
  g_autofree char *name = NULL;
  gint64 pin = SOURCE_DEFAULT_PIN_PRIORITY;
  const char *dir = spec;
  if (*spec == '[')
    {
      const char *end = strchr (spec, ']');
      if (end == NULL)
        return cmd_usage_error (inv, error, "--debs \"%s\": \"[\" without \"]\"", spec);
      g_autofree char *inside = g_strndup (spec + 1, end - spec - 1);
      g_auto(GStrv) words = g_strsplit_set (inside, " \t", -1);
      for (char **w = words; *w != NULL; w++)
        if (g_str_has_prefix (*w, "name="))
          g_free (name), name = g_strdup (*w + 5);
        else if (**w != '\0' && (!g_str_has_prefix (*w, "pin-priority=")
                 || !g_ascii_string_to_signed (*w + 13, 10, -10000, 10000, &pin, NULL)))
          return cmd_usage_error (inv, error, "--debs \"%s\": \"%s\" is not name=NAME or "
                                  "pin-priority=N (-10000 to 10000)", spec, *w);
      for (dir = end + 1; g_ascii_isspace (*dir); dir++)
        ;
    }
  if (*dir == '\0')
    return cmd_usage_error (inv, error, "--debs \"%s\": no directory", spec);
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
      return cmd_usage_error (inv, error, "--debs \"%s\": the source name \"%s\" %s; give one: "
                              "--debs '[name=NAME] %s'", spec, shown, problem, dir);
    }
  *out_name = g_steal_pointer (&name);
  *out_pin = (int) pin;
  *out_dir = dir;
  return TRUE;
}

/* The --debs directories. */
static GPtrArray *
debs_dirs_from_options (CmdInvocation *inv, LockOptions *o, GError **error)
{
  g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func ((GDestroyNotify) local_debs_dir_free);
  for (char **spec = o->debs; spec != NULL && *spec != NULL; spec++)
    {
      LocalDebsDir *d = g_new0 (LocalDebsDir, 1);
      g_ptr_array_add (dirs, d);
      const char *dir = NULL;
      d->pin_priority = SOURCE_DEFAULT_PIN_PRIORITY;
      if (!parse_debs_option (inv, *spec, &d->name, &d->pin_priority, &dir, error))
        return NULL;
      d->dir = g_strdup (dir);
    }
  return g_steal_pointer (&dirs);
}

/* One line for each source read without a signature check. */
static void
warn_trusted (Lockfile *lock)
{
  for (guint i = 0; i < lock->sources->len; i++)
    {
      LockSource *s = lock->sources->pdata[i];
      if (s->trusted)
        g_printerr ("apt2ostree lock: warning: source \"%s\" is trusted=yes: its Release and "
                    "packages are not checked against any signing key\n", s->name);
    }
}

gboolean
cmd_lock (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
          GError **error)
{
  g_auto(LockOptions) o = { NULL };
  if (!parse_options (inv, &o, &argc, &argv, error))
    return FALSE;
  g_auto(LockInput) in = { { NULL } };
  if (o.update ? !input_from_lockfile (inv, &o, argv[1], &in, error)
               : !input_from_package_list (inv, &o, argv[1], &in, error))
    return FALSE;
  g_autoptr(SourcesList) sources = lock_load_sources (in.sources_path, in.req.suite,
                                                     (const char *const *) in.req.components,
                                                     in.previous, in.req.architecture, o.mirrors,
                                                     error);
  if (sources == NULL || !cmd_check_network (inv, &sources, 1, o.verbose, error))
    return FALSE;

  const char *cache = o.cache != NULL ? o.cache : "build/cache/lists";
  g_autoptr(GPtrArray) debs_dirs = debs_dirs_from_options (inv, &o, error);
  if (debs_dirs == NULL)
    return FALSE;
  g_autofree char *base_dir = g_path_get_dirname (argv[1]);
  g_autofree char *index_dir = g_build_filename (cache, "local", NULL);
  g_auto(LockLocal) local = { NULL };
  if (!local_debs_to_lock (in.previous, debs_dirs, in.packages, base_dir, in.req.architecture,
                           o.output, index_dir, &local, error))
    return FALSE;

  g_autofree char *sources_file = request_sources_file (&o, &in);
  LockRequest effective = in.req;
  effective.sources_file = sources_file;
  g_autoptr(Lockfile) lock = lock_resolve (&effective, sources, &local, cache, in.previous,
                                           cancellable, error);
  if (lock == NULL)
    return FALSE;
  warn_trusted (lock);
  g_autoptr(Lockfile) replaced = in.previous == NULL ? replaced_lockfile (o.output, lock) : NULL;
  if (!lockfile_write (lock, o.output, error))
    return FALSE;
  g_print ("%s: %u packages from %u sources\n", o.output, lock->packages->len,
           lock->sources->len);
  if (in.previous != NULL || replaced != NULL)
    print_changes (in.previous != NULL ? in.previous : replaced, lock);
  return TRUE;
}
