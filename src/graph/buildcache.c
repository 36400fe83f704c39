/* buildcache.c — a build's trees from a shared cache; see buildcache.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "graph/buildcache.h"
#include "graph/imagespec.h"
#include "store/cachefetch.h"
#include "store/cachepull.h"
#include "store/repo.h"

void
buildcache_clear (BuildCache *cache)
{
  g_clear_pointer (&cache->url, g_free);
  g_clear_pointer (&cache->key_path, g_free);
}

gboolean
buildcache_check (BuildCache *cache, GError **error)
{
  if (cache->url != NULL && !g_str_has_prefix (cache->url, "http://")
      && !g_str_has_prefix (cache->url, "https://") && !g_str_has_prefix (cache->url, "file:///"))
    return util_fail (error, "--cache-url \"%s\" is not an http://, https:// or file:/// URL",
                      cache->url);
  if (cache->key_path == NULL)
    return TRUE;
  if (cache->url == NULL)
    return util_fail (error, "--cache-key goes with --cache-url");
  if (access (cache->key_path, R_OK) != 0)
    return util_fail (error, "--cache-key %s: cannot read it", cache->key_path);
  char *absolute = g_canonicalize_filename (cache->key_path, NULL);
  g_free (cache->key_path);
  cache->key_path = absolute;
  return TRUE;
}

char *
buildcache_ref (const char *kind, const char *const *inputs)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  /* Each part ends in a NUL, so no two lists of parts hash alike. */
  const char *head[] = { "apt2ostree", PACKAGE_VERSION, kind };
  for (guint i = 0; i < G_N_ELEMENTS (head); i++)
    g_checksum_update (sum, (const guchar *) head[i], strlen (head[i]) + 1);
  for (const char *const *in = inputs; *in != NULL; in++)
    g_checksum_update (sum, (const guchar *) *in, strlen (*in) + 1);
  return g_strconcat ("cache/", kind, "/", g_checksum_get_string (sum), NULL);
}

gboolean
buildcache_is_build_ref (const char *ref)
{
  if (g_str_has_prefix (ref, "deb/") || g_str_has_prefix (ref, "cache/"))
    return TRUE;
  g_autofree char *image = imagespec_image_of_stage_ref (ref);
  return image != NULL;
}

/* A cache that ran past a deadline is not asked again for
 * $APT2OSTREE_CACHE_TIMEOUT seconds: every edge of a build is a process of
 * its own, and without a memory of it each would wait out its own
 * deadline on the same slow or stalling server, one after another.  The
 * memory is a file in the repository's tmp/ directory, named after the
 * cache's URL, holding the error; its mtime says when. */
static char *
timed_out_name (const char *url)
{
  g_autofree char *hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256, url, -1);
  return g_strdup_printf ("tmp/apt2ostree-cache-timed-out-%.16s", hash);
}

/* How many seconds ago the cache at URL last ran past a deadline, when
 * that was within $APT2OSTREE_CACHE_TIMEOUT; else -1. */
static gint64
timed_out_ago (OstreeRepo *repo, const char *url)
{
  g_autofree char *name = timed_out_name (url);
  struct stat st;
  if (fstatat (ostree_repo_get_dfd (repo), name, &st, AT_SYMLINK_NOFOLLOW) != 0
      || !S_ISREG (st.st_mode))
    return -1;
  gint64 ago = (gint64) time (NULL) - (gint64) st.st_mtime;
  return ago >= 0 && ago < (gint64) cachefetch_timeout () ? ago : -1;
}

/* Remember that the cache at URL ran past a deadline (ERROR).  A file that
 * cannot be written costs time, not correctness. */
static void
remember_timed_out (OstreeRepo *repo, const char *url, const GError *error)
{
  g_autofree char *name = timed_out_name (url);
  g_autofree char *tmp = g_strdup_printf ("%s.%d", name, (int) getpid ());
  int dfd = ostree_repo_get_dfd (repo);
  int fd = openat (dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  g_autofree char *line = g_strconcat (error->message, "\n", NULL);
  gboolean ok = write (fd, line, strlen (line)) == (ssize_t) strlen (line);
  ok = close (fd) == 0 && ok;
  if (!ok || renameat (dfd, tmp, dfd, name) != 0)
    (void) unlinkat (dfd, tmp, 0);
}

G_DEFINE_QUARK (buildcache-error-quark, buildcache_error)

/* A cache whose commits were refused for their signature (a wrong
 * --cache-key) would refuse every other one alike: each edge of a build
 * is a process of its own, and without a memory of it each would say so
 * in a line of its own.  The memory is a file in the repository's tmp/
 * directory, named after the cache's URL and key file: its first line
 * the reason, then the ref of each tree refused, one a line.  It holds
 * for as long as a timed-out cache is not asked (its mtime says when it
 * was made); "build" forgets it when it starts. */
static char *
refused_name (const BuildCache *cache)
{
  g_autofree char *id = g_strconcat (cache->url, "\n", cache->key_path, NULL);
  g_autofree char *hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256, id, -1);
  return g_strdup_printf ("tmp/apt2ostree-cache-refused-%.16s", hash);
}

/* The reason the cache of CACHE was refused, when that is remembered and
 * recent; else NULL. */
static char *
refused_reason (OstreeRepo *repo, const BuildCache *cache)
{
  if (cache->key_path == NULL)
    return NULL;
  g_autofree char *name = refused_name (cache);
  int dfd = ostree_repo_get_dfd (repo);
  struct stat st;
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG (st.st_mode))
    return NULL;
  gint64 ago = (gint64) time (NULL) - (gint64) st.st_mtime;
  if (ago < 0 || ago >= (gint64) cachefetch_timeout ())
    return NULL;
  g_autofree char *path = g_strdup_printf ("/proc/self/fd/%d/%s", dfd, name);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  char *nl = strchr (text, '\n');
  return g_strndup (text, nl != NULL ? (gsize) (nl - text) : strlen (text));
}

/* Add REF to the memory of CACHE's refusal, made with REASON when there is
 * none: TRUE when this call made it.  A file that cannot be written costs
 * lines, not correctness. */
static gboolean
remember_refused (OstreeRepo *repo, const BuildCache *cache, const char *ref, const char *reason)
{
  g_autofree char *name = refused_name (cache);
  int dfd = ostree_repo_get_dfd (repo);
  gboolean made = TRUE;
  int fd = openat (dfd, name, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   0644);
  if (fd < 0 && errno == EEXIST)
    {
      made = FALSE;
      fd = openat (dfd, name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    }
  if (fd < 0)
    return made;
  g_autofree char *text = made ? g_strconcat (reason, "\n", ref, "\n", NULL)
                               : g_strconcat (ref, "\n", NULL);
  /* One write(), so that lines of processes at once do not interleave. */
  (void) !write (fd, text, strlen (text));
  close (fd);
  return made;
}

void
buildcache_forget_refused (OstreeRepo *repo, const BuildCache *cache)
{
  if (cache->url == NULL || cache->key_path == NULL)
    return;
  g_autofree char *name = refused_name (cache);
  (void) unlinkat (ostree_repo_get_dfd (repo), name, 0);
}

void
buildcache_say_refused (OstreeRepo *repo, const BuildCache *cache, GCancellable *cancellable)
{
  g_autofree char *reason = refused_reason (repo, cache);
  if (reason == NULL)
    return;
  g_autofree char *name = refused_name (cache);
  g_autofree char *path = g_strdup_printf ("/proc/self/fd/%d/%s", ostree_repo_get_dfd (repo),
                                           name);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return;
  guint refused = 0;
  for (const char *c = strchr (text, '\n'); c != NULL && c[1] != '\0'; c = strchr (c + 1, '\n'))
    refused++;
  CachePullSource source = { cache->url, cache->key_path };
  g_autofree char *fpr = cachepull_key_fingerprint (repo, &source, cancellable);
  g_autofree char *key = fpr != NULL ? g_strdup_printf ("%s (key %s)", cache->key_path, fpr)
                                     : g_strdup (cache->key_path);
  fprintf (stderr, "apt2ostree: the cache %s: %u tree%s refused and built here: the commits are "
           "not signed by --cache-key %s (%s); give --cache-key the public key the cache is "
           "published with (publish --gpg-sign), or leave --cache-url out; -v: the refused trees\n",
           cache->url, refused, refused == 1 ? "" : "s", key, reason);
}

gboolean
buildcache_list_refused (OstreeRepo *repo, const BuildCache *cache)
{
  g_autofree char *reason = refused_reason (repo, cache);
  if (reason == NULL)
    return FALSE;
  g_autofree char *name = refused_name (cache);
  g_autofree char *path = g_strdup_printf ("/proc/self/fd/%d/%s", ostree_repo_get_dfd (repo),
                                           name);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  const char *refs = strchr (text, '\n');
  if (refs != NULL)
    fprintf (stderr, "%s", refs + 1);
  return TRUE;
}

char *
buildcache_try_fetch (OstreeRepo *repo, const BuildCache *cache, const char *cache_ref,
                      const char *out_ref, GCancellable *cancellable, GError **error)
{
  gint64 ago = timed_out_ago (repo, cache->url);
  if (ago >= 0)
    {
      g_autofree char *name = timed_out_name (cache->url);
      return util_fail_code (error, CACHEFETCH_ERROR, CACHEFETCH_ERROR_TIMED_OUT,
                             "it ran past a deadline %" G_GINT64_FORMAT " s ago and is not "
                             "asked again for %u s; remove %s in the repository to ask it now",
                             ago, cachefetch_timeout (), name), NULL;
    }

  g_autofree char *refused = refused_reason (repo, cache);
  if (refused != NULL)
    {
      remember_refused (repo, cache, out_ref, refused);
      return util_fail_code (error, BUILDCACHE_ERROR, BUILDCACHE_ERROR_REFUSED_BEFORE, "%s",
                             refused), NULL;
    }

  /* (cache-pull asks for a cache ref by its own name.)  The refs are
   * written with the objects, in one transaction. */
  const char *set_refs[] = { out_ref, strcmp (out_ref, cache_ref) != 0 ? cache_ref : NULL, NULL };
  CachePullSource source = { cache->url, cache->key_path };
  g_autoptr(GError) local_error = NULL;
  g_autofree char *commit = cachepull_pull (repo, &source, cache_ref, set_refs, cancellable,
                                            &local_error);
  if (commit != NULL)
    return g_steal_pointer (&commit);
  if (g_error_matches (local_error, CACHEFETCH_ERROR, CACHEFETCH_ERROR_TIMED_OUT))
    remember_timed_out (repo, cache->url, local_error);
  /* (An error of libostree's pull may run over several lines.) */
  g_strdelimit (local_error->message, "\n", ' ');
  if (g_error_matches (local_error, CACHEFETCH_ERROR, CACHEFETCH_ERROR_SIGNATURE)
      && !remember_refused (repo, cache, out_ref, local_error->message))
    local_error->domain = BUILDCACHE_ERROR, local_error->code = BUILDCACHE_ERROR_REFUSED_BEFORE;
  g_propagate_error (error, g_steal_pointer (&local_error));
  return NULL;
}

char *
buildcache_fetch_result (OstreeRepo *repo, const BuildCache *cache, const char *cache_ref,
                         const char *out_ref, const char *what, GCancellable *cancellable)
{
  g_autoptr(GError) local_error = NULL;
  char *commit = buildcache_try_fetch (repo, cache, cache_ref, out_ref, cancellable,
                                       &local_error);
  if (commit == NULL && g_error_matches (local_error, CACHEFETCH_ERROR, CACHEFETCH_ERROR_SIGNATURE))
    fprintf (stderr, "apt2ostree: %s: not from the cache %s (%s); building it, and every other "
             "tree this cache is asked for (it is not asked again for %u s)\n", what, cache->url,
             local_error->message, cachefetch_timeout ());
  else if (commit == NULL
           && !g_error_matches (local_error, BUILDCACHE_ERROR, BUILDCACHE_ERROR_REFUSED_BEFORE))
    fprintf (stderr, "apt2ostree: %s: not from the cache %s (%s); building it\n", what,
             cache->url, local_error->message);
  return commit;
}

gboolean
buildcache_set_refs (OstreeRepo *repo, const char *const *refs, const char *commit,
                     GCancellable *cancellable, GError **error)
{
  g_autoptr(RepoTxn) txn = repo_txn_begin (repo, cancellable, error);
  if (txn == NULL)
    return FALSE;
  for (const char *const *r = refs; *r != NULL; r++)
    repo_txn_set_ref (txn, *r, commit);
  return repo_txn_finish (txn, cancellable, error);
}

gboolean
buildcache_record_result (OstreeRepo *repo, const char *out_ref, const char *cache_ref,
                          GCancellable *cancellable, GError **error)
{
  g_autofree char *commit = repo_read_ref (repo, out_ref);
  if (commit == NULL)
    return util_fail (error, "ref \"%s\" vanished", out_ref);
  /* (A build that changed nothing writes nothing.) */
  g_autofree char *recorded = repo_read_ref (repo, cache_ref);
  if (g_strcmp0 (recorded, commit) == 0)
    return TRUE;
  const char *refs[] = { cache_ref, NULL };
  return buildcache_set_refs (repo, refs, commit, cancellable, error);
}

char *
buildcache_stage1_ref (const char *arch, const char *const *filters, GPtrArray *revs)
{
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (inputs, g_strdup (arch));
  for (const char *const *f = filters; f != NULL && *f != NULL; f++)
    g_ptr_array_add (inputs, g_strconcat ("filter=", *f, NULL));
  for (guint i = 0; i < revs->len; i++)
    g_ptr_array_add (inputs, g_strdup (((RepoRev *) revs->pdata[i])->commit));
  g_ptr_array_add (inputs, NULL);
  return buildcache_ref ("stage1", (const char *const *) inputs->pdata);
}

char *
buildcache_configured_ref (const char *stage1_commit, const char *const *hooks, GError **error)
{
  guint64 epoch;
  if (!util_source_date_epoch (&epoch, error))
    return NULL;
  g_autofree char *epoch_text = g_strdup_printf ("%" G_GUINT64_FORMAT, epoch);
  g_autoptr(GPtrArray) inputs = g_ptr_array_new ();
  g_ptr_array_add (inputs, (char *) stage1_commit);
  g_ptr_array_add (inputs, epoch_text);
  for (const char *const *h = hooks; h != NULL && *h != NULL; h++)
    g_ptr_array_add (inputs, (char *) *h);
  g_ptr_array_add (inputs, NULL);
  return buildcache_ref ("configured", (const char *const *) inputs->pdata);
}
