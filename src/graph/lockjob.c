/* lockjob.c — "lock" and "build --include" as one job; see lockjob.h. */
#include "config.h"

#include "apt/lock.h"
#include "apt/lockfile.h"
#include "apt/netcheck.h"
#include "deb/localdebs.h"
#include "graph/lockjob.h"
#include "image/imagediff.h"

static gboolean
check_choice (CmdInvocation *inv, const char *option, const char *value,
              const char *const *choices, GError **error)
{
  if (value == NULL || g_strv_contains (choices, value))
    return TRUE;
  g_autofree char *joined = g_strjoinv ("|", (char **) choices);
  return cmd_usage_error (inv, error, "%s \"%s\": expected %s", option, value, joined);
}

/* --variant and --merged-usr among their choices; --update without what
 * it takes from the lockfile.  --components split at commas ("main,contrib"
 * and repeated options alike, as mmdebstrap takes them). */
static gboolean
check_args (CmdInvocation *inv, LockArgs *args, GError **error)
{
  if (args->components != NULL)
    {
      g_autofree char *joined = g_strjoinv (",", args->components);
      g_strfreev (args->components);
      args->components = g_strsplit (joined, ",", -1);
    }
  if (args->path_filters == NULL)
    args->path_filters = g_new0 (char *, 1);
  static const char *const merged_choices[] = { "auto", "yes", "no", NULL };
  if (!check_choice (inv, "--variant", args->variant, lock_variants (), error)
      || !check_choice (inv, "--merged-usr", args->merged_usr, merged_choices, error))
    return FALSE;
  if (args->update
      && (args->arch != NULL || args->variant != NULL || args->recommends
          || args->merged_usr != NULL || args->record_uris || args->suite != NULL
          || args->components != NULL || args->debs != NULL || args->path_filters[0] != NULL))
    return cmd_usage_error (inv, error, "--update takes the request from the lockfile; "
                            "only -o, --sources, --cache and --mirror go with it");
  return TRUE;
}

/* The lock's input from ARGS and PATH; a bad option value it finds is a
 * usage error. */
static gboolean
load_input (CmdInvocation *inv, LockArgs *args, const char *path, LockInput *in, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  if (lock_input_load (args, path, in, &local_error))
    return TRUE;
  if (local_error->domain == G_OPTION_ERROR)
    return cmd_usage_error (inv, error, "%s", local_error->message);
  g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}

/* What changed from BEFORE, one package a line as "diff" prints it, for
 * the CI log. */
static void
print_changes (Lockfile *before, Lockfile *after)
{
  g_autoptr(ImageSide) a = image_side_from_lockfile (before, "before");
  g_autoptr(ImageSide) b = image_side_from_lockfile (after, "after");
  g_autoptr(GPtrArray) changes = image_diff_packages (a, b);
  g_autofree char *text = image_diff_packages_text (changes);
  g_print ("%s", text);
}

gboolean
lockjob_run (CmdInvocation *inv, LockArgs *args, const char *path, gboolean verbose,
             GCancellable *cancellable, GError **error)
{
  g_auto(LockInput) in = { { NULL } };
  if (!check_args (inv, args, error)
      || !load_input (inv, args, path, &in, error)
      || !netcheck_sources (inv->name, &in.sources, 1, verbose, error))
    return FALSE;

  g_autofree char *base_dir = g_path_get_dirname (path);
  g_autofree char *index_dir = g_build_filename (in.cache, "local", NULL);
  g_auto(LockLocal) local = { NULL };
  if (!local_debs_to_lock (in.previous, in.debs_dirs, in.packages, base_dir,
                           in.req.architecture, in.output, index_dir, &local, error))
    return FALSE;
  g_autoptr(Lockfile) lock = lock_resolve (&in.req, in.sources, &local, in.cache, in.previous,
                                           cancellable, error);
  if (lock == NULL)
    return FALSE;
  lock_warn_trusted (lock);
  g_autoptr(Lockfile) replaced = in.previous == NULL ? lock_input_replaced (in.output, lock) : NULL;
  if (!lockfile_write (lock, in.output, error))
    return FALSE;
  g_print ("%s: %u packages from %u sources\n", in.output, lock->packages->len,
           lock->sources->len);
  if (in.previous != NULL || replaced != NULL)
    print_changes (in.previous != NULL ? in.previous : replaced, lock);
  return TRUE;
}
