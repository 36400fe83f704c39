/* keptcheckout.c — one hardlink checkout per ref, kept between runs; see
 * keptcheckout.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/scratch.h"
#include "base/util.h"
#include "store/checkout.h"
#include "store/keptcheckout.h"

#define KEPT_DIR "apt2ostree-checkouts"

static char *
kept_path (OstreeRepo *repo, const char *ref)
{
  g_autofree char *repo_path = g_file_get_path (ostree_repo_get_path (repo));
  g_autofree char *name = g_uri_escape_string (ref, NULL, FALSE);
  return g_build_filename (repo_path, KEPT_DIR, name, NULL);
}

/* The key of the kept checkout in DIR: "COMMIT FINGERPRINT". */
static char *
key_of (const char *commit, const char *fingerprint)
{
  return g_strdup_printf ("%s %s\n", commit, fingerprint);
}

gboolean
kept_checkout_take (OstreeRepo *repo, const char *ref, const char *dest, char **out_tree,
                    char **out_commit, char **out_why, GError **error)
{
  *out_tree = NULL;
  *out_commit = NULL;
  *out_why = NULL;
  g_autofree char *path = kept_path (repo, ref);
  /* Taken by one run only: the next run over REF finds nothing. */
  if (rename (path, dest) < 0)
    {
      if (errno != ENOENT)
        *out_why = g_strdup_printf ("cannot move it into %s: %s", dest, g_strerror (errno));
      return TRUE;
    }
  g_autofree char *key_path = g_build_filename (dest, "key", NULL);
  g_autofree char *key = NULL;
  if (!g_file_get_contents (key_path, &key, NULL, NULL) || strchr (key, ' ') == NULL)
    {
      *out_why = g_strdup ("it has no key (left unfinished)");
      return TRUE;
    }
  g_autofree char *commit = g_strndup (key, strchr (key, ' ') - key);
  g_autofree char *tree = g_build_filename (dest, "tree", NULL);
  g_autoptr(GError) local_error = NULL;
  g_autofree char *fingerprint = checkout_fingerprint (tree, &local_error);
  g_autofree char *want = fingerprint != NULL ? key_of (commit, fingerprint) : NULL;
  if (fingerprint == NULL)
    *out_why = g_strdup (local_error->message);
  else if (!g_str_equal (key, want))
    *out_why = g_strdup ("it changed since it was kept");
  else
    {
      *out_tree = g_steal_pointer (&tree);
      *out_commit = g_steal_pointer (&commit);
    }
  return TRUE;
}

static gboolean
write_key (const char *dir, const char *commit, GError **error)
{
  g_autofree char *tree = g_build_filename (dir, "tree", NULL);
  g_autofree char *fingerprint = checkout_fingerprint (tree, error);
  if (fingerprint == NULL)
    return FALSE;
  g_autofree char *key = key_of (commit, fingerprint);
  g_autofree char *key_path = g_build_filename (dir, "key", NULL);
  FILE *f = fopen (key_path, "we");
  if (f == NULL)
    return util_fail (error, "%s: %s", key_path, g_strerror (errno));
  gboolean ok = fputs (key, f) >= 0;
  ok = fclose (f) == 0 && ok;
  return ok || util_fail (error, "%s: cannot write it", key_path);
}

gboolean
kept_checkout_put (OstreeRepo *repo, const char *ref, const char *commit, const char *dir,
                   GError **error)
{
  if (!write_key (dir, commit, error))
    return FALSE;
  g_autofree char *path = kept_path (repo, ref);
  g_autofree char *parent = g_path_get_dirname (path);
  if (mkdir (parent, 0700) < 0 && errno != EEXIST)
    return util_fail (error, "%s: %s", parent, g_strerror (errno));
  if (rename (dir, path) == 0)
    return TRUE;
  if (errno != EEXIST && errno != ENOTEMPTY)
    return util_fail (error, "%s: cannot keep it there: %s", path, g_strerror (errno));
  /* Another run kept one meanwhile: ours is newer. */
  g_autofree char *old = g_strconcat (dir, ".old", NULL);
  if (rename (path, old) < 0 || rename (dir, path) < 0)
    return util_fail (error, "%s: cannot keep it there: %s", path, g_strerror (errno));
  return TRUE;
}

gboolean
kept_checkout_prune (OstreeRepo *repo, guint *out_removed, GCancellable *cancellable,
                     GError **error)
{
  *out_removed = 0;
  g_autofree char *repo_path = g_file_get_path (ostree_repo_get_path (repo));
  g_autofree char *parent = g_build_filename (repo_path, KEPT_DIR, NULL);
  g_autoptr(GDir) dir = g_dir_open (parent, 0, NULL);
  if (dir == NULL)
    return TRUE;
  for (const char *name; (name = g_dir_read_name (dir)) != NULL;)
    {
      g_autofree char *ref = g_uri_unescape_string (name, NULL);
      g_autofree char *path = g_build_filename (parent, name, NULL);
      g_autofree char *key_path = g_build_filename (path, "key", NULL);
      g_autofree char *key = NULL;
      g_autofree char *commit = NULL;
      if (ref != NULL && g_file_get_contents (key_path, &key, NULL, NULL)
          && ostree_repo_resolve_rev (repo, ref, TRUE, &commit, NULL) && commit != NULL
          && g_str_has_prefix (key, commit) && key[strlen (commit)] == ' ')
        continue;
      if (!scratch_rm_rf (path, error))
        return FALSE;
      (*out_removed)++;
    }
  return TRUE;
}

gboolean
kept_checkout_remove_all (OstreeRepo *repo, GError **error)
{
  g_autofree char *repo_path = g_file_get_path (ostree_repo_get_path (repo));
  g_autofree char *parent = g_build_filename (repo_path, KEPT_DIR, NULL);
  return scratch_rm_rf (parent, error);
}
