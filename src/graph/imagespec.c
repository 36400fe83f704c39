/* imagespec.c — LOCKFILE[=REF] arguments, and the refs of an image's build. */
#include "config.h"

#include <string.h>

#include "graph/imagespec.h"
#include "store/repo.h"
#include "base/util.h"

void
imagespec_free (ImageSpec *spec)
{
  g_free (spec->lockfile);
  g_free (spec->ref);
  g_free (spec);
}

char *
imagespec_default_ref (const char *lockfile_path)
{
  g_autofree char *base = g_path_get_basename (lockfile_path);
  static const char *const suffixes[] = { ".lock.json", ".json" };
  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    if (g_str_has_suffix (base, suffixes[i]) && strlen (base) > strlen (suffixes[i]))
      {
        base[strlen (base) - strlen (suffixes[i])] = '\0';
        break;
      }
  return g_steal_pointer (&base);
}

void
imagespec_split (const char *arg, char **out_lockfile, char **out_ref)
{
  const char *eq = strrchr (arg, '=');
  if (eq == NULL || g_file_test (arg, G_FILE_TEST_EXISTS))
    {
      *out_lockfile = g_strdup (arg);
      *out_ref = NULL;
      return;
    }
  *out_lockfile = g_strndup (arg, eq - arg);
  *out_ref = g_strdup (eq + 1);
}

ImageSpec *
imagespec_parse (const char *arg, GError **error)
{
  g_autoptr(ImageSpec) spec = g_new0 (ImageSpec, 1);
  g_autofree char *shown = g_strescape (arg, NULL);
  imagespec_split (arg, &spec->lockfile, &spec->ref);
  if (spec->ref == NULL)
    spec->ref = imagespec_default_ref (arg);
  if (*spec->lockfile == '\0')
    return util_fail (error, "\"%s\": expected LOCKFILE or LOCKFILE=REF", shown), NULL;
  g_autoptr(GError) ref_error = NULL;
  if (!repo_check_ref_name (spec->ref, &ref_error))
    return util_fail (error, "\"%s\": the image ref \"%s\" is not a valid ref name (%s); give "
                      "LOCKFILE=REF", shown, spec->ref, ref_error->message), NULL;
  return g_steal_pointer (&spec);
}

GPtrArray *
imagespec_parse_all (const char *const *args, int n, GError **error)
{
  g_autoptr(GPtrArray) specs = g_ptr_array_new_with_free_func ((GDestroyNotify) imagespec_free);
  g_autoptr(GHashTable) by_ref = g_hash_table_new (g_str_hash, g_str_equal);
  for (int i = 0; i < n; i++)
    {
      ImageSpec *spec = imagespec_parse (args[i], error);
      if (spec == NULL)
        return NULL;
      g_ptr_array_add (specs, spec);
      ImageSpec *other = g_hash_table_lookup (by_ref, spec->ref);
      if (other != NULL)
        return util_fail (error, "%s and %s both give the image ref \"%s\"; name one of them "
                          "LOCKFILE=REF", other->lockfile, spec->lockfile, spec->ref), NULL;
      g_hash_table_insert (by_ref, spec->ref, spec);
    }
  return g_steal_pointer (&specs);
}

/* A ref cannot be both a file and a directory, so the stage refs of image
 * NAME are PREFIX/NAME, never NAME/SOMETHING. */
static const char *const stage_prefixes[] = { "stage1/", "before-configure/", "configured/",
                                               "before-deployable/" };

char *
imagespec_stage1_ref (const char *image)
{
  return g_strconcat (stage_prefixes[0], image, NULL);
}

char *
imagespec_before_configure_ref (const char *image)
{
  return g_strconcat (stage_prefixes[1], image, NULL);
}

char *
imagespec_configured_ref (const char *image)
{
  return g_strconcat (stage_prefixes[2], image, NULL);
}

char *
imagespec_before_deployable_ref (const char *image)
{
  return g_strconcat (stage_prefixes[3], image, NULL);
}

char *
imagespec_hook_ref (const char *image, const char *which, guint n)
{
  return g_strdup_printf ("hooks/%s/%s-%u", image, which, n);
}

char *
imagespec_image_of_stage_ref (const char *ref)
{
  for (guint i = 0; i < G_N_ELEMENTS (stage_prefixes); i++)
    if (g_str_has_prefix (ref, stage_prefixes[i]) && ref[strlen (stage_prefixes[i])] != '\0')
      return g_strdup (ref + strlen (stage_prefixes[i]));
  /* hooks/IMAGE/WHICH-N: IMAGE may hold "/" itself. */
  const char *last = strrchr (ref, '/');
  if (g_str_has_prefix (ref, "hooks/") && last != NULL && last > ref + strlen ("hooks/"))
    return g_strndup (ref + strlen ("hooks/"), last - (ref + strlen ("hooks/")));
  return NULL;
}
