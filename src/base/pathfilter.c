/* pathfilter.c — dpkg's path-exclude/path-include rules: their grammar,
 * the decision for one path, the dpkg.cfg.d text. */
#include "config.h"

#include <fnmatch.h>
#include <string.h>

#include "base/debpolicy.h"
#include "base/pathfilter.h"

const char *
pathfilter_glob_problem (const char *glob)
{
  if (*glob == '\0')
    return "is empty";
  if (*glob != '/')
    return "does not start with \"/\" (dpkg matches absolute paths such as /usr/share/doc/*)";
  return debpolicy_text_problem (glob);
}

/* The glob of RULE, or NULL when it is neither kind; *OUT_INCLUDE says which. */
static const char *
rule_glob (const char *rule, gboolean *out_include)
{
  *out_include = g_str_has_prefix (rule, PATHFILTER_INCLUDE);
  if (*out_include)
    return rule + strlen (PATHFILTER_INCLUDE);
  if (g_str_has_prefix (rule, PATHFILTER_EXCLUDE))
    return rule + strlen (PATHFILTER_EXCLUDE);
  return NULL;
}

const char *
pathfilter_rule_problem (const char *rule)
{
  gboolean include;
  const char *glob = rule_glob (rule, &include);
  if (glob == NULL)
    return "is not \"path-exclude=GLOB\" or \"path-include=GLOB\"";
  return pathfilter_glob_problem (glob);
}

gboolean
pathfilter_may_reinclude (const char *const *rules, const char *path)
{
  for (const char *const *r = rules; r != NULL && *r != NULL; r++)
    {
      gboolean include;
      const char *glob = rule_glob (*r, &include);
      if (glob == NULL || !include)
        continue;
      size_t fixed = strcspn (glob, "*?[\\");
      while (fixed > 0 && glob[fixed - 1] == '/')
        fixed--;
      if (strncmp (path, glob, fixed) == 0)
        return TRUE;
    }
  return FALSE;
}

gboolean
pathfilter_excludes (const char *const *rules, const char *path, gboolean dir_or_symlink)
{
  gboolean excluded = FALSE;
  for (const char *const *r = rules; r != NULL && *r != NULL; r++)
    {
      gboolean include;
      const char *glob = rule_glob (*r, &include);
      if (glob != NULL && fnmatch (glob, path, 0) == 0)
        excluded = !include;
    }
  if (excluded && dir_or_symlink && pathfilter_may_reinclude (rules, path))
    return FALSE;
  return excluded;
}

char *
pathfilter_dpkg_cfg (const char *const *rules)
{
  GString *text = g_string_new ("# Written by apt2ostree from the lockfile's path filters: dpkg "
                                "leaves these paths\n# out when it unpacks a package, as it did "
                                "when the image was built.\n");
  for (const char *const *r = rules; r != NULL && *r != NULL; r++)
    g_string_append_printf (text, "%s\n", *r);
  return g_string_free (text, FALSE);
}
