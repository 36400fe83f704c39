/* apt2ostree lock — resolve a package list against signed apt sources into
 * a lockfile; "lock --update LOCKFILE" does it again from the request the
 * lockfile records. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "base/debpolicy.h"
#include "apt/lockfile.h"
#include "apt/lock.h"
#include "apt/sources.h"
#include "base/util.h"

/* The package list: one package a line ("name", "name=version",
 * "name:arch"), "#" comments and blank lines. */
static char **
read_package_list (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  g_autoptr(GError) local_error = NULL;
  if (!g_file_get_contents (path, &text, NULL, &local_error))
    return util_fail (error, "package list %s: %s", path, local_error->message), NULL;

  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *hash = strchr (lines[i], '#');
      if (hash != NULL)
        *hash = '\0';
      g_strstrip (lines[i]);
      if (*lines[i] == '\0')
        continue;
      if (strpbrk (lines[i], " \t") != NULL)
        return util_fail (error, "package list %s:%u: \"%s\": one package a line", path, i + 1,
                          lines[i]), NULL;
      const char *problem = debpolicy_request_problem (lines[i]);
      g_autofree char *shown = g_strescape (lines[i], NULL);
      if (problem != NULL)
        return util_fail (error, "package list %s:%u: \"%s\" %s; write NAME, NAME=VERSION or "
                          "NAME:ARCH", path, i + 1, shown, problem), NULL;
      g_strv_builder_add (b, lines[i]);
    }
  return g_strv_builder_end (b);
}

/* "dir/foo.txt" -> "dir/foo.lock.json" */
static char *
default_output (const char *packages_path)
{
  g_autofree char *base = g_strdup (packages_path);
  if (g_str_has_suffix (base, ".txt"))
    base[strlen (base) - 4] = '\0';
  return g_strconcat (base, ".lock.json", NULL);
}

static char *
host_architecture (GError **error)
{
  g_autofree char *out = NULL;
  int status;
  const char *argv[] = { "dpkg", "--print-architecture", NULL };
  g_autoptr(GError) local_error = NULL;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                     NULL, NULL, &out, NULL, &status, &local_error)
      || !g_spawn_check_wait_status (status, NULL))
    return util_fail (error, "cannot ask dpkg for the host architecture (%s); give --arch",
                      local_error != NULL ? local_error->message : "dpkg failed"), NULL;
  return g_strdup (g_strstrip (out));
}

/* What --update changed, one package a line, for the CI log. */
static void
print_changes (Lockfile *before, Lockfile *after)
{
  for (guint i = 0; i < after->packages->len; i++)
    {
      LockPackage *p = after->packages->pdata[i];
      LockPackage *old = lockfile_lookup_package (before, p->name, p->architecture);
      if (old == NULL)
        g_print ("  new      %s:%s %s\n", p->name, p->architecture, p->version);
      else if (!g_str_equal (old->version, p->version))
        g_print ("  changed  %s:%s %s -> %s\n", p->name, p->architecture, old->version, p->version);
      else if (!g_str_equal (old->sha256, p->sha256))
        g_print ("  rebuilt  %s:%s %s (same version, new sha256)\n", p->name, p->architecture,
                 p->version);
    }
  for (guint i = 0; i < before->packages->len; i++)
    {
      LockPackage *p = before->packages->pdata[i];
      if (lockfile_lookup_package (after, p->name, p->architecture) == NULL)
        g_print ("  removed  %s:%s %s\n", p->name, p->architecture, p->version);
    }
}

/* --mirror NAME=URI for lock: NAME must be one of the sources being locked
 * (for build, an unknown name adds a source; here it would be a typo). */
static gboolean
apply_mirrors (SourcesList *sources, char **mirrors, GError **error)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  for (guint i = 0; i < sources->sources->len; i++)
    g_strv_builder_add (b, ((Source *) sources->sources->pdata[i])->name);
  g_auto(GStrv) names = g_strv_builder_end (b);
  return sources_list_apply_mirrors (sources, (const char *const *) mirrors,
                                     (const char *const *) names, "the sources being locked", error);
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

gboolean
cmd_lock (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
          GError **error)
{
  g_autofree char *output = NULL;
  g_autofree char *sources_path = NULL;
  g_autofree char *arch = NULL;
  g_autofree char *variant = NULL;
  g_autofree char *cache = NULL;
  g_autofree char *merged_usr = NULL;
  g_autofree char *suite = NULL;
  g_auto(GStrv) mirrors = NULL;
  gboolean recommends = FALSE;
  gboolean update = FALSE;
  gboolean record_uris = FALSE;
  const GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      "the lockfile to write (default: PACKAGES.txt with .lock.json)", "LOCKFILE" },
    { "sources", 0, 0, G_OPTION_ARG_FILENAME, &sources_path,
      "apt sources, one-line or deb822 (default: the host's /etc/apt configuration)", "FILE" },
    { "arch", 0, 0, G_OPTION_ARG_STRING, &arch,
      "dpkg architecture of the image (default: the host's)", "ARCH" },
    { "variant", 0, 0, G_OPTION_ARG_STRING, &variant,
      "essential, apt, minbase, required, buildd, important, standard or custom "
      "(default: essential plus the listed packages)", "VARIANT" },
    { "recommends", 0, 0, G_OPTION_ARG_NONE, &recommends, "install Recommends too", NULL },
    { "cache", 0, 0, G_OPTION_ARG_FILENAME, &cache,
      "where verified indices are kept (default: build/cache/lists)", "DIR" },
    { "suite", 0, 0, G_OPTION_ARG_STRING, &suite,
      "lock another release of the configured archives: the sources named after their suite "
      "move to it (bookworm-security becomes trixie-security); recorded for build", "CODENAME" },
    { "merged-usr", 0, 0, G_OPTION_ARG_STRING, &merged_usr,
      "auto (Debian 12+, Ubuntu 20.10+), yes or no", "auto|yes|no" },
    { "mirror", 0, 0, G_OPTION_ARG_STRING_ARRAY, &mirrors,
      "fetch source NAME from URI instead (repeatable; recorded only with --record-uris)", "NAME=URI" },
    { "record-uris", 0, 0, G_OPTION_ARG_NONE, &record_uris,
      "write each source's URI into the lockfile (never do this for a committed lockfile "
      "that must not name hosts)", NULL },
    { "update", 0, 0, G_OPTION_ARG_NONE, &update,
      "re-resolve LOCKFILE from the request it records", NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "PACKAGES.txt | --update LOCKFILE",
                  "Resolve a package list against signed apt sources into a lockfile.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 2)
    return cmd_usage_error (inv, error, argc < 2 ? "expected %s" : "unexpected argument \"%s\"",
                            argc < 2 ? (update ? "LOCKFILE" : "PACKAGES.txt") : argv[2]);
  static const char *const merged_choices[] = { "auto", "yes", "no", NULL };
  if (!check_choice (inv, "--variant", variant, lock_variants (), error)
      || !check_choice (inv, "--merged-usr", merged_usr, merged_choices, error))
    return FALSE;

  g_autoptr(Lockfile) previous = NULL;
  LockRequest req = { NULL };
  g_auto(GStrv) packages = NULL;
  g_autofree char *sources_file_for_request = NULL;
  g_autofree char *resolved_sources_path = NULL;

  if (update)
    {
      if (arch != NULL || variant != NULL || recommends || merged_usr != NULL || record_uris
          || suite != NULL)
        return cmd_usage_error (inv, error, "--update takes the request from the lockfile; "
                                "only -o, --sources, --cache and --mirror go with it");
      previous = lockfile_load (argv[1], error);
      if (previous == NULL)
        return FALSE;
      req = previous->request;
      if (output == NULL)
        output = g_strdup (argv[1]);
      /* --sources replaces the recorded sources file (the same source
       * names must be in it): the way to update on another machine. */
      resolved_sources_path = sources_path != NULL ? g_strdup (sources_path)
                                                   : lockfile_request_sources_path (previous, argv[1]);
    }
  else
    {
      packages = read_package_list (argv[1], error);
      if (packages == NULL)
        return FALSE;
      if (output == NULL)
        output = default_output (argv[1]);
      if (arch == NULL && (arch = host_architecture (error)) == NULL)
        return FALSE;
      if (debpolicy_arch_problem (arch) != NULL)
        return cmd_usage_error (inv, error, "--arch \"%s\" %s", arch, debpolicy_arch_problem (arch));
      req.packages = packages;
      req.variant = variant;
      req.architecture = arch;
      req.recommends = recommends;
      req.merged_usr = merged_usr != NULL ? merged_usr : "auto";
      req.record_uris = record_uris;
      req.suite = suite;
      resolved_sources_path = g_strdup (sources_path);
    }

  g_autoptr(SourcesList) sources = sources_load (resolved_sources_path, error);
  if (sources == NULL)
    return FALSE;
  if (req.suite != NULL && !sources_list_set_suite (sources, req.suite, error))
    return FALSE;
  if (update)
    {
      if (!sources_list_select (sources, (const char *const *) req.sources, error))
        return FALSE;
    }
  else
    {
      sources_list_filter_arch (sources, req.architecture);
      if (sources->sources->len == 0)
        return util_fail (error, "no source carries architecture %s", req.architecture);
    }
  if (!apply_mirrors (sources, mirrors, error))
    return FALSE;

  /* The request stores a relative sources file relative to the lockfile, so
   * both can move together (a repository checkout); an absolute one stays
   * absolute. */
  const char *given = update && sources_path == NULL ? req.sources_file : sources_path;
  if (given != NULL)
    sources_file_for_request = g_path_is_absolute (given)
                                 ? g_strdup (given)
                                 : lockfile_relative_path (resolved_sources_path, output);
  LockRequest effective = req;
  effective.sources_file = sources_file_for_request;

  g_autoptr(Lockfile) lock = lock_resolve (&effective, sources,
                                           cache != NULL ? cache : "build/cache/lists",
                                           previous, cancellable, error);
  if (lock == NULL)
    return FALSE;
  for (guint i = 0; i < lock->sources->len; i++)
    {
      LockSource *s = lock->sources->pdata[i];
      if (s->trusted)
        g_printerr ("apt2ostree lock: warning: source \"%s\" is trusted=yes: its Release and "
                    "packages are not checked against any signing key\n", s->name);
    }
  if (!lockfile_write (lock, output, error))
    return FALSE;
  g_print ("%s: %u packages from %u sources\n", output, lock->packages->len, lock->sources->len);
  if (previous != NULL)
    print_changes (previous, lock);
  return TRUE;
}
