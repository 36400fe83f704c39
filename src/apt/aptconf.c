/* aptconf.c — the host's apt configuration, parsed as apt parses it; see
 * aptconf.h. */
#include "config.h"

#include <string.h>

#include "apt/aptconf.h"
#include "apt/sources.h"
#include "base/util.h"

/* #include inside #include...: apt stops at a depth as well. */
#define CONF_MAX_DEPTH 16

static void
conf_item_free (AptConfItem *item)
{
  g_free (item->key);
  g_free (item->value);
  g_free (item->origin);
  g_free (item);
}

/* The reading of one file: the statement being gathered up to its ";",
 * "{" or "}", and the scopes open around it. */
typedef struct {
  GHashTable *items;   /* lower-case key -> AptConfItem (apt's keys ignore case) */
  const char *path;
  guint line;
  guint stmt_line;     /* where the statement began */
  GString *stmt;
  GPtrArray *scopes;   /* char*: the tags of the open "{" */
  guint depth;
} ConfParser;

static gboolean conf_read_path (GHashTable *items, const char *path, guint depth, GError **error);

static gboolean
conf_syntax_error (ConfParser *cp, const char *what, GError **error)
{
  return util_fail (error, "%s:%u: syntax error: %s (apt.conf(5) syntax: Acquire::http::Proxy "
                    "\"URL\"; or Acquire { http { Proxy \"URL\"; }; };)", cp->path, cp->stmt_line,
                    what);
}

/* The full key of TAG in the open scopes. */
static char *
conf_full_key (ConfParser *cp, const char *tag)
{
  g_autoptr(GString) key = g_string_new ("");
  for (guint i = 0; i < cp->scopes->len; i++)
    g_string_append_printf (key, "%s::", (const char *) cp->scopes->pdata[i]);
  g_string_append (key, tag);
  return g_string_free (g_steal_pointer (&key), FALSE);
}

/* TEXT without its quotes, when it is one quoted string. */
static char *
conf_unquote (const char *text)
{
  gsize len = strlen (text);
  if (len >= 2 && text[0] == '"' && text[len - 1] == '"')
    return g_strndup (text + 1, len - 2);
  return g_strdup (text);
}

/* "#clear TAG": TAG and everything under it is gone. */
static void
conf_clear (ConfParser *cp, const char *tag)
{
  g_autofree char *key = conf_full_key (cp, tag);
  g_autofree char *lower = g_ascii_strdown (key, -1);
  g_autofree char *below = g_strconcat (lower, "::", NULL);
  GHashTableIter iter;
  const char *k;
  g_hash_table_iter_init (&iter, cp->items);
  while (g_hash_table_iter_next (&iter, (gpointer *) &k, NULL))
    if (g_str_equal (k, lower) || g_str_has_prefix (k, below))
      g_hash_table_iter_remove (&iter);
}

/* "#clear TAG" or "#include PATH" (a directory when it ends in "/"). */
static gboolean
conf_directive (ConfParser *cp, const char *stmt, GError **error)
{
  const char *space = strpbrk (stmt, " \t");
  g_autofree char *arg = conf_unquote (space != NULL ? g_strstrip (g_strdup (space)) : "");
  if (g_str_has_prefix (stmt, "#clear") && *arg != '\0')
    {
      conf_clear (cp, arg);
      return TRUE;
    }
  if (!g_str_has_prefix (stmt, "#include") || *arg == '\0')
    return conf_syntax_error (cp, "#clear and #include take an argument", error);
  if (cp->depth >= CONF_MAX_DEPTH)
    return conf_syntax_error (cp, "#include nested too deeply", error);
  return conf_read_path (cp->items, arg, cp->depth + 1, error);
}

/* One statement, up to its ";": TAG "VALUE", TAG, a list's "VALUE"
 * (nothing we read), or a directive. */
static gboolean
conf_statement (ConfParser *cp, GError **error)
{
  g_autofree char *stmt = g_strstrip (g_strdup (cp->stmt->str));
  g_string_truncate (cp->stmt, 0);
  if (*stmt == '\0' || *stmt == '"')
    return TRUE;
  if (*stmt == '#')
    return conf_directive (cp, stmt, error);

  gsize tag_len = strcspn (stmt, " \t");
  g_autofree char *tag = g_strndup (stmt, tag_len);
  g_autofree char *rest = g_strstrip (g_strdup (stmt + tag_len));
  if (rest[0] == '"' && (strchr (rest + 1, '"') == NULL || strchr (rest + 1, '"')[1] != '\0'))
    {
      g_autofree char *what = g_strdup_printf ("expected \";\" after the value of %s", tag);
      return conf_syntax_error (cp, what, error);
    }
  AptConfItem *item = g_new0 (AptConfItem, 1);
  item->key = conf_full_key (cp, tag);
  item->value = conf_unquote (rest);
  item->origin = g_strdup_printf ("%s:%u", cp->path, cp->stmt_line);
  g_hash_table_replace (cp->items, g_ascii_strdown (item->key, -1), item);
  return TRUE;
}

static gboolean
conf_open_scope (ConfParser *cp, GError **error)
{
  g_autofree char *stmt = g_strstrip (g_strdup (cp->stmt->str));
  g_string_truncate (cp->stmt, 0);
  if (*stmt == '#')
    return conf_syntax_error (cp, "a directive cannot open a scope", error);
  stmt[strcspn (stmt, " \t")] = '\0';   /* (a value before "{" is apt's to ignore too) */
  g_ptr_array_add (cp->scopes, conf_unquote (stmt));
  return TRUE;
}

static gboolean
conf_close_scope (ConfParser *cp, GError **error)
{
  if (!conf_statement (cp, error))
    return FALSE;
  if (cp->scopes->len == 0)
    return conf_syntax_error (cp, "\"}\" without \"{\"", error);
  g_ptr_array_remove_index (cp->scopes, cp->scopes->len - 1);
  return TRUE;
}

/* Where a "/ *" comment that starts at P ends (past it), counting its
 * lines, or NULL when it is never closed. */
static const char *
conf_skip_block_comment (ConfParser *cp, const char *p)
{
  for (p += 2; *p != '\0'; p++)
    {
      if (p[0] == '*' && p[1] == '/')
        return p + 2;
      if (*p == '\n')
        cp->line++;
    }
  return NULL;
}

static gboolean
conf_stmt_is_blank (ConfParser *cp)
{
  return strspn (cp->stmt->str, " \t") == cp->stmt->len;
}

/* A "#" that starts a statement is a directive when a word follows it that
 * apt knows, else a comment to the end of the line. */
static gboolean
conf_is_directive (ConfParser *cp, const char *p)
{
  return conf_stmt_is_blank (cp)
         && (g_str_has_prefix (p, "#clear") || g_str_has_prefix (p, "#include"));
}

/* A quoted string at P into the statement; P past its closing quote. */
static const char *
conf_take_string (ConfParser *cp, const char *p, GError **error)
{
  const char *end = strchr (p + 1, '"');
  const char *eol = strchr (p + 1, '\n');
  if (end == NULL || (eol != NULL && eol < end))
    return conf_syntax_error (cp, "a quoted value does not end on its line", error), NULL;
  g_string_append_len (cp->stmt, p, end + 1 - p);
  return end + 1;
}

/* What is at P: a string, a comment, a terminator or one character of a
 * statement.  Where the next thing begins, or NULL with ERROR set. */
static const char *
conf_step (ConfParser *cp, const char *p, GError **error)
{
  if (conf_stmt_is_blank (cp))
    cp->stmt_line = cp->line;
  if (*p == '"')
    return conf_take_string (cp, p, error);
  if (p[0] == '/' && p[1] == '*')
    {
      const char *end = conf_skip_block_comment (cp, p);
      return end != NULL ? end : (conf_syntax_error (cp, "a /* comment is not closed", error), NULL);
    }
  if ((p[0] == '/' && p[1] == '/') || (*p == '#' && !conf_is_directive (cp, p)))
    return p + strcspn (p, "\n");
  switch (*p)
    {
    case ';':
      return conf_statement (cp, error) ? p + 1 : NULL;
    case '{':
      return conf_open_scope (cp, error) ? p + 1 : NULL;
    case '}':
      return conf_close_scope (cp, error) ? p + 1 : NULL;
    case '\n':
      cp->line++;
      g_string_append_c (cp->stmt, ' ');
      return p + 1;
    default:
      g_string_append_c (cp->stmt, *p == '\r' || *p == '\t' ? ' ' : *p);
      return p + 1;
    }
}

static gboolean
conf_parse (ConfParser *cp, const char *text, GError **error)
{
  for (const char *p = text; *p != '\0';)
    if ((p = conf_step (cp, p, error)) == NULL)
      return FALSE;
  if (!conf_stmt_is_blank (cp))
    return conf_syntax_error (cp, "the last setting has no \";\"", error);
  if (cp->scopes->len > 0)
    return conf_syntax_error (cp, "a \"{\" is not closed", error);
  return TRUE;
}

static gboolean
conf_read_file (GHashTable *items, const char *path, guint depth, GError **error)
{
  g_autofree char *text = NULL;
  g_autoptr(GError) local_error = NULL;
  if (!g_file_get_contents (path, &text, NULL, &local_error))
    return util_fail (error, "apt configuration %s: %s (the proxy and TLS settings are read "
                      "from it, as apt reads them)", path, local_error->message);
  g_autoptr(GString) stmt = g_string_new ("");
  g_autoptr(GPtrArray) scopes = g_ptr_array_new_with_free_func (g_free);
  ConfParser cp = { items, path, 1, 1, stmt, scopes, depth };
  return conf_parse (&cp, text, error);
}

/* apt's rule for the files of apt.conf.d: letters, digits, "-", "_" and
 * ".", and no extension or ".conf" (others are ignored, as apt does). */
static gboolean
conf_part_name_ok (const char *name)
{
  if (strspn (name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
      != strlen (name))
    return FALSE;
  return strchr (name, '.') == NULL || g_str_has_suffix (name, ".conf");
}

static gboolean
conf_read_dir (GHashTable *items, const char *dir_path, guint depth, GError **error)
{
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *entry;
  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    if (conf_part_name_ok (entry))
      g_ptr_array_add (names, g_strdup (entry));
  g_ptr_array_sort (names, util_compare_strings);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (dir_path, names->pdata[i], NULL);
      if (g_file_test (path, G_FILE_TEST_IS_REGULAR)
          && !conf_read_file (items, path, depth, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
conf_read_path (GHashTable *items, const char *path, guint depth, GError **error)
{
  if (g_str_has_suffix (path, "/"))
    return conf_read_dir (items, path, depth, error);
  return conf_read_file (items, path, depth, error);
}

/* The host's apt configuration, in apt's order (aptconf.h). */
static GHashTable *
conf_load (GError **error)
{
  g_autoptr(GHashTable) items = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                       (GDestroyNotify) conf_item_free);
  const char *apt_config = g_getenv ("APT_CONFIG");
  if (apt_config != NULL && *apt_config != '\0' && !conf_read_file (items, apt_config, 0, error))
    return NULL;
  g_autofree char *etc = sources_host_etc_dir ();
  g_autofree char *parts = g_build_filename (etc, "apt.conf.d", NULL);
  g_autofree char *main_file = g_build_filename (etc, "apt.conf", NULL);
  if (!conf_read_dir (items, parts, 0, error))
    return NULL;
  if (g_file_test (main_file, G_FILE_TEST_EXISTS) && !conf_read_file (items, main_file, 0, error))
    return NULL;
  return g_steal_pointer (&items);
}

/* The configuration, read once per process; or the error reading it gave. */
struct AptConf {
  GHashTable *items;
  GError *error;
};

const AptConf *
aptconf_host (GError **error)
{
  static AptConf conf;
  static gsize loaded = 0;
  if (g_once_init_enter (&loaded))
    {
      conf.items = conf_load (&conf.error);
      g_once_init_leave (&loaded, 1);
    }
  if (conf.error != NULL)
    return g_propagate_error (error, g_error_copy (conf.error)), NULL;
  return &conf;
}

const AptConfItem *
aptconf_lookup (const AptConf *conf, const char *key)
{
  g_autofree char *lower = g_ascii_strdown (key, -1);
  const AptConfItem *item = g_hash_table_lookup (conf->items, lower);
  return item != NULL && *item->value != '\0' ? item : NULL;
}
