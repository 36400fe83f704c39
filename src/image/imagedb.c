/* imagedb.c — an image's dpkg database read back; see imagedb.h. */
#include "config.h"

#include "base/deb822.h"
#include "base/util.h"
#include "image/imagedb.h"
#include "store/repo.h"
#include "store/tree.h"
#include "store/treeread.h"

#define STATUS_PATH "var/lib/dpkg/status"

static GPtrArray *
no_status (const char *name, GError *cause, GError **error)
{
  return util_fail (error, "\"%s\" has no " STATUS_PATH "%s%s: not a Debian image", name,
                    cause != NULL ? ": " : "", cause != NULL ? cause->message : ""), NULL;
}

GPtrArray *
imagedb_read_status (GFile *root, const char *name, GCancellable *cancellable, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *status = treeread_text (root, STATUS_PATH, cancellable, &local_error);
  if (status == NULL)
    return no_status (name, local_error, error);
  return deb822_parse (status);
}

GPtrArray *
imagedb_read_status_mtree (OstreeRepo *repo, OstreeMutableTree *root, const char *name,
                           GCancellable *cancellable, GError **error)
{
  g_autoptr(GBytes) bytes = NULL;
  if (!tree_read_file (repo, root, STATUS_PATH, &bytes, cancellable, error))
    return g_prefix_error (error, "\"%s\": ", name), NULL;
  if (bytes == NULL)
    return no_status (name, NULL, error);
  g_autofree char *text = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  return deb822_parse (text);
}

static gboolean
in_state (GHashTable *stanza, ImagedbState state)
{
  g_autofree char *status = deb822_first_line (stanza, "status");
  if (status == NULL)
    return FALSE;
  if (state == IMAGEDB_INSTALLED)
    return g_str_has_suffix (status, " installed");
  return !g_str_has_suffix (status, " not-installed") && !g_str_has_suffix (status, " config-files");
}

GPtrArray *
imagedb_packages (GPtrArray *stanzas, ImagedbState state, const char *name, GError **error)
{
  g_autoptr(GPtrArray) packages = g_ptr_array_new ();
  for (guint i = 0; i < stanzas->len; i++)
    {
      GHashTable *stanza = stanzas->pdata[i];
      if (!in_state (stanza, state))
        continue;
      if (g_hash_table_lookup (stanza, "package") == NULL
          || g_hash_table_lookup (stanza, "version") == NULL
          || g_hash_table_lookup (stanza, "architecture") == NULL)
        return util_fail (error, "\"%s\": " STATUS_PATH " has a stanza without Package, "
                          "Version or Architecture", name), NULL;
      g_ptr_array_add (packages, stanza);
    }
  return g_steal_pointer (&packages);
}
