/* lock.c — from a request and its sources to a lockfile: fetch and verify
 * each source's Release and indices, resolve, describe the result. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "apt/lock.h"
#include "apt/release.h"
#include "apt/resolve.h"
#include "base/debpolicy.h"
#include "base/util.h"

void
lock_local_source_free (LockLocalSource *source)
{
  if (source == NULL)
    return;
  g_free (source->name);
  g_free (source->dir);
  g_free (source->index_path);
  g_free (source->index_sha256);
  g_free (source);
}

void
lock_local_clear (LockLocal *local)
{
  g_clear_pointer (&local->sources, g_ptr_array_unref);
  g_clear_pointer (&local->resolve_packages, g_strfreev);
}

/* merged /usr is the layout of Debian 12 (bookworm) and Ubuntu 20.10 and
 * later: decided by the first Debian or Ubuntu source. */
static gboolean
release_is_merged_usr (Release *release, gboolean *out_known)
{
  static const char *const debian_old[] = { "buzz", "rex", "bo", "hamm", "slink", "potato",
    "woody", "sarge", "etch", "lenny", "squeeze", "wheezy", "jessie", "stretch", "buster",
    "bullseye", NULL };
  *out_known = FALSE;
  if (release->origin == NULL)
    return FALSE;
  if (g_str_equal (release->origin, "Debian"))
    {
      *out_known = TRUE;
      if (release->version != NULL && g_ascii_isdigit (release->version[0]))
        return atoi (release->version) >= 12;
      return release->codename == NULL
             || !g_strv_contains (debian_old, release->codename);
    }
  if (g_str_equal (release->origin, "Ubuntu") && release->version != NULL)
    {
      *out_known = TRUE;
      return g_ascii_strtod (release->version, NULL) >= 20.10 - 0.001;
    }
  return FALSE;
}

/* One source's Release and indices, fetched in a thread of its own: the
 * sources are independent, and most of the time goes to waiting (network,
 * gpg). */
typedef struct {
  Source *source;
  const char *arch;
  const char *cache;
  GCancellable *cancellable;
  Release *release;
  GPtrArray *indices;
  GError *error;
} SourceJob;

static gpointer
fetch_source_thread (gpointer data)
{
  SourceJob *job = data;
  job->release = release_fetch (job->source, job->cancellable, &job->error);
  if (job->release != NULL)
    job->indices = release_fetch_indices (job->release, job->source, job->arch, job->cache,
                                          job->cancellable, &job->error);
  return NULL;
}

static void
source_job_clear (SourceJob *job)
{
  g_clear_pointer (&job->release, release_free);
  g_clear_pointer (&job->indices, g_ptr_array_unref);
  g_clear_error (&job->error);
}

static gboolean
check_not_older (Source *source, Release *release, Lockfile *previous, GError **error)
{
  LockSource *before = previous != NULL ? lockfile_lookup_source (previous, source->name) : NULL;
  gint64 then, now;
  if (before == NULL || before->date == NULL || release->date == NULL
      || !release_parse_date (before->date, &then))
    return TRUE;
  if (!release_parse_date (release->date, &now))
    return util_fail (error, "source \"%s\": cannot read the Release's Date \"%s\"", source->name,
                      release->date);
  if (now < then)
    return util_fail (error, "source \"%s\": the Release is dated %s, before the one the lockfile "
                      "was made from (%s); the mirror is out of date or replays an old Release",
                      source->name, release->date, before->date);
  return TRUE;
}

/* Every source's Release and indices, one thread each.  On failure: the
 * first error in the sources' order, so the error does not depend on
 * timing, and every job cleared. */
static gboolean
fetch_sources (SourceJob *jobs, guint n, GError **error)
{
  g_autofree GThread **threads = g_new0 (GThread *, n);
  for (guint i = 0; i < n; i++)
    threads[i] = g_thread_new ("source", fetch_source_thread, &jobs[i]);
  for (guint i = 0; i < n; i++)
    g_thread_join (threads[i]);
  for (guint i = 0; i < n; i++)
    if (jobs[i].error != NULL)
      {
        g_propagate_error (error, g_steal_pointer (&jobs[i].error));
        for (guint j = 0; j < n; j++)
          source_job_clear (&jobs[j]);
        return FALSE;
      }
  return TRUE;
}

/* A fetched source as the resolver reads it: its name, pin and indices. */
static ResolveSource *
resolve_source_from (SourceJob *job)
{
  ResolveSource *rs = resolve_source_new (job->source->name, job->source->pin_priority);
  for (guint j = 0; j < job->indices->len; j++)
    g_ptr_array_add (rs->index_paths, g_strdup (job->indices->pdata[j]));
  return rs;
}

/* A fetched source as the lockfile records it. */
static LockSource *
lock_source_from (const LockRequest *req, SourceJob *job)
{
  Source *source = job->source;
  Release *release = job->release;
  LockSource *ls = g_new0 (LockSource, 1);
  ls->name = g_strdup (source->name);
  ls->suite = g_strdup (source->suite);
  ls->codename = g_strdup (release->codename);
  ls->origin = g_strdup (release->origin);
  ls->version = g_strdup (release->version);
  ls->components = g_strdupv (source->components);
  const char *archs[] = { req->architecture,
                          release_has_separate_all (release) ? "all" : NULL, NULL };
  ls->architectures = g_strdupv ((char **) archs);
  ls->pin_priority = source->pin_priority;
  ls->fingerprint = g_strdup (release->fingerprint);
  ls->trusted = source->trusted;
  ls->inrelease_sha256 = g_strdup (release->file_sha256);
  ls->date = g_strdup (release->date);
  ls->uri = req->record_uris ? g_strdup (source->uri) : NULL;
  return ls;
}

/* The sources, fetched and verified: to the lockfile's sources and to the
 * resolver's (RESOLVE_SOURCES); whether the image is merged-/usr by
 * default, from the first Debian or Ubuntu source. */
static gboolean
lock_sources (Lockfile *lock, const LockRequest *req, SourcesList *sources, const char *cache,
              Lockfile *previous, GPtrArray *resolve_sources, gboolean *out_merged_usr,
              GCancellable *cancellable, GError **error)
{
  gboolean merged_usr = FALSE, merged_usr_known = FALSE;
  guint n = sources->sources->len;
  g_autofree SourceJob *jobs = g_new0 (SourceJob, n);
  for (guint i = 0; i < n; i++)
    jobs[i] = (SourceJob) { sources->sources->pdata[i], req->architecture, cache, cancellable };
  if (!fetch_sources (jobs, n, error))
    return FALSE;

  for (guint i = 0; i < n; i++)
    if (!check_not_older (jobs[i].source, jobs[i].release, previous, error))
      {
        for (guint j = 0; j < n; j++)
          source_job_clear (&jobs[j]);
        return FALSE;
      }

  for (guint i = 0; i < n; i++)
    {
      g_ptr_array_add (resolve_sources, resolve_source_from (&jobs[i]));
      if (!merged_usr_known)
        merged_usr = release_is_merged_usr (jobs[i].release, &merged_usr_known);
      g_ptr_array_add (lock->sources, lock_source_from (req, &jobs[i]));
    }
  for (guint i = 0; i < n; i++)
    source_job_clear (&jobs[i]);
  *out_merged_usr = merged_usr;
  return TRUE;
}

/* The local sources: to the resolver's and the lockfile's sources, after
 * the archives; a name an archive has is an error. */
static gboolean
lock_local_sources (Lockfile *lock, const LockRequest *req, const LockLocal *local,
                    GPtrArray *resolve_sources, GError **error)
{
  for (guint i = 0; local != NULL && i < local->sources->len; i++)
    {
      LockLocalSource *l = local->sources->pdata[i];
      if (lockfile_lookup_source (lock, l->name) != NULL)
        return util_fail (error, "local .debs \"%s\": a source of that name is already locked; "
                          "give the .debs another name ([name=NAME])", l->name);
      ResolveSource *rs = resolve_source_new (l->name, l->pin_priority);
      g_ptr_array_add (rs->index_paths, g_strdup (l->index_path));
      g_ptr_array_add (resolve_sources, rs);
      LockSource *ls = g_new0 (LockSource, 1);
      ls->name = g_strdup (l->name);
      ls->suite = g_strdup ("./");
      ls->components = g_new0 (char *, 1);
      const char *archs[] = { req->architecture, NULL };
      ls->architectures = g_strdupv ((char **) archs);
      ls->pin_priority = l->pin_priority;
      ls->inrelease_sha256 = g_strdup (l->index_sha256);
      ls->local = TRUE;
      ls->dir = g_strdup (l->dir);
      g_ptr_array_add (lock->sources, ls);
    }
  return TRUE;
}

static LockPackage *
lock_package_from (DebPackage *p, LockSource *source)
{
  LockPackage *lp = g_new0 (LockPackage, 1);
  lp->name = g_strdup (p->name);
  lp->version = g_strdup (p->version);
  lp->architecture = g_strdup (p->architecture);
  lp->source = g_strdup (p->source_name);
  /* A local .deb's index names it by its path from the lockfile; its
   * filename is Debian's canonical one, which a pool path's rules always
   * accept (the file's own name may hold a space). */
  if (source != NULL && source->local)
    {
      lp->path = g_strdup (p->filename);
      lp->filename = g_strdup_printf ("%s_%s_%s.deb", p->name, p->version, p->architecture);
    }
  else
    lp->filename = g_strdup (p->filename);
  lp->size = (gint64) p->size;
  lp->sha256 = g_strdup (p->sha256);
  lp->essential = p->essential;
  lp->priority = g_strdup (p->priority);
  lp->multi_arch = g_strdup (p->multi_arch);
  return lp;
}

/* The resolved PACKAGES (in install order) to the lockfile's packages and
 * its install order, which names a package "name:arch" only when the name
 * alone is ambiguous. */
static void
lock_packages (Lockfile *lock, GPtrArray *packages)
{
  g_autoptr(GHashTable) name_count = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < packages->len; i++)
    {
      DebPackage *p = packages->pdata[i];
      guint count = GPOINTER_TO_UINT (g_hash_table_lookup (name_count, p->name));
      g_hash_table_insert (name_count, p->name, GUINT_TO_POINTER (count + 1));
    }
  for (guint i = 0; i < packages->len; i++)
    {
      DebPackage *p = packages->pdata[i];
      g_ptr_array_add (lock->packages,
                       lock_package_from (p, lockfile_lookup_source (lock, p->source_name)));
      if (GPOINTER_TO_UINT (g_hash_table_lookup (name_count, p->name)) > 1)
        g_ptr_array_add (lock->install_order, g_strdup_printf ("%s:%s", p->name, p->architecture));
      else
        g_ptr_array_add (lock->install_order, g_strdup (p->name));
    }
}

/* The request, as it will be read back by --update. */
static void
lock_record_request (Lockfile *lock, const LockRequest *req, SourcesList *sources)
{
  lock->request.packages = g_strdupv (req->packages);
  lock->request.variant = g_strdup (req->variant);
  lock->request.architecture = g_strdup (req->architecture);
  lock->request.recommends = req->recommends;
  lock->request.sources_file = g_strdup (req->sources_file);
  lock->request.merged_usr = g_strdup (req->merged_usr);
  lock->request.suite = g_strdup (req->suite);
  lock->request.components = g_strdupv (req->components);
  lock->request.record_uris = req->record_uris;
  lock->request.path_filters = g_strdupv (req->path_filters);
  g_autoptr(GStrvBuilder) names = g_strv_builder_new ();
  for (guint i = 0; i < sources->sources->len; i++)
    g_strv_builder_add (names, ((Source *) sources->sources->pdata[i])->name);
  for (guint i = 0; i < lock->sources->len; i++)
    if (((LockSource *) lock->sources->pdata[i])->local)
      g_strv_builder_add (names, ((LockSource *) lock->sources->pdata[i])->name);
  lock->request.sources = g_strv_builder_end (names);
}

Lockfile *
lock_resolve (const LockRequest *req, SourcesList *sources, const LockLocal *local,
              const char *cache, Lockfile *previous, GCancellable *cancellable, GError **error)
{
  g_autoptr(Lockfile) lock = lockfile_new ();
  g_autoptr(GPtrArray) resolve_sources = g_ptr_array_new_with_free_func ((GDestroyNotify) resolve_source_free);
  gboolean merged_usr = FALSE;

  for (guint i = 0; i < sources->sources->len; i++)
    if (!source_check_uri (sources->sources->pdata[i], error))
      return NULL;
  if (!lock_sources (lock, req, sources, cache, previous, resolve_sources, &merged_usr,
                     cancellable, error)
      || !lock_local_sources (lock, req, local, resolve_sources, error))
    return NULL;

  /* Parsed indices are kept beside the downloaded ones: a warm lock reads
   * them back instead of decompressing and parsing the whole archive. */
  g_autofree char *parsed_cache = cache != NULL ? g_build_filename (cache, "parsed", NULL) : NULL;
  char **wanted = local != NULL && local->resolve_packages != NULL ? local->resolve_packages
                                                                     : req->packages;
  ResolveRequest request = { wanted, req->variant, req->architecture, req->recommends,
                             parsed_cache };
  g_autoptr(GPtrArray) packages = resolve_request (resolve_sources, &request, error);
  if (packages == NULL)
    return NULL;
  lock_packages (lock, packages);
  lockfile_sort (lock);

  if (g_str_equal (req->merged_usr, "yes"))
    merged_usr = TRUE;
  else if (g_str_equal (req->merged_usr, "no"))
    merged_usr = FALSE;
  lock->merged_usr = merged_usr;
  lock_record_request (lock, req, sources);
  return g_steal_pointer (&lock);
}


const char *const *
lock_variants (void)
{
  return resolve_variants ();
}

/* --- what lock is asked --- */

/* The package list: one package a line ("name", "name=version",
 * "name:arch", or a local .deb's path: a line with a "/" that ends in
 * ".deb", relative to the list's directory), "#" comments and blank
 * lines. */
char **
lock_read_package_list (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  g_autoptr(GError) local_error = NULL;
  if (!g_file_get_contents (path, &text, NULL, &local_error))
    return util_fail (error, "package list %s: %s", path, local_error->message), NULL;

  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *hash = strchr (lines[i], '#');
      if (hash != NULL)
        *hash = '\0';
      g_strstrip (lines[i]);
      if (*lines[i] == '\0')
        continue;
      if (strpbrk (lines[i], " \t") != NULL)
        return util_fail (error, "package list %s:%u: \"%s\": one package a line", path, i + 1,
                          lines[i]), NULL;
      const char *problem = lockfile_is_local_deb (lines[i]) ? debpolicy_text_problem (lines[i])
                                                             : debpolicy_request_problem (lines[i]);
      g_autofree char *shown = g_strescape (lines[i], NULL);
      if (problem != NULL)
        return util_fail (error, "package list %s:%u: \"%s\" %s; write NAME, NAME=VERSION or "
                          "NAME:ARCH or a .deb's path", path, i + 1, shown, problem), NULL;
      g_strv_builder_add (b, lines[i]);
    }
  return g_strv_builder_end (b);
}

/* "dir/foo.txt" -> "dir/foo.lock.json" */
char *
lock_default_output (const char *packages_path)
{
  g_autofree char *base = g_strdup (packages_path);
  if (g_str_has_suffix (base, ".txt"))
    base[strlen (base) - 4] = '\0';
  return g_strconcat (base, ".lock.json", NULL);
}

char *
lock_host_architecture (GError **error)
{
  g_autofree char *out = NULL;
  int status;
  const char *argv[] = { "dpkg", "--print-architecture", NULL };
  g_autoptr(GError) local_error = NULL;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                     NULL, NULL, &out, NULL, &status, &local_error)
      || !g_spawn_check_wait_status (status, NULL))
    return util_fail (error, "cannot ask dpkg for the host architecture (%s); give --arch",
                      local_error != NULL ? local_error->message : "dpkg failed"), NULL;
  return g_strdup (g_strstrip (out));
}

/* --mirror NAME=URI for lock: NAME must be one of the sources being locked
 * (for build, an unknown name adds a source; here it would be a typo). */
static gboolean
apply_mirrors (SourcesList *sources, char **mirrors, GError **error)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  for (guint i = 0; i < sources->sources->len; i++)
    g_strv_builder_add (b, ((Source *) sources->sources->pdata[i])->name);
  g_auto(GStrv) names = g_strv_builder_end (b);
  return sources_list_apply_mirrors (sources, (const char *const *) mirrors,
                                     (const char *const *) names, "the sources being locked", error);
}

/* The sources LOCK's request names that are archives, not local .debs. */
static GStrv
archive_source_names (Lockfile *lock)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  for (char **n = lock->request.sources; *n != NULL; n++)
    {
      LockSource *s = lockfile_lookup_source (lock, *n);
      if (s == NULL || !s->local)
        g_strv_builder_add (b, *n);
    }
  return g_strv_builder_end (b);
}

SourcesList *
lock_load_sources (const char *sources_path, const char *suite, const char *const *components,
                   Lockfile *previous, const char *arch, char **mirrors, GError **error)
{
  g_autoptr(SourcesList) sources = sources_load (sources_path, error);
  if (sources == NULL)
    return NULL;
  if (suite != NULL && !sources_list_set_suite (sources, suite, error))
    return NULL;
  if (components != NULL && !sources_list_set_components (sources, components, error))
    return NULL;
  if (previous != NULL)
    {
      g_auto(GStrv) archives = archive_source_names (previous);
      if (!sources_list_select (sources, (const char *const *) archives, error))
        return NULL;
    }
  else
    {
      sources_list_filter_arch (sources, arch);
      if (sources->sources->len == 0)
        return util_fail (error, "no source carries architecture %s", arch), NULL;
    }
  if (!apply_mirrors (sources, mirrors, error))
    return NULL;
  return g_steal_pointer (&sources);
}
