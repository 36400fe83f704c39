/* treeread.c — files of a commit read in place; see treeread.h. */
#include "config.h"

#include "base/util.h"
#include "store/treeread.h"

char *
treeread_text (GFile *root, const char *path, GCancellable *cancellable, GError **error)
{
  g_autofree char *current = g_strdup (path);
  for (guint hops = 0; hops < 32; hops++)
    {
      g_auto(GStrv) parts = g_strsplit (current, "/", -1);
      g_autoptr(GFile) f = g_object_ref (root);
      g_autofree char *next = NULL;
      for (char **p = parts; *p != NULL && next == NULL; p++)
        {
          if (**p == '\0' || g_str_equal (*p, "."))
            continue;
          if (g_str_equal (*p, ".."))
            {
              g_autoptr(GFile) parent = g_file_get_parent (f);
              if (parent != NULL)
                g_set_object (&f, parent);
              continue;
            }
          g_autoptr(GFile) child = g_file_get_child (f, *p);
          g_autoptr(GFileInfo) info = g_file_query_info (child, "standard::type,standard::symlink-target",
                                                         G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS,
                                                         cancellable, NULL);
          if (info == NULL)
            return NULL;
          if (g_file_info_get_file_type (info) == G_FILE_TYPE_SYMBOLIC_LINK)
            {
              const char *target = g_file_info_get_symlink_target (info);
              g_autofree char *dir = g_file_get_relative_path (root, f);
              g_autofree char *rest = g_strjoinv ("/", p + 1);
              next = g_strjoin ("/", target[0] == '/' || dir == NULL ? "" : dir, target, rest, NULL);
              break;
            }
          g_set_object (&f, child);
        }
      if (next == NULL)
        {
          char *contents = NULL;
          gsize len;
          g_autoptr(GError) local_error = NULL;
          if (!g_file_load_contents (f, cancellable, &contents, &len, NULL, &local_error))
            return g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND)
                     || g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY)
                     ? NULL : (util_fail (error, "%s: %s", path, local_error->message), NULL);
          return contents;
        }
      g_free (current);
      current = g_steal_pointer (&next);
    }
  return NULL;  /* a loop of links: no file */
}

