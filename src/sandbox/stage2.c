/* stage2.c — dpkg --configure -a over an unpacked image, in the sandbox.
 *
 * The packages were unpacked by apt2ostree, not by dpkg, so stage 2 first
 * does what dpkg (and a bootstrap tool) would have done by then, in this
 * order:
 *   1. /etc/passwd and /etc/group from base-passwd's masters, so that the
 *      maintainer scripts find root, shadow, etc.;
 *   2. a policy-rc.d that forbids starting services;
 *   3. every package's preinst ("install"), in install order, as dpkg runs
 *      it before unpacking: from var/lib/dpkg/tmp.ci beside the package's
 *      control files (debootstrap and mmdebstrap do the same through
 *      dpkg --install); then, for each diversion a preinst added
 *      (dpkg-divert in a preinst, as NVIDIA's L4T packages do), another
 *      package's file at the diverted path is moved to the diversion's name,
 *      where dpkg would have unpacked it (--rename has done so already);
 *   4. the trigger database dpkg records at unpack: each package's
 *      "interest" lines into var/lib/dpkg/triggers/, and the file triggers
 *      whose directories the packages ship, activated;
 *   5. the caller's hooks;
 *   6. dpkg --configure -a;
 *   7. cleaning, as mmdebstrap does, of what would make the image differ
 *      from one build to the next: dpkg's and apt's logs, the *-old copies
 *      of dpkg's and debconf's databases, ldconfig's aux-cache; policy-rc.d
 *      removed; the empty available and statoverride files stage 1 made go,
 *      as dpkg recreates them when it needs them;
 *   8. per-machine state a postinst made, which every device running the
 *      image would otherwise share: ssh host keys, the machine id
 *      (/etc/machine-id left empty: systemd's "first boot"; the D-Bus copy
 *      removed unless it is a link to it), random seeds, systemd's
 *      credential secret.  Where openssh-server is installed, a unit
 *      regenerates the host keys at first boot (Debian's sshd refuses to
 *      start without them, and only its postinst makes them).
 * The sandbox's host name is fixed (sandbox.h), so what a script writes
 * never names the build machine.
 *
 * The incremental form (build --incremental) starts from the configured
 * image it replaces instead: 2, dpkg --purge of the packages that left,
 * dpkg's own --unpack of the .debs that changed or arrived (dpkg runs the
 * preinsts and records the triggers), then 5 to 8, the same text. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "sandbox/foreign.h"
#include "sandbox/mod.h"
#include "store/repo.h"
#include "sandbox/stage2.h"
#include "store/treeread.h"
#include "base/progress.h"
#include "base/scratch.h"
#include "base/util.h"

/* The scripts are the shell files beside this one, embedded at build time
 * (GResource): read from /usr/share at run time, a script that drifted from
 * the binary would change the image commits, which record its text.  Each
 * script is the steps both begin with (stage2-begin.sh), its own steps
 * (stage2.sh, from scratch; stage2-incremental.sh), then the steps both end
 * with (stage2-finish.sh); every image commit's metadata holds the whole
 * script's bytes. */
#define STAGE2_RESOURCES "/apt2ostree/sandbox/"

/* Made by glib-compile-resources from stage2.gresource.xml. */
GResource *stage2_get_resource (void);

static char *
stage2_script (const char *name, GError **error)
{
  g_autoptr(GString) script = g_string_new (NULL);
  const char *parts[] = { "stage2-begin.sh", name, "stage2-finish.sh" };
  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    {
      g_autofree char *path = g_strconcat (STAGE2_RESOURCES, parts[i], NULL);
      g_autoptr(GBytes) bytes = g_resource_lookup_data (stage2_get_resource (), path,
                                                        G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
      if (bytes == NULL)
        return util_fail (error, "%s: not built into this program", parts[i]), NULL;
      gsize size;
      const char *data = g_bytes_get_data (bytes, &size);
      g_string_append_len (script, data, size);
    }
  return g_string_free (g_steal_pointer (&script), FALSE);
}

/* The packages of a stage-1 commit, in install order. */
static GPtrArray *
stage1_packages (OstreeRepo *repo, const char *rev, GError **error)
{
  g_autofree char *commit = NULL;
  if (!ostree_repo_resolve_rev (repo, rev, FALSE, &commit, error))
    return NULL;
  g_autoptr(GVariant) commit_v = NULL;
  if (!ostree_repo_load_commit (repo, commit, &commit_v, NULL, error))
    return NULL;
  g_autoptr(GVariant) metadata = g_variant_get_child_value (commit_v, 0);
  g_autoptr(GVariant) names = g_variant_lookup_value (metadata, STAGE1_META_PACKAGES,
                                                      G_VARIANT_TYPE_STRING_ARRAY);
  if (names == NULL)
    return util_fail (error, "\"%s\" is not a stage-1 tree made by \"apt2ostree stage1\"", rev),
           NULL;

  g_autoptr(GPtrArray) packages = g_ptr_array_new_with_free_func (g_free);
  gsize n;
  g_autofree const char **strv = g_variant_get_strv (names, &n);
  for (gsize i = 0; i < n; i++)
    g_ptr_array_add (packages, g_strdup (strv[i]));
  return g_steal_pointer (&packages);
}

/* The image's dpkg architecture: the first line of var/lib/dpkg/arch, which
 * stage 1 writes. */
static char *
stage1_arch (OstreeRepo *repo, const char *rev, GCancellable *cancellable, GError **error)
{
  g_autoptr(GFile) root = NULL;
  if (!ostree_repo_read_commit (repo, rev, &root, NULL, cancellable, error))
    return NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *text = treeread_text (root, "var/lib/dpkg/arch", cancellable, &local_error);
  if (local_error != NULL)
    return util_fail (error, "\"%s\": %s", rev, local_error->message), NULL;
  if (text == NULL)
    return util_fail (error, "\"%s\": no var/lib/dpkg/arch (not a stage-1 tree?)", rev), NULL;
  text[strcspn (text, "\n")] = '\0';
  g_strstrip (text);
  if (text[0] == '\0')
    return util_fail (error, "\"%s\": var/lib/dpkg/arch is empty", rev), NULL;
  return g_steal_pointer (&text);
}

/* What the stage-2 script was doing, from its output (OUTPUT): the last
 * package dpkg set up or processed triggers for, or the last step the
 * script announced; for an error on timeout. */
static char *
stage2_progress (const char *output)
{
  static const struct { const char *prefix, *before, *after; } marks[] = {
    { "Setting up ", " while configuring ", "" },
    { "Processing triggers for ", " while processing the triggers for ", "" },
    { "apt2ostree configure: ", " at the step \"", "\"" },
  };
  g_autofree char *found = NULL;
  g_auto(GStrv) lines = g_strsplit (output, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    for (guint i = 0; i < G_N_ELEMENTS (marks); i++)
      if (g_str_has_prefix (*l, marks[i].prefix))
        {
          g_autofree char *what = g_strdup (*l + strlen (marks[i].prefix));
          g_strstrip (what);
          if (g_str_has_suffix (what, " ..."))
            what[strlen (what) - 4] = '\0';
          g_free (found);
          found = g_strconcat (marks[i].before, what, marks[i].after, NULL);
          break;
        }
  return g_steal_pointer (&found);
}

/* What stage 2 tells the build as it runs (base/progress.h): the step the
 * script announces, the package dpkg sets up (N of M) and the trigger it
 * runs, read from the script's output line by line.  The script itself is
 * left as it is: its text is part of every image's commit. */
typedef struct {
  const char *ref;        /* the image being configured */
  guint total;            /* packages to set up; 0: not known (incremental) */
  guint done;             /* "Setting up" lines so far */
  GString *line;          /* the line not ended yet */
} Stage2Watch;

/* The name in "NAME (VERSION) ..." (what dpkg prints after its verb). */
static char *
dpkg_line_package (const char *rest)
{
  return g_strndup (rest, strcspn (rest, " "));
}

static void
stage2_watch_line (Stage2Watch *w, const char *line)
{
  gboolean setting_up = g_str_has_prefix (line, "Setting up ");
  if (setting_up)
    w->done++;
  g_autofree char *count = w->total > 0 ? g_strdup_printf ("%u of %u", w->done, w->total)
                                        : g_strdup_printf ("%u", w->done);
  if (setting_up)
    {
      g_autofree char *name = dpkg_line_package (line + strlen ("Setting up "));
      progress_say ("configure %s: setting up %s (%s)", w->ref, name, count);
    }
  else if (g_str_has_prefix (line, "Processing triggers for "))
    {
      g_autofree char *name = dpkg_line_package (line + strlen ("Processing triggers for "));
      progress_say ("configure %s: processing triggers for %s (%s set up)", w->ref, name, count);
    }
  else if (g_str_has_prefix (line, "Unpacking "))
    {
      g_autofree char *name = dpkg_line_package (line + strlen ("Unpacking "));
      progress_say ("configure %s: unpacking %s", w->ref, name);
    }
  else if (g_str_has_prefix (line, "apt2ostree configure: "))
    progress_say ("configure %s: %s", w->ref, line + strlen ("apt2ostree configure: "));
}

static void
stage2_watch_output (const char *data, gsize len, gpointer user_data)
{
  Stage2Watch *w = user_data;
  g_string_append_len (w->line, data, len);
  char *nl;
  while ((nl = memchr (w->line->str, '\n', w->line->len)) != NULL)
    {
      *nl = '\0';
      stage2_watch_line (w, w->line->str);
      g_string_erase (w->line, 0, nl - w->line->str + 1);
    }
  if (w->line->len > 4096)  /* no line of interest is that long */
    g_string_truncate (w->line, 0);
}

static void
stage2_watch_clear (Stage2Watch *w)
{
  if (w->line != NULL)
    g_string_free (w->line, TRUE);
  w->line = NULL;
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Stage2Watch, stage2_watch_clear)

/* With --verbose, where the time around the script went (mod.h). */
static void
report_timings (const Stage2Options *options, const ModTimings *t)
{
  if (options->verbose)
    g_printerr ("apt2ostree configure: checkout %.3f s, command %.3f s, commit %.3f s, "
                "keeping the checkout %.3f s, cleanup %.3f s\n", t->checkout, t->command,
                t->commit, t->keep, t->cleanup);
}

char *
stage2_subject (const char *release, guint n_packages, const char *arch, gboolean incremental)
{
  return g_strdup_printf ("%s%s%u package%s for %s, configured%s", release != NULL ? release : "",
                          release != NULL ? ": " : "", n_packages, n_packages == 1 ? "" : "s",
                          arch, incremental ? " incrementally" : "");
}

/* PRETTY_NAME of the stage-1 tree REV's os-release (base-files'), or NULL
 * when it has none or it is not one line of plain text. */
static char *
stage1_release (OstreeRepo *repo, const char *rev, GCancellable *cancellable)
{
  g_autoptr(GFile) root = NULL;
  if (!ostree_repo_read_commit (repo, rev, &root, NULL, cancellable, NULL))
    return NULL;
  g_autofree char *text = treeread_text (root, "usr/lib/os-release", cancellable, NULL);
  if (text == NULL)
    text = treeread_text (root, "etc/os-release", cancellable, NULL);
  g_auto(GStrv) lines = g_strsplit (text != NULL ? text : "", "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      if (!g_str_has_prefix (*l, "PRETTY_NAME="))
        continue;
      g_autofree char *value = g_strdup (*l + strlen ("PRETTY_NAME="));
      g_strstrip (value);
      gsize len = strlen (value);
      if (len >= 2 && (value[0] == '"' || value[0] == '\'') && value[len - 1] == value[0])
        {
          value[len - 1] = '\0';
          memmove (value, value + 1, len - 1);
        }
      for (const char *c = value; *c != '\0'; c++)
        if (!g_ascii_isprint (*c) || *c == '"' || *c == '\\' || *c == '$' || *c == '`')
          return NULL;
      return value[0] != '\0' && strlen (value) <= 80 ? g_steal_pointer (&value) : NULL;
    }
  return NULL;
}

/* What both configures share: the stage-1 tree's packages and architecture
 * (checked runnable here), the script, the hooks' variable, the commit's
 * subject, the progress watch and the timings. */
typedef struct {
  GPtrArray *packages;
  char *arch;
  char *script;
  char *hooks;
  const char *setenv[3];
  char *subject;
  char *progress_name;
  Stage2Watch watch;
  ModTimings timings;
} Stage2Job;

static void
stage2_job_clear (Stage2Job *job)
{
  g_clear_pointer (&job->packages, g_ptr_array_unref);
  g_clear_pointer (&job->arch, g_free);
  g_clear_pointer (&job->script, g_free);
  g_clear_pointer (&job->hooks, g_free);
  g_clear_pointer (&job->subject, g_free);
  g_clear_pointer (&job->progress_name, g_free);
  stage2_watch_clear (&job->watch);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Stage2Job, stage2_job_clear)

/* JOB for configuring OPTIONS->in with the script made of SCRIPT_NAME
 * (INCREMENTAL: from an image, which says so in its subject). */
static gboolean
stage2_job_init (Stage2Job *job, OstreeRepo *repo, const Stage2Options *options,
                 const char *script_name, gboolean incremental, GCancellable *cancellable,
                 GError **error)
{
  job->packages = stage1_packages (repo, options->in, error);
  if (job->packages == NULL)
    return FALSE;
  /* Everything below runs the image's own programs: say now, in one line,
   * when this machine cannot. */
  job->arch = stage1_arch (repo, options->in, cancellable, error);
  if (job->arch == NULL)
    return FALSE;
  if (!foreign_check_arch (job->arch, error))
    return g_prefix_error (error, "configure %s: ", options->in), FALSE;
  job->script = stage2_script (script_name, error);
  if (job->script == NULL)
    return FALSE;
  job->hooks = options->hooks != NULL ? g_strjoinv ("\n", (char **) options->hooks) : NULL;
  job->setenv[0] = "APT2OSTREE_HOOKS";
  job->setenv[1] = job->hooks != NULL ? job->hooks : "";
  g_autofree char *release = stage1_release (repo, options->in, cancellable);
  job->subject = stage2_subject (release, job->packages->len, job->arch, incremental);
  job->watch = (Stage2Watch) { options->out_ref, incremental ? 0 : job->packages->len, 0,
                               g_string_new (NULL) };
  job->progress_name = g_strconcat ("configure ", options->out_ref, NULL);
  return TRUE;
}

/* The options of mod both configures give alike, running ARGV. */
static ModOptions
stage2_job_mod (Stage2Job *job, const Stage2Options *options, char **argv)
{
  return (ModOptions) {
    .out_ref = options->out_ref,
    .chroot = TRUE,
    .setenv = job->setenv,
    .subject = job->subject,
    .verbose = options->verbose,
    .keep_on_failure = options->keep_on_failure,
    .argv = argv,
    .timings = &job->timings,
    .limits = options->limits,
    .progress = stage2_progress,
    .progress_name = job->progress_name,
    .output = progress_active () ? stage2_watch_output : NULL,
    .output_data = &job->watch,
  };
}

gboolean
stage2_configure (OstreeRepo *repo, const Stage2Options *options, char **out_commit,
                  GCancellable *cancellable, GError **error)
{
  g_auto(Stage2Job) job = { NULL, };
  if (!stage2_job_init (&job, repo, options, "stage2.sh", FALSE, cancellable, error))
    return FALSE;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, "/bin/sh");
  g_ptr_array_add (argv, "-c");
  g_ptr_array_add (argv, job.script);
  g_ptr_array_add (argv, "apt2ostree-configure");
  for (guint i = 0; i < job.packages->len; i++)
    g_ptr_array_add (argv, job.packages->pdata[i]);
  g_ptr_array_add (argv, NULL);

  ModOptions mod = stage2_job_mod (&job, options, (char **) argv->pdata);
  mod.in = options->in;
  mod.description = "the stage-2 script (preinsts, triggers, hooks, dpkg --configure -a)";
  if (!mod_run (repo, &mod, out_commit, cancellable, error))
    {
      g_prefix_error (error, "configure %s: ", options->in);
      return FALSE;
    }
  report_timings (options, &job.timings);
  return TRUE;
}

/* Where the incremental script finds the .debs: each bound read-only, as
 * DEBS_DIR/N.deb (mount points, so never part of the result). */
#define DEBS_DIR "/run/apt2ostree-debs"
/* Where it finds the names of the packages to purge, one a line: a file,
 * however many there are (not an argument: Linux refuses one over 128 KiB). */
#define PURGE_LIST "/run/apt2ostree-purge"

/* The file of PURGE's names, in a scratch directory of the repository's
 * tmp/ (*OUT_SCRATCH, for the caller to remove). */
static char *
purge_list (OstreeRepo *repo, const char *const *purge, Scratch **out_scratch, GError **error)
{
  g_autofree char *repo_path = g_file_get_path (ostree_repo_get_path (repo));
  g_autofree char *tmp = g_build_filename (repo_path, "tmp", NULL);
  if (g_mkdir_with_parents (tmp, 0755) < 0)
    return util_fail (error, "%s: %s", tmp, g_strerror (errno)), NULL;
  g_autoptr(Scratch) scratch = scratch_new (tmp, "stage2", error);
  if (scratch == NULL)
    return NULL;
  g_autoptr(GString) names = g_string_new (NULL);
  for (guint i = 0; purge != NULL && purge[i] != NULL; i++)
    g_string_append_printf (names, "%s\n", purge[i]);
  g_autofree char *path = g_build_filename (scratch->path, "purge", NULL);
  g_autoptr(GError) local_error = NULL;
  if (!g_file_set_contents (path, names->str, names->len, &local_error))
    return util_fail (error, "%s", local_error->message), NULL;
  *out_scratch = g_steal_pointer (&scratch);
  return g_steal_pointer (&path);
}

gboolean
stage2_configure_incremental (OstreeRepo *repo, const Stage2Options *options,
                              const Stage2Incremental *incremental, char **out_commit,
                              GCancellable *cancellable, GError **error)
{
  g_autoptr(RepoRev) prev = repo_resolve (repo, incremental->prev, error);
  g_autoptr(RepoRev) stage1 = prev != NULL ? repo_resolve (repo, options->in, error) : NULL;
  if (stage1 == NULL)
    return FALSE;
  g_auto(Stage2Job) job = { NULL, };
  if (!stage2_job_init (&job, repo, options, "stage2-incremental.sh", TRUE, cancellable, error))
    return FALSE;
  g_autoptr(Scratch) scratch = NULL;
  g_autofree char *purge = purge_list (repo, incremental->purge, &scratch, error);
  if (purge == NULL)
    return FALSE;
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) binds = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (binds, g_strdup (purge));
  g_ptr_array_add (binds, g_strdup (PURGE_LIST));
  g_ptr_array_add (argv, g_strdup ("/bin/sh"));
  g_ptr_array_add (argv, g_strdup ("-c"));
  g_ptr_array_add (argv, g_strdup (job.script));
  g_ptr_array_add (argv, g_strdup ("apt2ostree-configure-incremental"));
  for (guint i = 0; incremental->debs != NULL && incremental->debs[i] != NULL; i++)
    {
      char *dest = g_strdup_printf (DEBS_DIR "/%u.deb", i);
      g_ptr_array_add (binds, g_strdup (incremental->debs[i]));
      g_ptr_array_add (binds, dest);
      g_ptr_array_add (argv, g_strdup (dest));
    }
  g_ptr_array_add (argv, NULL);
  g_ptr_array_add (binds, NULL);

  /* What tells this image from a from-scratch one: where it started. */
  GVariantBuilder meta;
  g_variant_builder_init (&meta, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&meta, "{sv}", STAGE2_META_INCREMENTAL, g_variant_new_string (prev->commit));
  g_variant_builder_add (&meta, "{sv}", STAGE2_META_INCREMENTAL_STAGE1,
                         g_variant_new_string (stage1->commit));
  g_autoptr(GVariant) metadata = g_variant_ref_sink (g_variant_builder_end (&meta));

  ModOptions mod = stage2_job_mod (&job, options, (char **) argv->pdata);
  mod.in = prev->commit;
  mod.ro_binds = (const char *const *) binds->pdata;
  mod.description = "the incremental stage-2 script (dpkg --purge, dpkg --unpack, hooks, "
                    "dpkg --configure -a)";
  mod.metadata = metadata;
  mod.keep_checkout = TRUE;
  gboolean ran = mod_run (repo, &mod, out_commit, cancellable, error);
  /* (after a failure, only the first error is said) */
  if (!scratch_remove (scratch, ran ? error : NULL) && ran)
    return FALSE;
  if (!ran)
    return g_prefix_error (error, "configure %s incrementally from %s: ", options->in,
                           prev->commit), FALSE;
  report_timings (options, &job.timings);
  return TRUE;
}
