/* mod.c — checkout, overlay, bubblewrap, commit the upper directory; with
 * keep_checkout, the checkout kept from one run to the next. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "store/checkout.h"
#include "store/keptcheckout.h"
#include "barestore/linkgroups.h"
#include "sandbox/fakeroot.h"
#include "sandbox/mod.h"
#include "store/repo.h"
#include "sandbox/sandbox.h"
#include "base/progress.h"
#include "base/scratch.h"
#include "sandbox/upper.h"
#include "base/util.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Mount points the sandbox provides in a chroot: never part of OUT. */
static const char *const chroot_mounts[] = { "/dev", "/proc", "/sys", "/tmp", "/run", NULL };

typedef struct {
  OstreeRepo *repo;
  const ModOptions *options;
  gboolean unprivileged;
  Scratch *scratch_dir;    /* locked for as long as we run */
  char *scratch;
  gboolean keep;           /* options->keep_checkout, where it can be */
  char *kept;              /* the directory of the checkout, with lower = kept/tree */
  char *lower;
  char *upper;
  char *work;
  char *merged;
  GPtrArray *skip_paths;   /* tree paths of mount points */
  Fakeroot *fakeroot;      /* unprivileged only */
} Mod;

static void
mod_clear (Mod *mod)
{
  g_free (mod->scratch);
  g_clear_pointer (&mod->scratch_dir, scratch_free);
  g_free (mod->kept);
  g_free (mod->lower);
  g_free (mod->upper);
  g_free (mod->work);
  g_free (mod->merged);
  g_clear_pointer (&mod->skip_paths, g_ptr_array_unref);
  g_clear_pointer (&mod->fakeroot, fakeroot_free);
}

/* --- scratch directory --- */

static gboolean
make_scratch (Mod *mod, GError **error)
{
  g_autofree char *repo_path = g_file_get_path (ostree_repo_get_path (mod->repo));
  g_autofree char *workdir = mod->options->workdir != NULL
                                 ? g_strdup (mod->options->workdir)
                                 : g_build_filename (repo_path, "tmp", NULL);
  if (g_mkdir_with_parents (workdir, 0755) < 0)
    return util_fail (error, "%s: cannot create the work directory: %s", workdir,
                      g_strerror (errno));

  /* Hardlinks only work within one filesystem. */
  g_autofree char *objects = g_build_filename (repo_path, "objects", NULL);
  struct stat st_work, st_objects;
  if (stat (workdir, &st_work) < 0)
    return util_fail (error, "%s: %s", workdir, g_strerror (errno));
  if (stat (objects, &st_objects) < 0)
    return util_fail (error, "%s: %s", objects, g_strerror (errno));
  if (st_work.st_dev != st_objects.st_dev)
    return util_fail (error, "work directory %s is not on the filesystem of the repository %s; "
                      "a hardlink checkout needs both on one filesystem: choose a --workdir "
                      "there (the default is the repository's tmp/)", workdir, repo_path);

  /* Also removes the scratch directories of killed runs. */
  mod->scratch_dir = scratch_new (workdir, "mod", error);
  if (mod->scratch_dir == NULL)
    return FALSE;
  const char *abs = mod->scratch_dir->path;
  mod->scratch = g_strdup (abs);
  /* A checkout to keep is made where kept_checkout_put() wants it. */
  mod->keep = mod->options->keep_checkout && !mod->unprivileged && mod->options->chroot
              && mod->options->capture_subdir == NULL;
  if (mod->keep)
    {
      mod->kept = g_build_filename (abs, "kept", NULL);
      mod->lower = g_build_filename (mod->kept, "tree", NULL);
    }
  else
    mod->lower = g_build_filename (abs, "lower", NULL);
  mod->upper = g_build_filename (abs, "upper", NULL);
  mod->work = g_build_filename (abs, "work", NULL);
  mod->merged = g_build_filename (abs, "merged", NULL);
  const char *dirs[] = { mod->work, mod->merged };
  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    if (mkdir (dirs[i], 0755) < 0)
      return util_fail (error, "%s: %s", dirs[i], g_strerror (errno));
  return TRUE;
}

/* --- checkout --- */

/* The checkout the last run to OUT_REF kept, when nothing changed it: of
 * IN, or brought to IN from the commit it is of (an image the ref held
 * before: the cost is what differs).  lower is then its tree.  What is not
 * used stays in the scratch directory, to go with it. */
static gboolean
take_kept (Mod *mod, RepoRev *rev, gboolean *out_taken, GCancellable *cancellable,
           GError **error)
{
  g_autofree char *taken = g_build_filename (mod->scratch, "taken", NULL);
  g_autofree char *tree = NULL, *commit = NULL, *why = NULL;
  if (!kept_checkout_take (mod->repo, mod->options->out_ref, taken, &tree, &commit, &why, error))
    return FALSE;
  if (tree != NULL && !g_str_equal (commit, rev->commit))
    {
      g_autoptr(GError) local_error = NULL;
      g_autoptr(RepoRev) kept = repo_resolve (mod->repo, commit, &local_error);
      if (kept == NULL
          || !checkout_update (mod->repo, tree, kept->root_contents, kept->root_meta,
                               rev->root_contents, rev->root_meta, cancellable, &local_error))
        {
          why = g_strdup_printf ("cannot bring it from %s to %s: %s", commit, rev->commit,
                                 local_error->message);
          g_clear_pointer (&tree, g_free);
        }
    }
  if (why != NULL)
    g_printerr ("apt2ostree: the kept checkout of %s is not used (%s): checking it out again\n",
                mod->options->out_ref, why);
  *out_taken = tree != NULL;
  if (tree != NULL)
    {
      g_free (mod->kept);
      mod->kept = g_steal_pointer (&taken);
      g_free (mod->lower);
      mod->lower = g_steal_pointer (&tree);
    }
  return TRUE;
}

static gboolean
checkout_lower (Mod *mod, RepoRev *rev, GCancellable *cancellable, GError **error)
{
  gboolean taken = FALSE;
  if (mod->keep && !take_kept (mod, rev, &taken, cancellable, error))
    return FALSE;
  /* As root from a bare repository a hardlink is all a file needs; not
   * root, from a bare-user one, it is what ostree's checkout mode USER
   * gives. */
  g_autoptr(GError) local_error = NULL;
  if (!taken && mod->kept != NULL && mkdir (mod->kept, 0700) < 0)
    return util_fail (error, "%s: %s", mod->kept, g_strerror (errno));
  if (!taken && !checkout_hardlinks (mod->repo, rev->root_contents, rev->root_meta, mod->lower,
                                     cancellable, &local_error))
    return util_fail (error, "cannot check out %s by hardlinks into %s: %s", mod->options->in,
                      mod->lower, local_error->message);

  /* The upper directory is the merged root: give it the root's owner, mode
   * and xattrs, so "/" looks like IN's and only a real change shows. */
  struct stat st;
  if (lstat (mod->lower, &st) < 0)
    return util_fail (error, "%s: %s", mod->lower, g_strerror (errno));
  if (mkdir (mod->upper, 0700) < 0)
    return util_fail (error, "%s: %s", mod->upper, g_strerror (errno));
  if (!mod->unprivileged && lchown (mod->upper, st.st_uid, st.st_gid) < 0)
    return util_fail (error, "%s: %s", mod->upper, g_strerror (errno));
  if (chmod (mod->upper, st.st_mode & 07777) < 0)
    return util_fail (error, "%s: %s", mod->upper, g_strerror (errno));
  if (!mod->unprivileged)
    {
      g_autoptr(GVariant) xattrs = upper_read_xattrs (mod->lower, error);
      if (xattrs == NULL)
        return FALSE;
      util_autofd int fd = open (mod->upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return util_fail (error, "%s: %s", mod->upper, g_strerror (errno));
      if (!util_fd_set_xattrs (fd, xattrs, mod->upper, error))
        return FALSE;
    }
  return TRUE;
}

/* --- the sandbox --- */

/* A mount destination inside the sandbox as a path in the tree, or NULL
 * when it is outside the tree. */
static char *
tree_path_of (const ModOptions *options, const char *dest)
{
  g_autoptr(GPtrArray) parts = util_split_tree_path (dest, NULL);
  if (parts == NULL)
    return NULL;
  guint skip = 0;
  if (!options->chroot)
    {
      if (parts->len < 1 || !g_str_equal (parts->pdata[0], &MOD_TREE_DIR[1]))
        return NULL;
      skip = 1;
    }
  if (parts->len <= skip)
    return NULL;
  g_ptr_array_remove_range (parts, 0, skip);
  return util_join_tree_path (parts, parts->len);
}

static void
add_host_view (Sandbox *sandbox)
{
  /* The host's programs and libraries, read-only, for a host tool run over
   * the tree at /work.  Merged-/usr hosts have symlinks for /bin & co. */
  const char *dirs[] = { "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                         "/opt" };
  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      g_autofree char *target = g_file_read_link (dirs[i], NULL);
      if (target != NULL)
        sandbox_add (sandbox, SANDBOX_OP_SYMLINK, target, dirs[i]);
      else if (g_file_test (dirs[i], G_FILE_TEST_IS_DIR))
        sandbox_add (sandbox, SANDBOX_OP_RO_BIND, dirs[i], dirs[i]);
    }
}

static gboolean
add_binds (Mod *mod, Sandbox *sandbox, const char *const *pairs, SandboxOpType type,
           GError **error)
{
  for (const char *const *p = pairs; p != NULL && p[0] != NULL && p[1] != NULL; p += 2)
    {
      if (!g_path_is_absolute (p[1]))
        return util_fail (error, "bind destination \"%s\" must be an absolute path inside "
                          "the sandbox", p[1]);
      g_autofree char *src = g_canonicalize_filename (p[0], NULL);
      if (!g_file_test (src, G_FILE_TEST_EXISTS))
        return util_fail (error, "bind source %s does not exist", p[0]);
      sandbox_add (sandbox, type, src, p[1]);
      char *tree_path = tree_path_of (mod->options, p[1]);
      if (tree_path != NULL)
        g_ptr_array_add (mod->skip_paths, tree_path);
    }
  return TRUE;
}

static gboolean
build_sandbox (Mod *mod, Sandbox *sandbox, GError **error)
{
  const ModOptions *options = mod->options;
  mod->skip_paths = g_ptr_array_new_with_free_func (g_free);

  if (options->chroot)
    {
      sandbox_add_overlay (sandbox, mod->lower, mod->upper, mod->work, mod->merged, "/");
      for (const char *const *m = chroot_mounts; *m != NULL; m++)
        g_ptr_array_add (mod->skip_paths, g_strdup (*m));
    }
  else
    add_host_view (sandbox);
  sandbox_add (sandbox, SANDBOX_OP_DEV, NULL, "/dev");
  sandbox_add (sandbox, SANDBOX_OP_PROC, NULL, "/proc");
  sandbox_add (sandbox, SANDBOX_OP_TMPFS, NULL, "/tmp");
  sandbox_add (sandbox, SANDBOX_OP_TMPFS, NULL, "/run");
  if (!options->chroot)
    sandbox_add_overlay (sandbox, mod->lower, mod->upper, mod->work, mod->merged, MOD_TREE_DIR);
  if (!add_binds (mod, sandbox, options->binds, SANDBOX_OP_BIND, error)
      || !add_binds (mod, sandbox, options->ro_binds, SANDBOX_OP_RO_BIND, error))
    return FALSE;
  g_ptr_array_add (mod->skip_paths, NULL);

  sandbox_set_chdir (sandbox, options->chroot ? "/" : MOD_TREE_DIR);
  sandbox_set_network (sandbox, options->network);
  sandbox_set_unprivileged (sandbox, mod->unprivileged);

  guint64 epoch;
  if (!util_source_date_epoch (&epoch, error))
    return FALSE;
  g_autofree char *epoch_str = g_strdup_printf ("%" G_GUINT64_FORMAT, epoch);
  sandbox_setenv (sandbox, "PATH", DEFAULT_PATH);
  sandbox_setenv (sandbox, "LC_ALL", "C.UTF-8");
  sandbox_setenv (sandbox, "SOURCE_DATE_EPOCH", epoch_str);
  for (const char *const *p = options->setenv; p != NULL && p[0] != NULL && p[1] != NULL; p += 2)
    {
      if (*p[0] == '\0' || strchr (p[0], '=') != NULL)
        return util_fail (error, "--setenv \"%s\": not a variable name", p[0]);
      sandbox_setenv (sandbox, p[0], p[1]);
    }

  g_autofree char *log = g_build_filename (mod->scratch, "output.log", NULL);
  sandbox_set_output (sandbox, log, options->verbose);
  if (options->output != NULL)
    sandbox_set_output_func (sandbox, options->output, options->output_data);
  sandbox_set_terminal (sandbox, options->terminal);
  if (options->limits != NULL)
    sandbox_set_limits (sandbox, options->limits);
  return TRUE;
}

static char *
command_line (char **argv)
{
  GString *s = g_string_new ("");
  for (char **a = argv; *a != NULL; a++)
    {
      if (s->len > 0)
        g_string_append_c (s, ' ');
      g_autofree char *quoted = g_shell_quote (*a);
      g_string_append (s, strpbrk (*a, " \t'\"\\$`*?[]#~=%;&|<>(){}") || **a == '\0' ? quoted : *a);
    }
  return g_string_free (s, FALSE);
}

/* What a failed run leaves unwritten. */
static char *
not_written (const ModOptions *options)
{
  if (options->out_ref == NULL)
    return g_strdup ("nothing committed");
  return g_strdup_printf (options->terminal ? "ref %s not written" : "OUT %s not written",
                          options->out_ref);
}

/* Past its deadline: say what it was doing, when the caller can tell. */
static gboolean
command_timed_out (Mod *mod, const SandboxResult *result, const char *cmd, const char *log_path,
                   const char *kept, GError **error)
{
  const ModOptions *options = mod->options;
  g_autofree char *log = NULL;
  g_autofree char *doing = NULL;
  if (options->progress != NULL && g_file_get_contents (log_path, &log, NULL, NULL))
    doing = options->progress (log);
  g_autofree char *unwritten = not_written (options);
  return util_fail (error, "%s ran past the %u s timeout%s (--timeout) over %s and was killed, "
                    "with everything it started; %s; last lines of output: %s; "
                    "%s", cmd, options->limits->timeout, doing != NULL ? doing : "", options->in,
                    unwritten, *result->output_tail ? result->output_tail : "(none)", kept);
}

/* --keep-on-failure, or $APT2OSTREE_KEEP_ON_FAILURE: how "build
 * --keep-on-failure" reaches its stage-2 edges, whose command it leaves
 * as it is (a changed command would configure built images again). */
static gboolean
mod_keeps_on_failure (const ModOptions *options)
{
  return options->keep_on_failure || util_env_flag ("APT2OSTREE_KEEP_ON_FAILURE");
}

static gboolean
command_failed (Mod *mod, const SandboxResult *result, GError **error)
{
  const ModOptions *options = mod->options;
  g_autofree char *line = command_line (options->argv);
  g_autofree char *cmd = options->description != NULL ? g_strdup (options->description)
                                                       : g_strdup_printf ("\"%s\"", line);
  g_autofree char *kept = NULL;
  if (mod_keeps_on_failure (options))
    kept = g_strdup_printf ("scratch kept in %s (the tree in %s/ and upper/, all output in "
                            "output.log)", mod->scratch, mod->lower + strlen (mod->scratch) + 1);
  else
    kept = g_strdup ("scratch removed (keep it with --keep-on-failure, or "
                     "APT2OSTREE_KEEP_ON_FAILURE=1 in ninja's environment)");

  if (result->overlay_failed)
    return util_fail (error, "cannot mount an overlay on %s (upper %s): %s; the kernel or the "
                      "filesystem of %s does not support overlayfs there (choose another "
                      "--workdir on the repository's filesystem); %s", options->in, mod->upper,
                      result->output_tail, mod->upper, kept);
  if (result->not_found)
    return util_fail (error, "command \"%s\" not found inside the sandbox (PATH=%s%s); install "
                      "it in %s or give its full path; %s", options->argv[0], DEFAULT_PATH,
                      options->chroot ? ", in the tree" : ", from the host", options->in, kept);

  /* Unprivileged, the tree's programs must load the host's libfakeroot. */
  const char *hint = "";
  g_autofree char *log_path = g_build_filename (mod->scratch, "output.log", NULL);
  g_autofree char *log = NULL;
  if (mod->fakeroot != NULL && g_file_get_contents (log_path, &log, NULL, NULL)
      && strstr (log, "libfakeroot") != NULL && strstr (log, "cannot be preloaded") != NULL)
    hint = " (fakeroot could not be preloaded into the tree's programs: their C library is "
           "older than the host's, or they are static; run as root with a bare repository)";

  g_autofree char *how = NULL;
  int status = result->exit_status;
  if (result->timed_out)
    return command_timed_out (mod, result, cmd, log_path, kept, error);
  if (status > 128 && status < 128 + 65)
    how = g_strdup_printf ("was killed by signal %d (%s)", status - 128,
                           g_strsignal (status - 128));
  else
    how = g_strdup_printf ("exited with status %d", status);
  if (result->limit_hit != NULL)
    {
      char *with = g_strdup_printf ("%s: %s", how, result->limit_hit);
      g_free (how);
      how = with;
    }
  g_autofree char *unwritten = not_written (options);
  if (options->terminal)
    return util_fail (error, "%s %s over %s; %s; %s", cmd, how, options->in, unwritten, kept);
  return util_fail (error, "%s %s over %s%s; %s; last lines of output: %s; %s",
                    cmd, how, options->in, hint, unwritten,
                    *result->output_tail ? result->output_tail : "(none)", kept);
}

/* --- commit --- */

/* The input's hard-link groups (barestore/linkgroups.h) go on to OUT: paths
 * the command changed are checked when the tree is exported.  Not with
 * --capture-subdir, where the paths would name other files. */
static gboolean
carry_link_groups (Mod *mod, RepoRev *rev, GVariantBuilder *meta, GError **error)
{
  if (mod->options->capture_subdir != NULL)
    return TRUE;
  g_autoptr(GVariant) commit = NULL;
  if (!ostree_repo_load_commit (mod->repo, rev->commit, &commit, NULL, error))
    return FALSE;
  g_autoptr(GVariant) metadata = g_variant_get_child_value (commit, 0);
  g_autoptr(GVariant) groups = g_variant_lookup_value (metadata, LINKGROUPS_META_KEY,
                                                       G_VARIANT_TYPE (LINKGROUPS_TYPE));
  if (groups != NULL)
    g_variant_builder_add (meta, "{sv}", LINKGROUPS_META_KEY, groups);
  return TRUE;
}

static gboolean
capture_subdir (OstreeMutableTree *root, const char *path, OstreeMutableTree **out_subdir,
                GError **error)
{
  g_autoptr(GPtrArray) parts = util_split_tree_path (path, error);
  if (parts == NULL)
    return FALSE;
  g_autoptr(OstreeMutableTree) dir = g_object_ref (root);
  for (guint i = 0; i < parts->len; i++)
    {
      g_autofree char *file = NULL;
      g_autoptr(OstreeMutableTree) sub = NULL;
      g_autoptr(GError) local_error = NULL;
      if (!ostree_mutable_tree_lookup (dir, parts->pdata[i], &file, &sub, &local_error)
          || sub == NULL)
        {
          g_autofree char *where = util_join_tree_path (parts, i + 1);
          return util_fail (error, "--capture-subdir %s: %s is not a directory after the command",
                            path, where);
        }
      g_set_object (&dir, sub);
    }
  *out_subdir = g_steal_pointer (&dir);
  return TRUE;
}

static gboolean
commit_result (Mod *mod, RepoRev *rev, gboolean userxattr, char **out_commit,
               GCancellable *cancellable, GError **error)
{
  const ModOptions *options = mod->options;
  g_autoptr(RepoTxn) txn = repo_txn_begin (mod->repo, cancellable, error);
  if (txn == NULL)
    return FALSE;

  g_autoptr(OstreeMutableTree) root = ostree_mutable_tree_new_from_checksum (
      mod->repo, rev->root_contents, rev->root_meta);
  UpperOptions upper_options = {
    .userxattr = userxattr,
    .skip_paths = (const char *const *) mod->skip_paths->pdata,
  };
  if (mod->fakeroot != NULL)
    {
      upper_options.meta_func = fakeroot_upper_meta;
      upper_options.meta_data = mod->fakeroot;
    }
  if (!upper_apply (mod->repo, repo_txn_sink (txn), root, mod->upper, &upper_options, cancellable,
                    error))
    {
      g_prefix_error (error, "committing what \"%s\" changed: ", options->argv[0]);
      return FALSE;
    }
  if (mod->fakeroot != NULL
      && !fakeroot_apply_unchanged (mod->fakeroot, mod->repo, repo_txn_sink (txn), root,
                                    cancellable, error))
    return FALSE;

  g_autoptr(OstreeMutableTree) out_tree = NULL;
  if (options->capture_subdir != NULL)
    {
      if (!capture_subdir (root, options->capture_subdir, &out_tree, error))
        return FALSE;
    }
  else
    out_tree = g_object_ref (root);

  /* The checkout is done with (unless kept for the next run): remove it
   * before the transaction's syncfs, which would otherwise write out its
   * directories only to see them deleted. */
  gint64 rm_start = g_get_monotonic_time ();
  if (!mod->keep && !scratch_rm_rf (mod->lower, error))
    return FALSE;
  double rm_seconds = (g_get_monotonic_time () - rm_start) / 1e6;
  if (options->timings != NULL)
    options->timings->cleanup += rm_seconds;

  g_autofree char *cmd = command_line (options->argv);
  g_autofree char *subject = options->subject != NULL
    ? g_strdup (options->subject)
    : g_strdup_printf ("apt2ostree mod %s%s%s: %s", rev->commit, options->chroot ? " --chroot" : "",
                       options->capture_subdir ? " --capture-subdir " : "",
                       options->capture_subdir ? options->capture_subdir : "");
  g_autoptr(GVariantBuilder) meta = g_variant_builder_new (G_VARIANT_TYPE ("a{sv}"));
  g_variant_builder_add (meta, "{sv}", "apt2ostree.mod.command", g_variant_new_string (cmd));
  if (options->metadata != NULL)
    {
      GVariantIter iter;
      const char *key;
      GVariant *value;
      g_variant_iter_init (&iter, options->metadata);
      while (g_variant_iter_loop (&iter, "{&sv}", &key, &value))
        g_variant_builder_add (meta, "{sv}", key, value);
    }
  if (!carry_link_groups (mod, rev, meta, error))
    return FALSE;
  if (options->keep_same_tree)
    repo_txn_keep_same_tree (txn);
  return repo_txn_write_commit (txn, out_tree, options->out_ref, subject,
                                g_variant_builder_end (meta), out_commit, cancellable, error)
         && repo_txn_finish (txn, cancellable, error);
}

/* The checkout of IN, brought to OUT, kept for the next run.  OUT is
 * written already: failing here only costs that run a checkout. */
static void
keep_checkout (Mod *mod, RepoRev *rev, const char *out, GCancellable *cancellable)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(RepoRev) result = repo_resolve (mod->repo, out, &error);
  if (result == NULL
      || !checkout_update (mod->repo, mod->lower, rev->root_contents, rev->root_meta,
                           result->root_contents, result->root_meta, cancellable, &error)
      || !kept_checkout_put (mod->repo, mod->options->out_ref, result->commit, mod->kept,
                             &error))
    g_printerr ("apt2ostree: warning: the checkout of %s is not kept for the next run: %s\n",
                mod->options->out_ref, error->message);
}

/* --- the whole --- */

static gboolean
check_repo_mode (Mod *mod, GError **error)
{
  OstreeRepoMode mode = ostree_repo_get_mode (mod->repo);
  g_autofree char *path = g_file_get_path (ostree_repo_get_path (mod->repo));
  gboolean root = getuid () == 0;
  if (root && mode == OSTREE_REPO_MODE_BARE)
    mod->unprivileged = FALSE;
  else if (!root && mode == OSTREE_REPO_MODE_BARE_USER)
    mod->unprivileged = TRUE;
  else if (root)
    return util_fail (error, "%s: mod as root needs a \"bare\" repository, this one is not "
                      "(create one with \"apt2ostree --repo DIR init --mode bare\", or run as a "
                      "normal user for bare-user)", path);
  else
    return util_fail (error, "%s: mod as a normal user needs a \"bare-user\" repository, this "
                      "one is not (create one with \"apt2ostree --repo DIR init\" as that user, "
                      "or run as root for bare)", path);
  return TRUE;
}

static void
lap (double *slot, gint64 *since)
{
  gint64 now = g_get_monotonic_time ();
  if (slot != NULL)
    *slot = (now - *since) / 1e6;
  *since = now;
}

static gboolean
run_and_commit (Mod *mod, RepoRev *rev, char **out_commit, GCancellable *cancellable,
                GError **error)
{
  ModTimings *t = mod->options->timings;
  const char *name = mod->options->progress_name;
  gint64 since = g_get_monotonic_time ();
  if (name != NULL)
    progress_say ("%s: checking out", name);
  if (!checkout_lower (mod, rev, cancellable, error))
    return FALSE;
  lap (t ? &t->checkout : NULL, &since);

  g_autoptr(Sandbox) sandbox = sandbox_new ();
  if (!build_sandbox (mod, sandbox, error))
    return FALSE;
  if (mod->unprivileged)
    {
      mod->fakeroot = fakeroot_new (mod->repo, rev->root_contents, rev->root_meta, mod->lower,
                                    mod->upper, mod->scratch, error);
      if (mod->fakeroot == NULL || !fakeroot_prepare (mod->fakeroot, sandbox, error))
        return FALSE;
    }

  g_auto(SandboxResult) result = { 0, };
  if (!sandbox_run (sandbox, mod->options->argv, &result, cancellable, error))
    return FALSE;
  if (mod->options->limits_held != NULL)
    *mod->options->limits_held = g_strdup (result.limits_held);
  if (mod->fakeroot != NULL && !fakeroot_finish (mod->fakeroot, error))
    return FALSE;
  lap (t ? &t->command : NULL, &since);
  if (result.not_found || result.exit_status != 0)
    return command_failed (mod, &result, error);
  if (mod->options->out_ref == NULL)
    return TRUE;

  g_autofree char *out = NULL;
  if (name != NULL)
    progress_say ("%s: committing", name);
  if (!commit_result (mod, rev, result.overlay_userxattr, &out, cancellable, error))
    return FALSE;
  lap (t ? &t->commit : NULL, &since);
  if (mod->keep)
    {
      keep_checkout (mod, rev, out, cancellable);
      lap (t ? &t->keep : NULL, &since);
    }
  if (out_commit != NULL)
    *out_commit = g_steal_pointer (&out);
  if (t != NULL)
    t->commit -= t->cleanup;  /* the checkout's removal, counted as cleanup */
  return TRUE;
}

gboolean
mod_run (OstreeRepo *repo, const ModOptions *options, char **out_commit,
         GCancellable *cancellable, GError **error)
{
  if (options->argv == NULL || options->argv[0] == NULL)
    return util_fail (error, "no command to run");
  if (options->out_ref != NULL && !repo_check_ref_name (options->out_ref, error))
    return FALSE;
  g_autoptr(RepoRev) rev = repo_resolve (repo, options->in, error);
  if (rev == NULL)
    return FALSE;

  /* Before any work: the one tool everything needs. */
  g_autofree char *bwrap = sandbox_find_bwrap (error);
  if (bwrap == NULL)
    return FALSE;

  Mod mod = { .repo = repo, .options = options };
  if (!check_repo_mode (&mod, error) || !make_scratch (&mod, error))
    {
      mod_clear (&mod);
      return FALSE;
    }

  gboolean ok = run_and_commit (&mod, rev, out_commit, cancellable, error);
  gint64 since = g_get_monotonic_time ();
  g_autoptr(GError) rm_error = NULL;
  if (ok || !mod_keeps_on_failure (options))
    {
      if (!scratch_remove (mod.scratch_dir, &rm_error) && ok)
        g_warning ("%s", rm_error->message);
    }
  else if (!scratch_keep (mod.scratch_dir, &rm_error))
    g_warning ("%s", rm_error->message);
  if (options->timings != NULL)
    {
      double before = options->timings->cleanup;
      lap (&options->timings->cleanup, &since);
      options->timings->cleanup += before;
    }
  mod_clear (&mod);
  return ok;
}
