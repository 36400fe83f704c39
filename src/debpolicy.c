/* debpolicy.c — Debian's grammar for package names, versions and
 * architectures, checked as dpkg checks them. */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "debpolicy.h"

/* The problems every field shares: empty, too long, or bytes that could
 * end a line or a word wherever the value is written. */
static const char *
common_problem (const char *value)
{
  if (value == NULL || *value == '\0')
    return "is empty";
  if (strlen (value) > 255)
    return "is longer than 255 bytes";
  for (const char *p = value; *p != '\0'; p++)
    if ((unsigned char) *p < 0x20 || *p == 0x7f)
      return "contains a control character";
    else if (*p == ' ')
      return "contains a space";
    else if ((unsigned char) *p >= 0x80)
      return "contains a byte that is not ASCII";
  return NULL;
}

const char *
debpolicy_name_problem (const char *name)
{
  const char *problem = common_problem (name);
  if (problem != NULL)
    return problem;
  if (!g_ascii_isalnum (name[0]))
    return "does not start with a letter or digit";
  for (const char *p = name; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && strchr ("+-._", *p) == NULL)
      return "contains a character other than letters, digits and \"+-._\"";
  return NULL;
}

/* Are the bytes from START to END all alphanumerics or in ALSO? */
static gboolean
all_allowed (const char *start, const char *end, const char *also)
{
  for (const char *p = start; p < end; p++)
    if (!g_ascii_isalnum (*p) && strchr (also, *p) == NULL)
      return FALSE;
  return TRUE;
}

const char *
debpolicy_version_problem (const char *version)
{
  const char *problem = common_problem (version);
  if (problem != NULL)
    return problem;
  const char *upstream = version;
  const char *colon = strchr (version, ':');
  if (colon != NULL)
    {
      if (colon == version || strspn (version, "0123456789") != (size_t) (colon - version))
        return "has an epoch that is not a number";
      upstream = colon + 1;
    }
  const char *hyphen = strrchr (upstream, '-');
  const char *end = hyphen != NULL ? hyphen : upstream + strlen (upstream);
  if (end == upstream)
    return "has an empty upstream version";
  if (!all_allowed (upstream, end, colon != NULL ? ".+~-:" : ".+~-"))
    return "contains a character other than letters, digits and \".+~-:\"";
  if (hyphen != NULL && (hyphen[1] == '\0' || !all_allowed (hyphen + 1, hyphen + strlen (hyphen), ".+~")))
    return "has a revision that is empty or contains a character other than letters, digits "
           "and \".+~\"";
  return NULL;
}

const char *
debpolicy_arch_problem (const char *arch)
{
  const char *problem = common_problem (arch);
  if (problem != NULL)
    return problem;
  if (!g_ascii_isalnum (arch[0]))
    return "does not start with a letter or digit";
  for (const char *p = arch; *p != '\0'; p++)
    if (!(g_ascii_islower (*p) || g_ascii_isdigit (*p) || *p == '-'))
      return "contains a character other than lower-case letters, digits and \"-\"";
  return NULL;
}
