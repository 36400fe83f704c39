/* debpolicy.c — Debian's grammar for package names, versions and
 * architectures, checked as dpkg checks them. */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "base/debpolicy.h"

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

const char *
debpolicy_release_problem (const char *release)
{
  const char *problem = common_problem (release);
  if (problem != NULL)
    return problem;
  if (strspn (release, "abcdefghijklmnopqrstuvwxyz0123456789.") != strlen (release))
    return "contains a character other than lower-case letters, digits and \".\"";
  return NULL;
}

const char *
debpolicy_request_problem (const char *spec)
{
  const char *problem = common_problem (spec);
  if (problem != NULL)
    return problem;
  /* Split as the resolver does: "=" first, then ":" in what precedes it. */
  const char *eq = strchr (spec, '=');
  g_autofree char *name = eq != NULL ? g_strndup (spec, eq - spec) : g_strdup (spec);
  char *colon = strchr (name, ':');
  if (colon != NULL)
    {
      *colon = '\0';
      if (debpolicy_arch_problem (colon + 1) != NULL)
        return "has an architecture after \":\" that is not one (lower-case letters, digits and \"-\")";
    }
  if (debpolicy_name_problem (name) != NULL)
    return "does not start with a package name (a letter or digit, then letters, digits and \"+-._\")";
  if (eq != NULL && debpolicy_version_problem (eq + 1) != NULL)
    return "has a version after \"=\" that is not a Debian version";
  return NULL;
}

const char *
debpolicy_text_problem (const char *text)
{
  if (text == NULL)
    return "is missing";
  for (const char *p = text; *p != '\0'; p++)
    if ((unsigned char) *p < 0x20 || *p == 0x7f)
      return "contains a control character (a newline, a tab...)";
  return NULL;
}

const char *
debpolicy_archive_path_problem (const char *path)
{
  if (path == NULL || *path == '\0')
    return "is empty";
  if (strlen (path) > 4095)
    return "is longer than 4095 bytes";
  const char *problem = debpolicy_text_problem (path);
  if (problem != NULL)
    return problem;
  if (path[0] == '/')
    return "is not a relative path (it starts with \"/\")";
  g_auto(GStrv) parts = g_strsplit (path, "/", -1);
  for (char **part = parts; *part != NULL; part++)
    {
      if (**part == '\0' || g_str_equal (*part, "."))
        return "has an empty or \".\" path component";
      if (g_str_equal (*part, ".."))
        return "has a \"..\" path component";
      if (!all_allowed (*part, *part + strlen (*part), "+-._~%:=@,"))
        return "contains a character other than letters, digits, \"/\" and \"+-._~%:=@,\"";
    }
  return NULL;
}

static gboolean
is_hex (const char *s, gsize length, gboolean lower_only)
{
  if (s == NULL || strlen (s) != length)
    return FALSE;
  for (const char *p = s; *p != '\0'; p++)
    if (!g_ascii_isdigit (*p) && !(*p >= 'a' && *p <= 'f') && (lower_only || !(*p >= 'A' && *p <= 'F')))
      return FALSE;
  return TRUE;
}

const char *
debpolicy_sha256_problem (const char *hex)
{
  return is_hex (hex, 64, TRUE) ? NULL : "is not 64 lower-case hexadecimal digits";
}

const char *
debpolicy_fingerprint_problem (const char *hex)
{
  return is_hex (hex, 40, FALSE) || is_hex (hex, 64, FALSE)
           ? NULL : "is not an OpenPGP fingerprint (40 or 64 hexadecimal digits)";
}

char *
debpolicy_uri_problem (const char *uri)
{
  if (uri == NULL || *uri == '\0')
    return g_strdup ("is empty");
  for (const char *p = uri; *p != '\0'; p++)
    if ((unsigned char) *p <= 0x20 || *p == 0x7f)
      return g_strdup ("contains a space or a control character");
  static const char *const supported[] = { "http://", "https://", "file://", NULL };
  for (const char *const *s = supported; *s != NULL; s++)
    if (g_str_has_prefix (uri, *s))
      return uri[strlen (*s)] != '\0' ? NULL : g_strdup ("has nothing after the scheme");
  /* RFC 3986: a scheme is a letter, then letters, digits and "+-.". */
  gsize n = g_ascii_isalpha (uri[0]) ? strspn (uri, "abcdefghijklmnopqrstuvwxyz"
                                                    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.") : 0;
  g_autofree char *scheme = g_ascii_strdown (uri, n);
  if (n > 0 && uri[n] == ':' && g_strv_contains ((const char *const[]) { "http", "https", "file", NULL },
                                                 scheme))
    return g_strdup_printf ("has the scheme \"%s:\" without \"//\" (write %s://HOST/PATH, or "
                            "file:///PATH); it fetches " DEBPOLICY_URI_SCHEMES " URIs", scheme, scheme);
  if (n > 0 && uri[n] == ':')
    return g_strdup_printf ("has the scheme \"%.*s:\", which apt2ostree does not fetch; it fetches "
                            DEBPOLICY_URI_SCHEMES " URIs", (int) n, uri);
  return g_strdup ("is not a URI: it fetches " DEBPOLICY_URI_SCHEMES " URIs (a directory: file:///PATH)");
}

/* --- version order (policy 5.6.12) --- */

/* Where a non-digit character sorts: "~" before everything, even the end of
 * the string; letters before the other characters. */
static int
char_rank (char c)
{
  if (c == '~')
    return -1;
  if (c == '\0' || g_ascii_isdigit (c))
    return 0;
  if (g_ascii_isalpha (c))
    return (unsigned char) c;
  return (unsigned char) c + 256;
}

/* Upstream versions and revisions: alternating runs of non-digits (by
 * char_rank) and digits (by value). */
static int
compare_part (const char *a, const char *b)
{
  while (*a != '\0' || *b != '\0')
    {
      while ((*a != '\0' && !g_ascii_isdigit (*a)) || (*b != '\0' && !g_ascii_isdigit (*b)))
        {
          int ra = char_rank (*a), rb = char_rank (*b);
          if (ra != rb)
            return ra < rb ? -1 : 1;
          a++;
          b++;
        }
      while (*a == '0')
        a++;
      while (*b == '0')
        b++;
      int first_difference = 0;
      for (; g_ascii_isdigit (*a) && g_ascii_isdigit (*b); a++, b++)
        if (first_difference == 0 && *a != *b)
          first_difference = *a < *b ? -1 : 1;
      if (g_ascii_isdigit (*a))
        return 1;   /* more digits: a larger number */
      if (g_ascii_isdigit (*b))
        return -1;
      if (first_difference != 0)
        return first_difference;
    }
  return 0;
}

/* Split "[EPOCH:]UPSTREAM[-REVISION]"; a missing revision is "". */
static void
split_version (const char *version, guint64 *epoch, char **upstream, char **revision)
{
  const char *colon = strchr (version, ':');
  *epoch = colon != NULL ? g_ascii_strtoull (version, NULL, 10) : 0;
  const char *rest = colon != NULL ? colon + 1 : version;
  const char *hyphen = strrchr (rest, '-');
  *upstream = hyphen != NULL ? g_strndup (rest, hyphen - rest) : g_strdup (rest);
  *revision = g_strdup (hyphen != NULL ? hyphen + 1 : "");
}

int
debpolicy_version_compare (const char *a, const char *b)
{
  guint64 epoch_a, epoch_b;
  g_autofree char *up_a = NULL, *rev_a = NULL, *up_b = NULL, *rev_b = NULL;
  split_version (a, &epoch_a, &up_a, &rev_a);
  split_version (b, &epoch_b, &up_b, &rev_b);
  if (epoch_a != epoch_b)
    return epoch_a < epoch_b ? -1 : 1;
  int c = compare_part (up_a, up_b);
  return c != 0 ? c : compare_part (rev_a, rev_b);
}
