/* proxy.c — which proxy a URL goes through: apt's configuration, then the
 * environment; see proxy.h. */
#include "config.h"

#include <string.h>

#include "apt/aptconf.h"
#include "apt/proxy.h"
#include "base/util.h"

/* The first of Acquire::METHOD::SUFFIX for METHODS that is set and not
 * empty (apt's ConfigFind), or NULL. */
static const AptConfItem *
conf_find (const AptConf *conf, const char *const *methods, const char *suffix)
{
  for (const char *const *m = methods; *m != NULL; m++)
    {
      g_autofree char *key = g_strdup_printf ("Acquire::%s::%s", *m, suffix);
      const AptConfItem *item = aptconf_lookup (conf, key);
      if (item != NULL)
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
choose_from_conf (const AptConf *conf, gboolean https, const char *host, ProxyChoice *out,
                  GError **error)
{
  static const char *const http_methods[] = { "http", NULL };
  static const char *const https_methods[] = { "https", "http", NULL };
  const char *const *methods = https ? https_methods : http_methods;
  g_autofree char *per_host = g_strconcat ("proxy::", host, NULL);
  const AptConfItem *item = conf_find (conf, methods, per_host);
  if (item == NULL)
    item = conf_find (conf, methods, "proxy");
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
  const AptConf *conf = aptconf_host (error);
  if (conf == NULL)
    return FALSE;
  gboolean https = g_str_equal (scheme, "https");
  g_autoptr(GError) local_error = NULL;
  if (!choose_from_conf (conf, https, host, out, &local_error))
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
