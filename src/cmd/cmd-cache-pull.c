/* apt2ostree cache-pull — refs pulled from a build cache when it has them
 * (see graph/buildcache.h); what it lacks is left for the build. */
#include "config.h"

#include <stdio.h>

#include "graph/buildcache.h"
#include "cmd/cmd.h"
#include "store/repo.h"

gboolean
cmd_cache_pull (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                GError **error)
{
  g_auto(BuildCache) cache = { NULL };
  const GOptionEntry entries[] = {
    BUILDCACHE_OPTION_ENTRIES (&cache),
    { NULL }
  };
  if (!cmd_parse (inv, "--cache-url URL REF...",
                  "Pull each REF the repository lacks from the OSTree archive repository at URL\n"
                  "(one that \"apt2ostree publish\" wrote), its objects checked as they arrive.\n"
                  "A ref the cache lacks, or a cache that fails, is one line on standard error\n"
                  "and no error: the build makes that tree itself.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (cache.url == NULL)
    return cmd_usage_error (inv, error, "--cache-url URL is required");
  if (argc < 2)
    return cmd_usage_error (inv, error, "expected at least one REF");
  for (int i = 1; i < argc; i++)
    if (!repo_check_ref_name (argv[i], error))
      return FALSE;
  if (!buildcache_check (&cache, error))
    return FALSE;

  g_autoptr(OstreeRepo) repo = cmd_open_repo (inv, cancellable, error);
  if (repo == NULL)
    return FALSE;
  for (int i = 1; i < argc; i++)
    {
      g_autofree char *have = repo_read_ref (repo, argv[i]);
      if (have != NULL)
        continue;
      g_autofree char *commit = buildcache_fetch_result (repo, &cache, argv[i], argv[i], argv[i],
                                                         cancellable);
      if (commit != NULL)
        printf ("%s %s\n", argv[i], commit);
    }
  return TRUE;
}
