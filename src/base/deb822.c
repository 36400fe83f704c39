/* deb822.c — Debian's control-file syntax; see deb822.h. */
#include "config.h"

#include <string.h>

#include "base/deb822.h"
#include "base/util.h"

/* The stanza being read. */
typedef struct {
  Deb822Flags flags;
  GHashTable *fields;  /* NULL between stanzas */
  guint line;          /* where FIELDS' first field is */
  char *field;         /* the field being read (lower-cased), or NULL */
  GString *value;      /* its value so far */
} Reader;

static void
reader_clear (Reader *r)
{
  g_clear_pointer (&r->fields, g_hash_table_unref);
  g_clear_pointer (&r->field, g_free);
  if (r->value != NULL)
    g_string_free (g_steal_pointer (&r->value), TRUE);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Reader, reader_clear)

/* The field being read goes into the stanza. */
static void
end_field (Reader *r)
{
  if (r->field == NULL)
    return;
  g_hash_table_replace (r->fields, g_steal_pointer (&r->field),
                        g_string_free (g_steal_pointer (&r->value), FALSE));
}

static gboolean
end_stanza (Reader *r, Deb822StanzaFunc func, gpointer user_data, GError **error)
{
  if (r->fields == NULL)
    return TRUE;
  end_field (r);
  g_autoptr(GHashTable) fields = g_steal_pointer (&r->fields);
  return func (fields, r->line, user_data, error);
}

/* LINE[0..LEN) without white space at either end, as [*START, *START+*LEN). */
static void
trim (const char *line, gsize len, const char **start, gsize *trimmed_len)
{
  while (len > 0 && g_ascii_isspace (line[0]))
    line++, len--;
  while (len > 0 && g_ascii_isspace (line[len - 1]))
    len--;
  *start = line;
  *trimmed_len = len;
}

static void
continue_field (Reader *r, const char *line, gsize len)
{
  const char *t;
  gsize tlen;
  trim (line, len, &t, &tlen);
  gboolean dot = tlen == 1 && t[0] == '.';
  if (r->flags & DEB822_TRIM_CONTINUATIONS)
    {
      if (r->value->len > 0)
        g_string_append_c (r->value, '\n');
      if (!dot)
        g_string_append_len (r->value, t, tlen);
      return;
    }
  g_string_append_c (r->value, '\n');
  if (!dot)
    g_string_append_len (r->value, line + 1, len - 1);
}

static void
start_field (Reader *r, const char *line, const char *colon, gsize len, guint lineno)
{
  end_field (r);
  if (r->fields == NULL)
    {
      r->fields = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      r->line = lineno;
    }
  r->field = g_strstrip (g_ascii_strdown (line, colon - line));
  const char *v;
  gsize vlen;
  trim (colon + 1, line + len - (colon + 1), &v, &vlen);
  r->value = g_string_new_len (v, vlen);
}

/* One line of the text (LINE[0..LEN), no "\n"), the LINENO-th. */
static gboolean
read_line (Reader *r, const char *line, gsize len, guint lineno, const char *origin,
           GError **error)
{
  gboolean indented = len > 0 && (line[0] == ' ' || line[0] == '\t');
  if (indented)
    {
      if (r->field != NULL)
        continue_field (r, line, len);
      else if (r->flags & DEB822_STRICT)
        return util_fail (error, "%s:%u: continuation line without a field", origin, lineno);
      return TRUE;
    }
  const char *colon = memchr (line, ':', len);
  if (colon != NULL)
    start_field (r, line, colon, len, lineno);
  else if (r->flags & DEB822_STRICT)
    return util_fail (error, "%s:%u: expected \"Field: value\", got \"%.*s\"", origin, lineno,
                      (int) len, line);
  /* (else not a field: skipped, as dpkg's parser would refuse it) */
  return TRUE;
}

gboolean
deb822_read (const char *text, const char *origin, Deb822Flags flags,
             Deb822StanzaFunc func, gpointer user_data, GError **error)
{
  g_auto(Reader) r = { .flags = flags };
  guint lineno = 0;
  for (const char *line = text; line != NULL; )
    {
      const char *nl = strchr (line, '\n');
      gsize len = nl != NULL ? (gsize) (nl - line) : strlen (line);
      lineno++;
      const char *t;
      gsize tlen;
      trim (line, len, &t, &tlen);
      if (tlen == 0)
        {
          if (!end_stanza (&r, func, user_data, error))
            return FALSE;
        }
      else if (line[0] != '#' && !read_line (&r, line, len, lineno, origin, error))
        return FALSE;
      line = nl != NULL ? nl + 1 : NULL;
    }
  return end_stanza (&r, func, user_data, error);
}

static gboolean
collect (GHashTable *fields, guint line, gpointer user_data, GError **error)
{
  g_ptr_array_add (user_data, g_hash_table_ref (fields));
  return TRUE;
}

GPtrArray *
deb822_parse (const char *text)
{
  GPtrArray *stanzas = g_ptr_array_new_with_free_func ((GDestroyNotify) g_hash_table_unref);
  (void) deb822_read (text, NULL, DEB822_NONE, collect, stanzas, NULL);
  return stanzas;
}

char *
deb822_first_line (GHashTable *stanza, const char *field)
{
  const char *value = g_hash_table_lookup (stanza, field);
  if (value == NULL)
    return NULL;
  return g_strstrip (g_strndup (value, strcspn (value, "\n")));
}
