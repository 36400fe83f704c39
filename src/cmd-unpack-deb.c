/* apt2ostree unpack-deb — one .deb (a file or a URL) into one ref. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "deb.h"
#include "fetch.h"
#include "repo.h"
#include "util.h"

#define DEFAULT_CACHE "build/cache/debs"

/* A local .deb: check what the caller pinned, and learn its sha256. */
static char *
check_local_deb (const char *path, const char *want_sha256, gint64 want_size, GError **error)
{
  struct stat st;
  if (stat (path, &st) < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno)), NULL;
  if (!S_ISREG (st.st_mode))
    return util_fail (error, "%s: not a regular file", path), NULL;
  if (want_size >= 0 && st.st_size != want_size)
    return util_fail (error, "%s: size mismatch (expected %" G_GINT64_FORMAT " bytes, got %"
                      G_GINT64_FORMAT ")", path, want_size, (gint64) st.st_size), NULL;
  g_autofree char *sha256 = fetch_sha256_file (path, error);
  if (sha256 == NULL)
    return NULL;
  if (want_sha256 != NULL && g_ascii_strcasecmp (sha256, want_sha256) != 0)
    return util_fail (error, "%s: sha256 mismatch (expected %s, got %s)", path, want_sha256,
                      sha256), NULL;
  return g_steal_pointer (&sha256);
}

/* Does REF already hold this package unpacked the way it would be now?
 * (Another image's build got there first, or Ninja lost its log.)  Sets
 * *OUT_COMMIT to that commit, or to NULL. */
static gboolean
ref_holding (OstreeRepo *repo, const char *ref, const char *sha256, gboolean merged_usr,
             char **out_commit, GError **error)
{
  guint64 epoch;
  g_autoptr(GHashTable) refs = NULL;
  /* The ref itself: resolving REF as a revision could read a short name
   * such as "abc" as a commit checksum prefix. */
  if (!util_source_date_epoch (&epoch, error)
      || !ostree_repo_list_refs_ext (repo, ref, &refs, OSTREE_REPO_LIST_REFS_EXT_NONE, NULL, error))
    return FALSE;
  const char *commit = g_hash_table_lookup (refs, ref);
  if (commit != NULL && deb_commit_is_unpack_of (repo, commit, sha256, merged_usr, epoch))
    *out_commit = g_strdup (commit);
  return TRUE;
}

CMD (unpack_deb)
{
  g_autofree char *ref = NULL;
  g_autofree char *sha256 = NULL;
  g_autofree char *cache = NULL;
  gint64 size = -1;
  gboolean merged_usr = FALSE, no_merged_usr = FALSE;
  const GOptionEntry entries[] = {
    { "ref", 0, 0, G_OPTION_ARG_STRING, &ref, "Ref to write (required)", "REF" },
    { "sha256", 0, 0, G_OPTION_ARG_STRING, &sha256, "Expected sha256 of the .deb", "HEX" },
    { "size", 0, 0, G_OPTION_ARG_INT64, &size, "Expected size of the .deb in bytes", "N" },
    { "cache", 0, 0, G_OPTION_ARG_FILENAME, &cache,
      "Download cache, keyed by sha256 (default: " DEFAULT_CACHE ")", "DIR" },
    { "merged-usr", 0, 0, G_OPTION_ARG_NONE, &merged_usr,
      "Rewrite bin, sbin, lib* into usr/ (the default)", NULL },
    { "no-merged-usr", 0, 0, G_OPTION_ARG_NONE, &no_merged_usr,
      "Keep the paths as the package ships them", NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "--ref REF (FILE.deb | URL)",
                  "Unpack one Debian package into an OSTree commit at REF.\n"
                  "URL may be http://, https:// or file://; downloads are cached by sha256.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 2)
    return cmd_usage_error (inv, error, argc < 2 ? "expected one FILE.deb or URL"
                                                 : "expected one FILE.deb or URL, got more");
  if (ref == NULL)
    return cmd_usage_error (inv, error, "--ref is required");
  if (merged_usr && no_merged_usr)
    return cmd_usage_error (inv, error, "--merged-usr and --no-merged-usr exclude each other");
  if (sha256 != NULL && !fetch_is_sha256 (sha256))
    return cmd_usage_error (inv, error, "--sha256 \"%s\" is not 64 hex digits", sha256);
  if (!repo_check_ref_name (ref, error))
    return FALSE;
  const char *source = argv[1];

  g_autoptr(OstreeRepo) repo = cmd_open_repo (inv, cancellable, error);
  if (repo == NULL)
    return FALSE;

  /* A URL with a known sha256 need not even be downloaded when REF holds
   * it; a local file is always checked first. */
  gboolean from_cache = fetch_is_url (source);
  g_autofree char *held = NULL;
  if (from_cache && sha256 != NULL)
    {
      if (!ref_holding (repo, ref, sha256, !no_merged_usr, &held, error))
        return FALSE;
      if (held != NULL)
        {
          printf ("%s\n", held);
          return TRUE;
        }
    }

  /* Verified before anything is written to the repository. */
  g_autofree char *path = NULL;
  g_autofree char *actual_sha256 = NULL;
  if (from_cache)
    {
      path = fetch_cached (source, cache ? cache : DEFAULT_CACHE, sha256, size, cancellable, error);
      if (path == NULL)
        return FALSE;
      actual_sha256 = g_path_get_basename (path);
    }
  else
    {
      path = g_strdup (source);
      actual_sha256 = check_local_deb (path, sha256, size, error);
      if (actual_sha256 == NULL)
        return FALSE;
      if (!ref_holding (repo, ref, actual_sha256, !no_merged_usr, &held, error))
        return FALSE;
      if (held != NULL)
        {
          printf ("%s\n", held);
          return TRUE;
        }
    }

  g_autoptr(RepoTxn) txn = repo_txn_begin (repo, cancellable, error);
  if (txn == NULL)
    return FALSE;
  g_autoptr(OstreeMutableTree) mtree = ostree_mutable_tree_new ();
  DebUnpackOptions opts = {
    .merged_usr = !no_merged_usr,
    .display_name = source,
    .sha256 = actual_sha256,
  };
  g_autoptr(DebInfo) info = deb_unpack_to_mtree (repo, path, &opts, mtree, cancellable, error);
  if (info == NULL)
    {
      /* A .deb that cannot be unpacked must not stay in the cache as if it
       * were good. */
      if (from_cache)
        (void) unlink (path);
      return FALSE;
    }

  for (guint i = 0; i + 1 < info->skipped->len; i += 2)
    g_printerr ("apt2ostree unpack-deb: warning: %s: \"%s\" is a %s, which OSTree cannot store; "
                "skipped\n", source, (char *) info->skipped->pdata[i],
                (char *) info->skipped->pdata[i + 1]);

  g_autofree char *subject = g_strdup_printf ("%s %s %s", info->package, info->version,
                                              info->architecture);
  g_autofree char *commit = NULL;
  if (!repo_txn_commit (txn, mtree, ref, subject, deb_commit_metadata (info), &commit,
                        cancellable, error))
    return FALSE;
  printf ("%s\n", commit);
  return TRUE;
}
