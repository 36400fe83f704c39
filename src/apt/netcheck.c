/* netcheck.c — the sources' proxies and CA files checked before any
 * download; see netcheck.h. */
#include "config.h"

#include "apt/netcheck.h"
#include "apt/proxy.h"
#include "apt/tls.h"

/* "proxy URL (WHY)" or "direct (WHY)", and for an https URI with a CA
 * file of its own "; CA file PATH (WHY)". */
static char *
describe_network (const char *uri, GError **error)
{
  g_autofree char *how = proxy_describe (uri, error);
  g_autofree char *ca_path = NULL;
  g_autofree char *ca_why = NULL;
  if (how == NULL || !tls_cainfo_for_url (uri, &ca_path, &ca_why, error))
    return NULL;
  if (ca_path == NULL)
    return g_steal_pointer (&how);
  return g_strdup_printf ("%s; CA file %s (%s)", how, ca_path, ca_why);
}

gboolean
netcheck_sources (const char *command, SourcesList *const *lists, guint n, gboolean verbose,
                  GError **error)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint l = 0; l < n; l++)
    for (guint i = 0; i < lists[l]->sources->len; i++)
      {
        Source *s = lists[l]->sources->pdata[i];
        for (char **uri = s->uris; uri != NULL && *uri != NULL; uri++)
          {
            g_autofree char *line = g_strdup_printf ("source %s: %s", s->name, *uri);
            if (!g_hash_table_add (seen, g_strdup (line)))
              continue;
            g_autofree char *how = describe_network (*uri, error);
            if (how == NULL)
              return FALSE;
            if (verbose)
              g_printerr ("apt2ostree %s: %s: %s\n", command, line, how);
          }
      }
  return TRUE;
}
