/* sysusers.c — an image's users and groups as a sysusers.d file; see
 * sysusers.h. */
#include "config.h"

#include <string.h>

#include "base/util.h"
#include "image/sysusers.h"

/* S as one quoted sysusers.d field: sysusers unquotes, reads C escapes and
 * expands '%' specifiers.  An empty S is "-" (unset).  A control
 * character is refused. */
static gboolean
append_field (GString *out, const char *s, GError **error)
{
  if (*s == '\0')
    {
      g_string_append (out, " -");
      return TRUE;
    }
  g_string_append (out, " \"");
  for (const char *p = s; *p != '\0'; p++)
    {
      guchar c = (guchar) *p;
      if (c < 0x20 || c == 0x7f)
        return util_fail (error, "a control character");
      if (c == '"' || c == '\\')
        g_string_append_c (out, '\\');
      else if (c == '%')
        g_string_append_c (out, '%');
      g_string_append_c (out, (char) c);
    }
  g_string_append_c (out, '"');
  return TRUE;
}

/* A whole number, as /etc/passwd and /etc/group hold uids and gids. */
static gboolean
is_id (const char *s)
{
  if (*s == '\0' || strlen (s) > 10)
    return FALSE;
  for (const char *p = s; *p != '\0'; p++)
    if (!g_ascii_isdigit (*p))
      return FALSE;
  return TRUE;
}

/* One /etc/group line: "g NAME GID", and "m USER NAME" per member into
 * MEMBERS (after every user, which they need). */
static gboolean
group_line (GString *out, GString *members, const char *line, GError **error)
{
  g_auto(GStrv) f = g_strsplit (line, ":", -1);
  if (g_strv_length (f) != 4 || *f[0] == '\0' || !is_id (f[2]))
    return util_fail (error, "expected NAME:PASSWORD:GID:MEMBERS");
  g_string_append (out, "g");
  if (!append_field (out, f[0], error) || !append_field (out, f[2], error))
    return FALSE;
  g_string_append_c (out, '\n');
  g_auto(GStrv) users = g_strsplit (f[3], ",", -1);
  for (guint i = 0; users[i] != NULL; i++)
    {
      if (*users[i] == '\0')
        continue;
      g_string_append (members, "m");
      if (!append_field (members, users[i], error) || !append_field (members, f[0], error))
        return FALSE;
      g_string_append_c (members, '\n');
    }
  return TRUE;
}

/* One /etc/passwd line: "u NAME UID:GID GECOS HOME SHELL". */
static gboolean
user_line (GString *out, const char *line, GError **error)
{
  g_auto(GStrv) f = g_strsplit (line, ":", -1);
  if (g_strv_length (f) != 7 || *f[0] == '\0' || !is_id (f[2]) || !is_id (f[3]))
    return util_fail (error, "expected NAME:PASSWORD:UID:GID:GECOS:HOME:SHELL");
  g_autofree char *ids = g_strconcat (f[2], ":", f[3], NULL);
  g_string_append (out, "u");
  if (!append_field (out, f[0], error) || !append_field (out, ids, error)
      || !append_field (out, f[4], error) || !append_field (out, f[5], error)
      || !append_field (out, f[6], error))
    return FALSE;
  g_string_append_c (out, '\n');
  return TRUE;
}

/* Each line of TEXT (the file NAME, /etc/group when IS_GROUP, else
 * /etc/passwd) into OUT and MEMBERS; an error names the file and the
 * line. */
static gboolean
each_line (const char *text, const char *name, GString *out, GString *members,
           gboolean is_group, GError **error)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (*lines[i] == '\0')
        continue;
      g_autoptr(GError) local = NULL;
      gboolean ok = is_group ? group_line (out, members, lines[i], &local)
                             : user_line (out, lines[i], &local);
      if (!ok)
        return util_fail (error, "%s, line %u: %s", name, i + 1, local->message);
    }
  return TRUE;
}

char *
sysusers_from_accounts (const char *passwd, const char *passwd_name, const char *group,
                        const char *group_name, GError **error)
{
  g_autoptr(GString) out = g_string_new (
    "# Made by \"apt2ostree deployable\" from the image's /etc/passwd and\n"
    "# /etc/group: systemd-sysusers adds what a device's /etc lacks (a device\n"
    "# that changed them keeps its own copies through an upgrade).\n");
  g_autoptr(GString) members = g_string_new ("");
  if (!each_line (group, group_name, out, members, TRUE, error)
      || !each_line (passwd, passwd_name, out, members, FALSE, error))
    return NULL;
  g_string_append (out, members->str);
  return g_string_free (g_steal_pointer (&out), FALSE);
}
