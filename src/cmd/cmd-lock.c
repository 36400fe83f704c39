/* apt2ostree lock — resolve a package list against signed apt sources into
 * a lockfile; "lock --update LOCKFILE" does it again from the request the
 * lockfile records. */
#include "config.h"

#include <string.h>

#include "cmd/cmd.h"
#include "graph/lockjob.h"
#include "base/pathfilter.h"
#include "apt/lockinput.h"

/* The command line: the lock's arguments, and what only the command
 * uses. */
typedef struct {
  LockArgs args;
  char **path_exclude;
  char **path_include;
  gboolean verbose;
} LockOptions;

static void
lock_options_clear (LockOptions *o)
{
  lock_args_clear (&o->args);
  g_strfreev (o->path_exclude);
  g_strfreev (o->path_include);
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
  o->args.path_filters = g_strv_builder_end (rules);
  return TRUE;
}

static gboolean
parse_options (CmdInvocation *inv, LockOptions *o, int *argc, char ***argv, GError **error)
{
  g_auto(GStrv) given = g_new0 (char *, *argc + 1);
  for (int i = 0; i < *argc; i++)
    given[i] = g_strdup ((*argv)[i]);
  const GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o->args.output,
      "the lockfile to write (default: PACKAGES.txt with .lock.json)", "LOCKFILE" },
    { "sources", 0, 0, G_OPTION_ARG_FILENAME, &o->args.sources_path,
      "apt sources, one-line or deb822 (default: the host's /etc/apt configuration)", "FILE" },
    { "arch", 0, 0, G_OPTION_ARG_STRING, &o->args.arch,
      "dpkg architecture of the image (default: the host's)", "ARCH" },
    { "variant", 0, 0, G_OPTION_ARG_STRING, &o->args.variant,
      "essential, apt, minbase, required, buildd, important, standard or custom "
      "(default: essential plus the listed packages)", "VARIANT" },
    { "recommends", 0, 0, G_OPTION_ARG_NONE, &o->args.recommends, "install Recommends too", NULL },
    { "cache", 0, 0, G_OPTION_ARG_FILENAME, &o->args.cache,
      "where verified indices are kept (default: build/cache/lists)", "DIR" },
    { "suite", 0, 0, G_OPTION_ARG_STRING, &o->args.suite,
      "lock another release of the configured archives: the sources named after their suite "
      "move to it (bookworm-security becomes trixie-security); recorded for build", "CODENAME" },
    { "components", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->args.components,
      "the components of every source, comma-separated, instead of the sources' own "
      "(as mmdebstrap's; recorded for --update)", "COMP[,COMP...]" },
    { "merged-usr", 0, 0, G_OPTION_ARG_STRING, &o->args.merged_usr,
      "auto (Debian 12+, Ubuntu 20.10+), yes or no", "auto|yes|no" },
    { "mirror", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->args.mirrors,
      "fetch source NAME from URI instead (repeatable; recorded only with --record-uris)", "NAME=URI" },
    { "debs", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->args.debs,
      "a directory of .debs with no index, resolved with the sources (repeatable); its name is "
      "the directory's, its pin priority 500, unless given as in a sources line: "
      "--debs '[name=l4t pin-priority=600] DIR'", "[[OPTIONS]] DIR" },
    { "record-uris", 0, 0, G_OPTION_ARG_NONE, &o->args.record_uris,
      "write each source's URI into the lockfile (never do this for a committed lockfile "
      "that must not name hosts)", NULL },
    { "update", 0, 0, G_OPTION_ARG_NONE, &o->args.update,
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
  if (*argc != 2)
    return cmd_usage_error (inv, error, *argc < 2 ? "expected %s" : "unexpected argument \"%s\"",
                            *argc < 2 ? (o->args.update ? "LOCKFILE" : "PACKAGES.txt") : (*argv)[2]);
  return TRUE;
}

gboolean
cmd_lock (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
          GError **error)
{
  g_auto(LockOptions) o = { { NULL } };
  return parse_options (inv, &o, &argc, &argv, error)
         && lockjob_run (inv, &o.args, argv[1], o.verbose, cancellable, error);
}
