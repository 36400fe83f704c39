/* proxy.h — which proxy a download goes through, and why, as apt decides
 * it (apt-transport-http(1), apt-transport-https(1)):
 *
 *  1. Acquire::http::Proxy::HOST, for an https:// URL first
 *     Acquire::https::Proxy::HOST: a proxy URL or "DIRECT";
 *  2. Acquire::http::Proxy (https: Acquire::https::Proxy first): the same;
 *  3. the environment: http_proxy, for an https:// URL https_proxy when it
 *     is set (apt falls back to http_proxy for https, and so do we);
 *  4. whatever gave a proxy, no_proxy naming the host (or a domain it is
 *     in, or "*") makes the connection direct.
 *
 * The settings come from the host's apt configuration (aptconf.h).
 * A proxy URL is scheme://[user[:pass]@]host[:port][/] with scheme http,
 * https or socks5h (apt's); "host:port" alone is taken as http://.
 * Proxy-Auto-Detect is not run. */
#pragma once

#include <curl/curl.h>
#include <glib.h>

G_BEGIN_DECLS

/* The proxy URL that URL (http://, https:// or file://) goes through, or ""
 * for a direct connection (always for file://).  With OUT_WHY, which
 * setting decided it, for the user ("Acquire::http::Proxy in FILE:LINE",
 * "http_proxy in the environment", "no_proxy in the environment names
 * HOST", "no proxy is set").  NULL with ERROR set when the configuration
 * cannot be read or parsed (FILE:LINE) or the setting that applies is not
 * a proxy URL (naming where it is set, the key and the value). */
char *proxy_for_url (const char *url, char **out_why, GError **error);

/* Make CURL's next transfer of URL go through proxy_for_url's choice
 * (CURLOPT_PROXY, CURLOPT_NOPROXY ""), so that libcurl never reads the
 * environment on its own: the choice is ours and reportable. */
gboolean proxy_apply (CURL *curl, const char *url, GError **error);

/* One line for -v: "proxy http://host:3142/ (WHY)" or "direct (WHY)"; a
 * password in the proxy URL is not shown. */
char *proxy_describe (const char *url, GError **error);

G_END_DECLS
