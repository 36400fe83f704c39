/* tls.c — the CA file an https:// URL is checked against: apt's
 * configuration; see tls.h. */
#include "config.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apt/aptconf.h"
#include "apt/tls.h"
#include "base/util.h"

/* The setting that names HOST's CA file (tls.h's order), or NULL. */
static const AptConfItem *
cainfo_setting (const AptConf *conf, const char *host)
{
  static const char *const methods[] = { "https", "http", NULL };
  for (const char *const *m = methods; *m != NULL; m++)
    {
      g_autofree char *host_first = g_strdup_printf ("Acquire::%s::%s::CaInfo", *m, host);
      g_autofree char *host_last = g_strdup_printf ("Acquire::%s::CaInfo::%s", *m, host);
      const AptConfItem *item = aptconf_lookup (conf, host_first);
      if (item == NULL)
        item = aptconf_lookup (conf, host_last);
      if (item != NULL)
        return item;
    }
  for (const char *const *m = methods; *m != NULL; m++)
    {
      g_autofree char *key = g_strdup_printf ("Acquire::%s::CaInfo", *m);
      const AptConfItem *item = aptconf_lookup (conf, key);
      if (item != NULL)
        return item;
    }
  return NULL;
}

/* Can ITEM's file be the CA file?  A readable regular file. */
static gboolean
cainfo_check (const AptConfItem *item, GError **error)
{
  struct stat st;
  int errsv = 0;
  if (stat (item->value, &st) < 0)
    errsv = errno;
  else if (!S_ISREG (st.st_mode))
    errsv = S_ISDIR (st.st_mode) ? EISDIR : EINVAL;
  else if (access (item->value, R_OK) < 0)
    errsv = errno;
  if (errsv == 0)
    return TRUE;
  return util_fail (error, "%s: %s: %s: %s (it names the file of PEM certificates that https "
                    "mirrors are checked against)", item->origin, item->key, item->value,
                    g_strerror (errsv));
}

gboolean
tls_cainfo_for_url (const char *url, char **out_path, char **out_why, GError **error)
{
  *out_path = NULL;
  if (out_why != NULL)
    *out_why = NULL;
  const char *scheme = g_uri_peek_scheme (url);
  if (scheme == NULL || !g_str_equal (scheme, "https"))
    return TRUE;
  g_autofree char *host = NULL;
  if (!g_uri_split_network (url, G_URI_FLAGS_NONE, NULL, &host, NULL, NULL))
    return util_fail (error, "%s: not a URL with a host", url);
  const AptConf *conf = aptconf_host (error);
  if (conf == NULL)
    return FALSE;
  const AptConfItem *item = cainfo_setting (conf, host);
  if (item == NULL)
    return TRUE;
  if (!cainfo_check (item, error))
    return FALSE;
  *out_path = g_strdup (item->value);
  if (out_why != NULL)
    *out_why = g_strdup_printf ("%s in %s", item->key, item->origin);
  return TRUE;
}

gboolean
tls_apply (CURL *curl, const char *url, GError **error)
{
  g_autofree char *path = NULL;
  if (!tls_cainfo_for_url (url, &path, NULL, error))
    return FALSE;
  if (path != NULL)
    curl_easy_setopt (curl, CURLOPT_CAINFO, path);
  return TRUE;
}
