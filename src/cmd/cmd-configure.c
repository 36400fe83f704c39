/* apt2ostree configure — stage 2: dpkg --configure -a over a stage-1 tree. */
#include "config.h"

#include <stdio.h>

#include "base/util.h"
#include "graph/buildcache.h"
#include "graph/incremental.h"
#include "cmd/cmd.h"
#include "store/repo.h"
#include "sandbox/stage2.h"

/* Stage 2 of IN from CACHE: its key (*OUT_CACHE_REF) is what the result
 * depends on: IN's commit, the hooks, SOURCE_DATE_EPOCH.  *OUT_COMMIT is
 * the pulled result, or NULL on a miss. */
static gboolean
configure_from_cache (OstreeRepo *repo, const BuildCache *cache, const RepoRev *in,
                      const char *const *hooks, const char *out_ref, char **out_cache_ref,
                      char **out_commit, GCancellable *cancellable, GError **error)
{
  *out_cache_ref = buildcache_configured_ref (in->commit, hooks, error);
  if (*out_cache_ref == NULL)
    return FALSE;
  g_autofree char *what = g_strconcat ("stage 2 (", out_ref, ")", NULL);
  *out_commit = buildcache_fetch_result (repo, cache, *out_cache_ref, out_ref, what, cancellable);
  return TRUE;
}

gboolean
cmd_configure (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
               GError **error)
{
  g_autofree char *out_ref = NULL;
  g_auto(GStrv) hooks = NULL;
  gboolean verbose = FALSE, incremental = FALSE, keep = FALSE;
  g_autofree char *lock_path = NULL, *debs_dir = NULL;
  g_auto(BuildCache) cache = { NULL };
  g_autofree char *timeout = NULL, *memory_limit = NULL, *max_processes = NULL;
  const GOptionEntry entries[] = {
    { "ref", 0, 0, G_OPTION_ARG_STRING, &out_ref, "Write the configured image to this ref", "OUT" },
    { "configure-hook", 0, 0, G_OPTION_ARG_STRING_ARRAY, &hooks,
      "A shell command run in the image just before dpkg --configure -a", "COMMAND" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose,
      "Show dpkg's output as it runs (or $APT2OSTREE_VERBOSE=1)", NULL },
    { "keep-on-failure", 0, 0, G_OPTION_ARG_NONE, &keep,
      "When it fails, keep the scratch directory (the tree, upper/, output.log; or "
      "$APT2OSTREE_KEEP_ON_FAILURE=1)", NULL },
    { "incremental", 0, 0, G_OPTION_ARG_NONE, &incremental,
      "Start from the image OUT holds, as apt-get would (not for release builds)", NULL },
    { "lockfile", 0, 0, G_OPTION_ARG_FILENAME, &lock_path,
      "--incremental: the lockfile IN was made from", "LOCKFILE" },
    { "debs", 0, 0, G_OPTION_ARG_FILENAME, &debs_dir,
      "--incremental: the download cache of its .debs (default: build/cache/debs)", "DIR" },
    BUILDCACHE_OPTION_ENTRIES (&cache),
    CMDLINE_LIMIT_OPTION_ENTRIES (timeout, memory_limit, max_processes),
    { NULL }
  };
  if (!cmd_parse (inv, "--ref OUT IN",
                  "Configure the stage-1 tree IN (from \"apt2ostree stage1\") in a bubblewrap\n"
                  "sandbox: base-passwd's users, the preinst scripts, the trigger database,\n"
                  "dpkg --configure -a with no services started, then the build residue cleaned.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 2)
    return cmd_usage_error (inv, error, "expected one IN");
  if (out_ref == NULL)
    return cmd_usage_error (inv, error, "--ref OUT is required");
  RunLimits limits;
  if (!repo_check_ref_name (out_ref, error) || !buildcache_check (&cache, error)
      || !runlimits_init (&limits, timeout, memory_limit, max_processes, error))
    return FALSE;
  if (incremental && lock_path == NULL)
    return cmd_usage_error (inv, error, "--incremental needs --lockfile LOCKFILE");
  /* An incremental image is never a cache's answer for its key. */
  if (incremental && cache.url != NULL)
    return cmd_usage_error (inv, error, "--incremental and --cache-url do not go together: the "
                            "cache holds from-scratch images only");

  g_autoptr(OstreeRepo) repo = NULL;
  g_autoptr(RepoRev) in = cmd_open_rev (inv, argv[1], &repo, cancellable, error);
  if (in == NULL)
    return FALSE;

  g_autofree char *cache_ref = NULL;
  if (cache.url != NULL)
    {
      g_autofree char *commit = NULL;
      if (!configure_from_cache (repo, &cache, in, (const char *const *) hooks, out_ref, &cache_ref,
                                 &commit, cancellable, error))
        return FALSE;
      if (commit != NULL)
        {
          printf ("%s\n", commit);
          return TRUE;
        }
    }

  Stage2Options options = {
    .in = argv[1],
    .out_ref = out_ref,
    .hooks = (const char *const *) hooks,
    .verbose = verbose || util_env_flag ("APT2OSTREE_VERBOSE"),
    .keep_on_failure = keep,
    .limits = &limits,
  };
  g_autofree char *commit = NULL;
  g_autofree char *fallback = NULL;
  if (incremental
      && !incremental_configure (repo, &options, lock_path,
                                 debs_dir != NULL ? debs_dir : "build/cache/debs", &fallback,
                                 &commit, cancellable, error))
    return FALSE;
  if (fallback != NULL)
    g_printerr ("apt2ostree configure --incremental %s: %s; configuring from scratch\n",
                out_ref, fallback);
  if (commit == NULL && !stage2_configure (repo, &options, &commit, cancellable, error))
    return FALSE;
  /* The keyed ref is written with or without a cache (never for an
   * incremental image), so that publishing the repository offers this
   * stage 2 to a machine that has one. */
  if (cache_ref == NULL && !incremental
      && (cache_ref = buildcache_configured_ref (in->commit, (const char *const *) hooks,
                                                 error)) == NULL)
    return FALSE;
  if (cache_ref != NULL && !buildcache_record_result (repo, out_ref, cache_ref, cancellable, error))
    return FALSE;
  printf ("%s\n", commit);
  return TRUE;
}
