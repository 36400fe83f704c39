/* deb822.c — Debian's control-file syntax; see deb822.h. */
#include "config.h"

#include <string.h>

#include "base/deb822.h"

static GHashTable *
stanza_new (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

GPtrArray *
deb822_parse (const char *text)
{
  g_autoptr(GPtrArray) stanzas = g_ptr_array_new_with_free_func ((GDestroyNotify) g_hash_table_unref);
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  GHashTable *current = NULL;
  char *field = NULL;  /* owned by CURRENT */
  for (char **l = lines; *l != NULL; l++)
    {
      const char *line = *l;
      if (line[0] == '#')
        continue;
      g_autofree char *stripped = g_strstrip (g_strdup (line));
      if (*stripped == '\0')
        {
          current = NULL;
          field = NULL;
          continue;
        }
      if ((line[0] == ' ' || line[0] == '\t') && field != NULL)
        {
          const char *old = g_hash_table_lookup (current, field);
          const char *more = g_str_equal (stripped, ".") ? "" : line + 1;
          g_hash_table_insert (current, g_strdup (field), g_strconcat (old, "\n", more, NULL));
          continue;
        }
      const char *colon = strchr (line, ':');
      if (colon == NULL || line[0] == ' ' || line[0] == '\t')
        continue;  /* not a field: ignored, as dpkg's parser would refuse it */
      if (current == NULL)
        {
          current = stanza_new ();
          g_ptr_array_add (stanzas, current);
        }
      g_autofree char *name = g_ascii_strdown (line, colon - line);
      char *value = g_strstrip (g_strdup (colon + 1));
      g_hash_table_insert (current, g_strdup (name), value);
      gpointer key = NULL;
      (void) g_hash_table_lookup_extended (current, name, &key, NULL);
      field = key;  /* insert() keeps the first key of a repeated field */
    }
  return g_steal_pointer (&stanzas);
}

char *
deb822_first_line (GHashTable *stanza, const char *field)
{
  const char *value = g_hash_table_lookup (stanza, field);
  if (value == NULL)
    return NULL;
  return g_strstrip (g_strndup (value, strcspn (value, "\n")));
}
