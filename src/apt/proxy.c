/* proxy.c — which proxy a URL goes through: apt's configuration, then the
 * environment; see proxy.h. */
#include "config.h"

#include <string.h>

#include "apt/proxy.h"
#include "apt/sources.h"
#include "base/util.h"

/* #include inside #include...: apt stops at a depth as well. */
#define CONF_MAX_DEPTH 16

/* One setting of the apt configuration. */
typedef struct {
  char *key;      /* as written, scopes joined with "::" */
  char *value;
  char *origin;   /* FILE:LINE */
} ConfItem;

static void
conf_item_free (ConfItem *item)
{
  g_free (item->key);
  g_free (item->value);
  g_free (item->origin);
  g_free (item);
}

/* The reading of one file: the statement being gathered up to its ";",
 * "{" or "}", and the scopes open around it. */
typedef struct {
  GHashTable *items;   /* lower-case key -> ConfItem (apt's keys ignore case) */
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
  ConfItem *item = g_new0 (ConfItem, 1);
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
    return util_fail (error, "apt configuration %s: %s (the proxy settings are read from it, "
                      "as apt reads them)", path, local_error->message);
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

/* The host's apt configuration, in apt's order (proxy.h). */
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
typedef struct {
  GHashTable *items;
  GError *error;
} ProxyConf;

static const ProxyConf *
proxy_conf (void)
{
  static ProxyConf conf;
  static gsize loaded = 0;
  if (g_once_init_enter (&loaded))
    {
      conf.items = conf_load (&conf.error);
      g_once_init_leave (&loaded, 1);
    }
  return &conf;
}

/* The first of Acquire::METHOD::SUFFIX for METHODS that is set and not
 * empty (apt's ConfigFind), or NULL. */
static const ConfItem *
conf_find (GHashTable *items, const char *const *methods, const char *suffix)
{
  for (const char *const *m = methods; *m != NULL; m++)
    {
      g_autofree char *key = g_strdup_printf ("acquire::%s::%s", *m, suffix);
      g_autofree char *lower = g_ascii_strdown (key, -1);
      const ConfItem *item = g_hash_table_lookup (items, lower);
      if (item != NULL && *item->value != '\0')
        return item;
    }
  return NULL;
}

/* How a URL reaches its host: through PROXY, or directly (""), and why. */
typedef struct {
  char *proxy;
  char *why;
} ProxyChoice;

static void
proxy_choice_clear (ProxyChoice *c)
{
  g_clear_pointer (&c->proxy, g_free);
  g_clear_pointer (&c->why, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ProxyChoice, proxy_choice_clear)

#define URI_PARSE_FLAGS (G_URI_FLAGS_HAS_PASSWORD | G_URI_FLAGS_ENCODED)

/* What is wrong with FULL as a proxy URL, or NULL. */
static char *
proxy_url_problem (const char *full)
{
  static const char *const schemes[] = { "http", "https", "socks5h", NULL };
  for (const char *c = full; *c != '\0'; c++)
    if ((guchar) *c <= ' ' || *c == 0x7f || *c == '"' || *c == '\\')
      return g_strdup ("a space, quote, backslash or control character");
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GUri) uri = g_uri_parse (full, URI_PARSE_FLAGS, &local_error);
  if (uri == NULL)
    return g_strdup (local_error->message);
  g_autofree char *scheme = g_ascii_strdown (g_uri_get_scheme (uri), -1);
  if (!g_strv_contains (schemes, scheme))
    return g_strdup_printf ("scheme %s: apt takes http, https and socks5h", scheme);
  if (g_uri_get_host (uri) == NULL || *g_uri_get_host (uri) == '\0')
    return g_strdup ("no host");
  const char *path = g_uri_get_path (uri);
  if ((*path != '\0' && !g_str_equal (path, "/")) || g_uri_get_query (uri) != NULL
      || g_uri_get_fragment (uri) != NULL)
    return g_strdup ("something after the host and port");
  return NULL;
}

/* VALUE, which WHERE sets ("FILE:LINE: KEY", "environment variable
 * NAME"), as the URL libcurl takes ("host:port" gets http://).  IN_APT_CONF:
 * the error says DIRECT is a choice too. */
static char *
proxy_check_url (const char *value, const char *where, gboolean in_apt_conf, GError **error)
{
  g_autofree char *full = strstr (value, "://") != NULL ? g_strdup (value)
                                                        : g_strconcat ("http://", value, NULL);
  g_autofree char *problem = proxy_url_problem (full);
  if (problem == NULL)
    return g_steal_pointer (&full);
  g_autofree char *shown = g_strescape (value, NULL);
  return util_fail (error, "%s: \"%s\" is not a proxy URL (%s); write "
                    "scheme://[user[:pass]@]host[:port]/%s", where, shown, problem,
                    in_apt_conf ? " or DIRECT" : ""), NULL;
}

/* Does no_proxy's LIST (commas between names; ".example.org" and
 * "example.org" both cover the domain; "*" covers every host) cover HOST? */
static gboolean
no_proxy_covers (const char *list, const char *host)
{
  g_auto(GStrv) entries = g_strsplit (list, ",", -1);
  gsize host_len = strlen (host);
  for (char **e = entries; *e != NULL; e++)
    {
      const char *name = g_strstrip (*e);
      while (*name == '.')
        name++;
      gsize len = strlen (name);
      if (g_str_equal (name, "*") || (len > 0 && g_ascii_strcasecmp (host, name) == 0))
        return TRUE;
      if (len > 0 && host_len > len && host[host_len - len - 1] == '.'
          && g_ascii_strcasecmp (host + host_len - len, name) == 0)
        return TRUE;
    }
  return FALSE;
}

/* Steps 1 and 2 of proxy.h: the apt configuration's setting for HOST, or
 * FALSE (nothing set) with OUT untouched. */
static gboolean
choose_from_conf (GHashTable *items, gboolean https, const char *host, ProxyChoice *out,
                  GError **error)
{
  static const char *const http_methods[] = { "http", NULL };
  static const char *const https_methods[] = { "https", "http", NULL };
  const char *const *methods = https ? https_methods : http_methods;
  g_autofree char *per_host = g_strconcat ("proxy::", host, NULL);
  const ConfItem *item = conf_find (items, methods, per_host);
  if (item == NULL)
    item = conf_find (items, methods, "proxy");
  if (item == NULL)
    return FALSE;
  if (g_str_equal (item->value, "DIRECT"))
    {
      out->proxy = g_strdup ("");
      out->why = g_strdup_printf ("%s is DIRECT in %s", item->key, item->origin);
      return TRUE;
    }
  g_autofree char *where = g_strdup_printf ("%s: %s", item->origin, item->key);
  out->proxy = proxy_check_url (item->value, where, TRUE, error);
  out->why = g_strdup_printf ("%s in %s", item->key, item->origin);
  return TRUE;
}

/* Step 3: http_proxy, or https_proxy for https when it is set. */
static void
choose_from_environment (gboolean https, ProxyChoice *out, GError **error)
{
  const char *name = https && g_getenv ("https_proxy") != NULL ? "https_proxy" : "http_proxy";
  const char *value = g_getenv (name);
  if (value == NULL || *value == '\0')
    {
      out->proxy = g_strdup ("");
      out->why = g_strdup ("no proxy is set in the apt configuration or the environment");
      return;
    }
  g_autofree char *where = g_strdup_printf ("environment variable %s", name);
  out->proxy = proxy_check_url (value, where, FALSE, error);
  out->why = g_strdup_printf ("%s in the environment", name);
}

/* proxy.h's four steps for a URL of SCHEME (http or https) at HOST. */
static gboolean
proxy_choose (const char *scheme, const char *host, ProxyChoice *out, GError **error)
{
  const ProxyConf *conf = proxy_conf ();
  if (conf->error != NULL)
    return (g_propagate_error (error, g_error_copy (conf->error)), FALSE);
  gboolean https = g_str_equal (scheme, "https");
  g_autoptr(GError) local_error = NULL;
  if (!choose_from_conf (conf->items, https, host, out, &local_error))
    choose_from_environment (https, out, &local_error);
  const char *no_proxy = g_getenv ("no_proxy");
  if ((out->proxy == NULL || *out->proxy != '\0') && no_proxy != NULL
      && no_proxy_covers (no_proxy, host))
    {
      proxy_choice_clear (out);
      out->proxy = g_strdup ("");
      out->why = g_strdup_printf ("no_proxy in the environment covers %s", host);
      return TRUE;
    }
  if (out->proxy == NULL)
    return (g_propagate_error (error, g_steal_pointer (&local_error)), FALSE);
  return TRUE;
}

char *
proxy_for_url (const char *url, char **out_why, GError **error)
{
  const char *scheme = g_uri_peek_scheme (url);
  g_auto(ProxyChoice) choice = { NULL, NULL };
  g_autofree char *host = NULL;
  if (scheme == NULL || (!g_str_equal (scheme, "http") && !g_str_equal (scheme, "https")))
    {
      choice.proxy = g_strdup ("");
      choice.why = g_strdup ("not a network URL");
    }
  else if (!g_uri_split_network (url, G_URI_FLAGS_NONE, NULL, &host, NULL, NULL))
    return util_fail (error, "%s: not a URL with a host", url), NULL;
  else if (!proxy_choose (scheme, host, &choice, error))
    return NULL;
  if (out_why != NULL)
    *out_why = g_steal_pointer (&choice.why);
  return g_steal_pointer (&choice.proxy);
}

gboolean
proxy_apply (CURL *curl, const char *url, GError **error)
{
  g_autofree char *proxy = proxy_for_url (url, NULL, error);
  if (proxy == NULL)
    return FALSE;
  curl_easy_setopt (curl, CURLOPT_PROXY, proxy);
  curl_easy_setopt (curl, CURLOPT_NOPROXY, "");
  return TRUE;
}

char *
proxy_describe (const char *url, GError **error)
{
  g_autofree char *why = NULL;
  g_autofree char *proxy = proxy_for_url (url, &why, error);
  if (proxy == NULL)
    return NULL;
  if (*proxy == '\0')
    return g_strdup_printf ("direct (%s)", why);
  g_autoptr(GUri) uri = g_uri_parse (proxy, URI_PARSE_FLAGS, NULL);
  g_autofree char *shown = uri != NULL ? g_uri_to_string_partial (uri, G_URI_HIDE_PASSWORD)
                                       : g_strdup (proxy);
  return g_strdup_printf ("proxy %s (%s)", shown, why);
}
