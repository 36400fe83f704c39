/* unpack.c — unpack-deb's options, jobs and run, over an UnpackRepo. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apt/cache.h"
#include "apt/fetchclient.h"
#include "base/debpolicy.h"
#include "base/progress.h"
#include "barestore/refs.h"
#include "deb/unpack.h"
#include "base/util.h"

#define DEFAULT_CACHE "build/cache/debs"

G_DEFINE_QUARK (apt2ostree-unpack-error-quark, unpack_error)

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
  g_autofree char *sha256 = cache_sha256_file (path, error);
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
ref_holding (UnpackRepo *repo, const char *ref, const char *sha256, gboolean merged_usr,
             char **out_commit, GError **error)
{
  guint64 epoch;
  g_autofree char *commit = NULL;
  if (!util_source_date_epoch (&epoch, error) || !repo->read_ref (repo, ref, &commit, error))
    return FALSE;
  g_autoptr(GVariant) commit_v = commit != NULL ? repo->load_commit (repo, commit) : NULL;
  if (commit_v != NULL && deb_commit_is_unpack_of (commit_v, sha256, merged_usr, epoch))
    *out_commit = g_steal_pointer (&commit);
  return TRUE;
}

/* One package to unpack: what the command line or a --batch line names. */
typedef struct {
  char *ref;
  char *source;  /* FILE.deb or URL */
  char **fallbacks;  /* more URLs of the same .deb, tried in order when one
                      * does not have it or does not answer, or NULL */
  char *sha256;  /* expected, or NULL */
  gint64 size;   /* expected, or -1 */
  char *where;   /* "LIST:N" for a --batch line, or NULL */
  char *path;    /* the verified .deb: the file, or its copy in the cache */
  char *actual_sha256;
  char *commit;  /* the result (or the commit its ref holds already) */
  GPtrArray *skipped;  /* of the DebInfo, to report */
} UnpackJob;

static void
unpack_job_free (UnpackJob *job)
{
  g_free (job->ref);
  g_free (job->source);
  g_strfreev (job->fallbacks);
  g_free (job->sha256);
  g_free (job->where);
  g_free (job->path);
  g_free (job->actual_sha256);
  g_free (job->commit);
  if (job->skipped != NULL)
    g_ptr_array_unref (job->skipped);
  g_free (job);
}

static UnpackJob *
unpack_job_new (const char *ref, const char *source, const char *sha256, gint64 size,
                const char *where)
{
  UnpackJob *job = g_new0 (UnpackJob, 1);
  job->ref = g_strdup (ref);
  job->source = g_strdup (source);
  job->sha256 = g_strdup (sha256);
  job->size = size;
  job->where = g_strdup (where);
  return job;
}

/* JOB's .deb from URL, through the cache's fetch service when it serves
 * the URL (kept connections, the build's download lists ahead; it sends
 * the progress a terminal shows), else with FETCH. */
static char *
fetch_from_service (const char *url, UnpackJob *job, const UnpackArgs *args, UnpackFetch fetch,
                    GError **error)
{
  if (job->sha256 != NULL && fetch_client_serves (url))
    {
      g_autoptr(GError) local_error = NULL;
      char *path = fetch_client_get (args->cache, url, job->sha256, job->size, args->repo,
                                     &local_error);
      if (path != NULL)
        return path;
      if (!g_error_matches (local_error, FETCH_CLIENT_ERROR, FETCH_CLIENT_ERROR_UNAVAILABLE))
        return g_propagate_error (error, g_steal_pointer (&local_error)), NULL;
      g_debug ("%s: %s; downloading it here", url, local_error->message);
    }
  return fetch (url, args->cache, job->sha256, job->size, error);
}

/* JOB's .deb from the first of its URLs that has it.  A URL that does not
 * answer or lacks the file moves on to the next; one that serves other
 * bytes than the sha256 says is an error naming it (a tampered or
 * different archive is never skipped over).  The lean front's "not here"
 * is passed on as it is. */
static char *
fetch_any (UnpackJob *job, const UnpackArgs *args, UnpackFetch fetch, GError **error)
{
  g_autoptr(GPtrArray) urls = g_ptr_array_new ();
  g_ptr_array_add (urls, job->source);
  for (char **f = job->fallbacks; f != NULL && *f != NULL; f++)
    g_ptr_array_add (urls, *f);
  g_autoptr(GString) tried = g_string_new ("");
  for (guint i = 0; i < urls->len; i++)
    {
      g_autoptr(GError) local_error = NULL;
      char *path = fetch_from_service (urls->pdata[i], job, args, fetch, &local_error);
      if (path != NULL)
        return path;
      /* Other bytes than promised, the lean path's "not here", or the one
       * URL's own error (with the way out when the file is gone). */
      if (g_error_matches (local_error, UTIL_ERROR, UTIL_ERROR_MISMATCH)
          || g_error_matches (local_error, UNPACK_ERROR, UNPACK_ERROR_DEFER))
        return g_propagate_error (error, g_steal_pointer (&local_error)), NULL;
      if (urls->len == 1 && g_error_matches (local_error, UTIL_ERROR, UTIL_ERROR_NOT_FOUND))
        return util_fail (error, "%s; add a fallback URI that still serves it (a snapshot "
                          "archive): --mirror NAME=URI given once more, or another URIs: value of "
                          "the source", local_error->message), NULL;
      if (urls->len == 1)
        return g_propagate_error (error, g_steal_pointer (&local_error)), NULL;
      g_string_append_printf (tried, "; %s", local_error->message);
    }
  return util_fail (error, "no URI has the .deb with sha256 %s (%u tried%s); add a fallback URI "
                    "that still serves it (a snapshot archive): --mirror NAME=URI given once more, "
                    "or another URIs: value of the source", job->sha256 != NULL ? job->sha256 : "-",
                    urls->len, tried->str), NULL;
}

/* Find JOB's .deb and verify it (downloading it first, with FETCH, for a
 * URL), or find that its ref already holds it (job->commit).  Nothing is
 * written to the repository. */
static gboolean
prepare_job (UnpackRepo *repo, UnpackJob *job, const UnpackArgs *args, UnpackFetch fetch,
             GError **error)
{
  /* "ftp://..." is not a file name that happens to be missing. */
  if (!cache_is_url (job->source) && strstr (job->source, "://") != NULL)
    {
      g_autofree char *problem = debpolicy_uri_problem (job->source);
      return util_fail (error, "%s: the URL %s", job->source, problem);
    }
  /* A URL with a known sha256 need not even be downloaded when the ref
   * holds it; a local file is always checked first. */
  if (cache_is_url (job->source))
    {
      if (job->sha256 != NULL
          && !ref_holding (repo, job->ref, job->sha256, args->merged_usr, &job->commit, error))
        return FALSE;
      if (job->commit != NULL)
        return TRUE;
      job->path = fetch_any (job, args, fetch, error);
      if (job->path == NULL)
        return FALSE;
      job->actual_sha256 = g_path_get_basename (job->path);
      return TRUE;
    }
  job->actual_sha256 = check_local_deb (job->source, job->sha256, job->size, error);
  if (job->actual_sha256 == NULL)
    return FALSE;
  job->path = g_strdup (job->source);
  return ref_holding (repo, job->ref, job->actual_sha256, args->merged_usr, &job->commit, error);
}

/* Unpack the prepared JOB into REPO's transaction (begun here when *SINK
 * is still NULL).  Sets job->commit. */
static gboolean
unpack_job (UnpackRepo *repo, StoreSink **sink, UnpackJob *job, const UnpackArgs *args,
            GError **error)
{
  guint64 epoch;
  if (!util_source_date_epoch (&epoch, error))
    return FALSE;
  if (*sink == NULL && (*sink = repo->begin (repo, error)) == NULL)
    return FALSE;
  /* (After a download's line: the download is over.) */
  g_autofree char *name = g_path_get_basename (job->source);
  progress_say ("unpacking %s", name);
  DebUnpackOptions opts = {
    .merged_usr = args->merged_usr,
    .display_name = job->source,
    .sha256 = job->actual_sha256,
  };
  g_autoptr(DebInfo) info = deb_unpack (*sink, job->path, &opts, epoch, &job->commit, error);
  if (info == NULL)
    {
      /* A .deb that cannot be unpacked must not stay in the cache as if it
       * were good. */
      if (cache_is_url (job->source))
        (void) unlink (job->path);
      return FALSE;
    }
  job->skipped = g_steal_pointer (&info->skipped);
  return repo->set_ref (repo, job->ref, job->commit, error);
}

/* The fields of one --batch line: REF SOURCE [SHA256|- [SIZE]]. */
static UnpackJob *
batch_line_parse (const char *where, char **fields, guint n, GError **error)
{
  if (n < 2 || n > 4)
    return util_fail (error, "%s: expected \"REF FILE.deb|URL [SHA256|- [SIZE]]\", got %u field%s",
                      where, n, n == 1 ? "" : "s"), NULL;
  g_autoptr(GError) local_error = NULL;
  if (!refs_check_name (fields[0], &local_error))
    return util_fail (error, "%s: %s", where, local_error->message), NULL;
  const char *sha256 = n >= 3 && !g_str_equal (fields[2], "-") ? fields[2] : NULL;
  if (sha256 != NULL && !cache_is_sha256 (sha256))
    return util_fail (error, "%s: sha256 \"%s\" is not 64 hex digits", where, sha256), NULL;
  guint64 size = 0;
  if (n == 4 && !g_ascii_string_to_unsigned (fields[3], 10, 0, G_MAXINT64, &size, NULL))
    return util_fail (error, "%s: size \"%s\" is not a number of bytes", where, fields[3]), NULL;
  return unpack_job_new (fields[0], fields[1], sha256, n == 4 ? (gint64) size : -1, where);
}

/* Standard input, whole. */
static char *
read_stdin (gsize *out_len, GError **error)
{
  GString *text = g_string_new (NULL);
  char buf[65536];
  for (;;)
    {
      ssize_t n = read (STDIN_FILENO, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int errsv = errno;
          g_string_free (text, TRUE);
          return util_fail (error, "standard input: %s", g_strerror (errsv)), NULL;
        }
      if (n == 0)
        break;
      g_string_append_len (text, buf, n);
    }
  *out_len = text->len;
  return g_string_free (text, FALSE);
}

/* The jobs a --batch file (or "-", standard input) lists, one per line;
 * blank lines and lines starting with # are skipped. */
static GPtrArray *
batch_read (const char *file, GError **error)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr(GError) local_error = NULL;
  if (g_str_equal (file, "-"))
    {
      text = read_stdin (&len, error);
      if (text == NULL)
        return NULL;
    }
  else if (!g_file_get_contents (file, &text, &len, &local_error))
    return util_fail (error, "%s", local_error->message), NULL;
  if (memchr (text, '\0', len) != NULL)
    return util_fail (error, "%s: not a text file", file), NULL;

  g_autoptr(GPtrArray) jobs = g_ptr_array_new_with_free_func ((GDestroyNotify) unpack_job_free);
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_auto(GStrv) lines = g_strsplit (text ? text : "", "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autofree char *where = g_strdup_printf ("%s:%u", file, i + 1);
      g_auto(GStrv) words = g_strsplit_set (lines[i], " \t\r", -1);
      g_autoptr(GPtrArray) fields = g_ptr_array_new ();
      for (char **w = words; *w != NULL; w++)
        if (**w != '\0')
          g_ptr_array_add (fields, *w);
      if (fields->len == 0 || *(char *) fields->pdata[0] == '#')
        continue;
      UnpackJob *job = batch_line_parse (where, (char **) fields->pdata, fields->len, error);
      if (job == NULL)
        return NULL;
      g_ptr_array_add (jobs, job);
      guint first = GPOINTER_TO_UINT (g_hash_table_lookup (seen, job->ref));
      if (first != 0)
        return util_fail (error, "%s: ref \"%s\" is already written by line %u", where, job->ref,
                          first), NULL;
      g_hash_table_insert (seen, job->ref, GUINT_TO_POINTER (i + 1));
    }
  if (jobs->len == 0)
    return util_fail (error, "%s: no packages listed", file), NULL;
  return g_steal_pointer (&jobs);
}

void
unpack_args_clear (UnpackArgs *args)
{
  g_clear_pointer (&args->jobs, g_ptr_array_unref);
  g_clear_pointer (&args->cache, g_free);
  g_clear_pointer (&args->repo, g_free);
}

gboolean
unpack_args_parse (CmdInvocation *inv, int argc, char **argv, UnpackArgs *args, GError **error)
{
  g_autofree char *ref = NULL;
  g_autofree char *sha256 = NULL;
  g_autofree char *cache = NULL;
  g_autofree char *batch = NULL;
  gint64 size = G_MININT64;  /* not given: no size check */
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
    { "batch", 0, 0, G_OPTION_ARG_FILENAME, &batch,
      "Unpack every package LIST names, one \"REF FILE.deb|URL [SHA256|- [SIZE]]\" per line "
      "(- reads standard input), in one transaction", "LIST" },
    { NULL }
  };
  if (!cmd_parse (inv, "--ref REF (FILE.deb | URL) | --batch LIST",
                  "Unpack one Debian package into an OSTree commit at REF.\n"
                  "URL may be http://, https:// or file://; downloads are cached by sha256.\n"
                  "--batch unpacks many packages, each into its own ref, in one process and one\n"
                  "transaction: no ref is written unless every package unpacks.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (merged_usr && no_merged_usr)
    return cmd_usage_error (inv, error, "--merged-usr and --no-merged-usr exclude each other");
  /* A negative size would turn the size check off without a word. */
  if (size != G_MININT64 && size < 0)
    return cmd_usage_error (inv, error, "--size %" G_GINT64_FORMAT " is not a number of bytes (0 or "
                            "more)", size);

  if (batch != NULL)
    {
      if (argc != 1)
        return cmd_usage_error (inv, error, "--batch takes its packages from LIST, not from "
                                            "the command line");
      if (ref != NULL || sha256 != NULL || size != G_MININT64)
        return cmd_usage_error (inv, error, "--ref, --sha256 and --size go on each line of the "
                                            "--batch list");
      args->jobs = batch_read (batch, error);
      if (args->jobs == NULL)
        return FALSE;
    }
  else
    {
      if (argc < 2)
        return cmd_usage_error (inv, error, "expected one FILE.deb or URL");
      for (int i = 2; i < argc; i++)
        if (!cache_is_url (argv[1]) || !cache_is_url (argv[i]))
          return cmd_usage_error (inv, error, "expected one FILE.deb, or URLs of one .deb (tried "
                                              "in order), got \"%s\" after \"%s\"", argv[i], argv[1]);
      if (ref == NULL)
        return cmd_usage_error (inv, error, "--ref is required");
      if (sha256 != NULL && !cache_is_sha256 (sha256))
        return cmd_usage_error (inv, error, "--sha256 \"%s\" is not 64 hex digits", sha256);
      if (!refs_check_name (ref, error))
        return FALSE;
      args->jobs = g_ptr_array_new_with_free_func ((GDestroyNotify) unpack_job_free);
      UnpackJob *job = unpack_job_new (ref, argv[1], sha256, size == G_MININT64 ? -1 : size, NULL);
      if (argc > 2)
        job->fallbacks = g_strdupv (argv + 2);
      g_ptr_array_add (args->jobs, job);
    }
  args->cache = g_strdup (cache ? cache : DEFAULT_CACHE);
  args->repo = g_strdup (cmd_repo_path (inv));
  args->merged_usr = !no_merged_usr;
  args->batch = batch != NULL;
  return TRUE;

}

/* JOB's error: a --batch line names its place in the list. */
static gboolean
job_fail (UnpackJob *job, GError **error)
{
  if (job->where != NULL)
    g_prefix_error (error, "%s: ", job->where);
  return FALSE;
}

gboolean
unpack_run (UnpackRepo *repo, const UnpackArgs *args, UnpackFetch fetch, GError **error)
{
  /* Every package found and verified first: nothing is written while a
   * later one may still fail (or, in the lean front, be handed over). */
  for (guint i = 0; i < args->jobs->len; i++)
    {
      UnpackJob *job = args->jobs->pdata[i];
      if (!prepare_job (repo, job, args, fetch, error))
        return job_fail (job, error);
    }
  StoreSink *sink = NULL;
  for (guint i = 0; i < args->jobs->len; i++)
    {
      UnpackJob *job = args->jobs->pdata[i];
      if (job->commit == NULL && !unpack_job (repo, &sink, job, args, error))
        return job_fail (job, error);
    }
  /* The refs are written only now, all together, after the objects are
   * safely on disk. */
  if (sink != NULL && !repo->finish (repo, error))
    return FALSE;

  for (guint i = 0; i < args->jobs->len; i++)
    {
      UnpackJob *job = args->jobs->pdata[i];
      for (guint k = 0; job->skipped != NULL && k + 1 < job->skipped->len; k += 2)
        g_printerr ("apt2ostree unpack-deb: warning: %s: \"%s\" is a %s, which OSTree cannot "
                    "store; skipped\n", job->source, (char *) job->skipped->pdata[k],
                    (char *) job->skipped->pdata[k + 1]);
      if (args->batch)
        printf ("%s %s\n", job->commit, job->ref);
      else
        printf ("%s\n", job->commit);
    }
  return TRUE;
}
