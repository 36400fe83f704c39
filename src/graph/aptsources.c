/* aptsources.c — a development image's apt sources; see aptsources.h. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "base/util.h"
#include "graph/aptsources.h"

/* The key of SOURCE into KEYRINGS (a copy of its Signed-By keyring file,
 * or its inline key block as NAME.asc); returns the path apt reads it from
 * inside the image, or NULL when the source names no key. */
static char *
write_key (Source *source, const char *keyrings, GError **error)
{
  if (source->signed_by == NULL)
    return NULL;
  gboolean inline_key = strstr (source->signed_by, "-----BEGIN PGP PUBLIC KEY BLOCK-----") != NULL;
  g_autofree char *name = g_strconcat (source->name, inline_key ? ".asc" : ".gpg", NULL);
  g_autofree char *dest = g_build_filename (keyrings, name, NULL);
  g_autofree char *contents = NULL;
  gsize len = 0;
  g_autoptr(GError) local_error = NULL;
  if (inline_key)
    {
      contents = g_strconcat (source->signed_by, "\n", NULL);
      len = strlen (contents);
    }
  else if (!g_file_get_contents (source->signed_by, &contents, &len, &local_error))
    return util_fail (error, "source \"%s\": its Signed-By keyring: %s", source->name,
                      local_error->message), NULL;
  if (!g_file_set_contents_full (dest, contents, len, G_FILE_SET_CONTENTS_CONSISTENT, 0644,
                                 &local_error))
    return util_fail (error, "%s: %s", dest, local_error->message), NULL;
  return g_strconcat ("/etc/apt/keyrings/", name, NULL);
}

/* One deb822 stanza for SOURCE. */
static gboolean
append_stanza (GString *out, Source *source, const char *keyrings, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *key = write_key (source, keyrings, &local_error);
  if (local_error != NULL)
    return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
  g_autofree char *uris = g_strjoinv (" ", source->uris);
  g_string_append_printf (out, "X-Name: %s\nTypes: deb\nURIs: %s\nSuites: %s\n", source->name, uris,
                          source->suite);
  if (!source->flat)
    {
      g_autofree char *components = g_strjoinv (" ", source->components);
      g_string_append_printf (out, "Components: %s\n", components);
    }
  if (source->architectures != NULL)
    {
      g_autofree char *archs = g_strjoinv (" ", source->architectures);
      g_string_append_printf (out, "Architectures: %s\n", archs);
    }
  if (key != NULL)
    g_string_append_printf (out, "Signed-By: %s\n", key);
  if (source->trusted)
    g_string_append (out, "Trusted: yes\n");
  if (source->ignore_valid_until)
    g_string_append (out, "Check-Valid-Until: no\n");
  if (source->pin_priority != SOURCE_DEFAULT_PIN_PRIORITY)
    g_string_append_printf (out, "# apt2ostree locked it with Pin-Priority %d (apt takes pins from "
                            "preferences, not from here)\n", source->pin_priority);
  g_string_append_c (out, '\n');
  return TRUE;
}

gboolean
aptsources_write (Lockfile *lock, SourcesList *sources, const char *dir, GError **error)
{
  g_autofree char *lists = g_build_filename (dir, "etc", "apt", "sources.list.d", NULL);
  g_autofree char *keyrings = g_build_filename (dir, "etc", "apt", "keyrings", NULL);
  if (g_mkdir_with_parents (lists, 0755) != 0 || g_mkdir_with_parents (keyrings, 0755) != 0)
    return util_fail (error, "%s: %s", dir, g_strerror (errno));
  g_autoptr(GString) out = g_string_new ("# The sources this image was locked from, as apt2ostree "
                                         "built it (build --apt-sources).\n\n");
  for (guint i = 0; i < lock->sources->len; i++)
    {
      LockSource *ls = lock->sources->pdata[i];
      if (ls->local)
        continue;  /* local .debs: files on the build machine, no apt source */
      Source *source = sources != NULL ? sources_list_lookup (sources, ls->name) : NULL;
      if (source == NULL || source->uri == NULL)
        return util_fail (error, "--apt-sources: source \"%s\" has no URI in the sources "
                          "configuration; give it with --sources or --mirror %s=URI", ls->name,
                          ls->name);
      if (!append_stanza (out, source, keyrings, error))
        return FALSE;
    }
  g_autofree char *path = g_build_filename (lists, "apt2ostree.sources", NULL);
  g_autoptr(GError) local_error = NULL;
  if (!g_file_set_contents_full (path, out->str, out->len, G_FILE_SET_CONTENTS_CONSISTENT, 0644,
                                 &local_error))
    return util_fail (error, "%s: %s", path, local_error->message);
  return TRUE;
}
