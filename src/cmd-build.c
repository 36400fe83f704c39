/* apt2ostree build — lockfile in, configured image out, through ninja. */
#include "config.h"

#include <stdio.h>
#include <sys/wait.h>

#include "build.h"
#include "cmd.h"
#include "foreign.h"
#include "lockfile.h"
#include "ninja.h"
#include "repo.h"
#include "util.h"

static gboolean
run_ninja (const char *ninja, const char *file, int jobs, const char *target, GError **error)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (argv, g_strdup (ninja));
  g_ptr_array_add (argv, g_strdup ("-f"));
  g_ptr_array_add (argv, g_strdup (file));
  if (jobs > 0)
    g_ptr_array_add (argv, g_strdup_printf ("-j%d", jobs));
  g_ptr_array_add (argv, g_strdup (target));
  g_ptr_array_add (argv, NULL);

  int status;
  g_autoptr(GError) local_error = NULL;
  if (!g_spawn_sync (NULL, (char **) argv->pdata, NULL,
                     G_SPAWN_SEARCH_PATH | G_SPAWN_CHILD_INHERITS_STDIN, NULL, NULL, NULL, NULL,
                     &status, &local_error))
    return util_fail (error, "cannot run \"%s\": %s; install ninja-build or give --ninja PATH",
                      ninja, local_error->message);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return util_fail (error, "ninja stopped (exit status %d): the step that failed is named above; "
                      "fix it and run the same command again to continue where it stopped",
                      WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status));
  return TRUE;
}

CMD (build)
{
  g_auto(BuildArgs) args = BUILD_ARGS_INIT;
  int jobs = 0;
  g_autofree char *ninja = NULL;
  const GOptionEntry entries[] = {
    BUILD_OPTION_ENTRIES (args),
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "Steps at once (default: ninja's)", "N" },
    { "ninja", 0, 0, G_OPTION_ARG_FILENAME, &ninja, "The ninja to run (default: ninja)", "PATH" },
    { NULL }
  };
  if (!cmd_parse (inv, "LOCKFILE",
                  "Build the image of LOCKFILE: write BUILDDIR/NAME.ninja and run ninja on it.\n"
                  "The repository is BUILDDIR/ostree unless --repo is given.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 2)
    return cmd_usage_error (inv, error, "expected one LOCKFILE");
  if (jobs < 0)
    return cmd_usage_error (inv, error, "--jobs %d: expected a number of steps (1 or more; 0: ninja's "
                            "default)", jobs);

  args.lockfile = argv[1];
  args.repo = inv->repo_path;
  if (!build_args_complete (&args, error))
    return FALSE;
  /* Stage 2 runs the image's programs: say so before the downloads when
   * this machine cannot (configure checks again, for "ninja" users). */
  g_autoptr(Lockfile) lock = lockfile_load (args.lockfile, error);
  if (lock == NULL)
    return FALSE;
  if (!foreign_check_arch (lock->request.architecture, error))
    return FALSE;

  g_autofree char *ninja_file = build_ninja_path (&args);
  g_autofree char *text = build_generate_ninja (&args, ninja_file, FALSE, error);
  if (text == NULL || !ninja_write_if_changed (ninja_file, text, error))
    return FALSE;

  if (!run_ninja (ninja != NULL ? ninja : "ninja", ninja_file, jobs, args.image, error))
    return FALSE;

  g_autofree char *default_repo = g_build_filename (args.builddir, "ostree", NULL);
  const char *repo_path = args.repo != NULL ? args.repo : default_repo;
  g_autoptr(OstreeRepo) repo = repo_open (repo_path, cancellable, error);
  if (repo == NULL)
    return FALSE;
  g_autoptr(RepoRev) image = repo_resolve (repo, args.image, error);
  if (image == NULL)
    return FALSE;
  printf ("image %s: commit %s\n"
          "look inside:\n"
          "  ostree --repo=%s ls -R %s\n"
          "  apt2ostree --repo %s export %s --dir rootfs     (or --tar rootfs.tar)\n",
          args.image, image->commit, repo_path, image->commit, repo_path, args.image);
  return TRUE;
}
