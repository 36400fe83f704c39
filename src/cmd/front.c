/* front.c — the `apt2ostree` program: a lean front for the full binary.
 *
 * A build runs `apt2ostree unpack-deb` once per package, and each run used
 * to spend more time starting than unpacking a small package: libostree
 * brings 61 shared libraries, and binding them took about 10 ms of CPU per
 * process, a third of unpacking a minbase image one package at a time.  So
 * this program, which loads GLib, libarchive and Nettle only, runs
 * unpack-deb itself (unpack.c over leanrepo.c) when the repository is a
 * bare or bare-user one whose config it knows and every .deb is a local
 * file or already in the download cache; it writes the same objects and
 * refs, in the same order, as the full binary.  Everything else (every
 * other command, --help, a usage error, a download, an archive repository,
 * an alias ref, the repository lock taken, ...) it hands to the full
 * binary, by exec, before anything is written or printed.  Setting
 * APT2OSTREE_LEAN=0 hands everything over. */
#include "config.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apt/cache.h"
#include "base/cmdline.h"
#include "deb/leanrepo.h"
#include "store/refs.h"
#include "deb/unpack.h"

/* The full binary: beside this one (a build tree), else where it is
 * installed. */
static char *
full_binary (void)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  if (self != NULL)
    {
      g_autofree char *dir = g_path_get_dirname (self);
      g_autofree char *beside = g_build_filename (dir, FULL_NAME, NULL);
      if (g_file_test (beside, G_FILE_TEST_IS_EXECUTABLE))
        return g_steal_pointer (&beside);
    }
  return g_build_filename (PKGLIBEXECDIR, FULL_NAME, NULL);
}

static G_GNUC_NORETURN void
run_full (char **argv)
{
  g_autofree char *full = full_binary ();
  /* The build's Ninja rules run this program, not the full binary. */
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  if (self != NULL)
    g_setenv ("APT2OSTREE_SELF", self, TRUE);
  execv (full, argv);
  fprintf (stderr, "apt2ostree: cannot run %s: %s\n", full, g_strerror (errno));
  exit (127);
}

/* A .deb a URL names, when the cache holds it already; the full binary
 * downloads it (or reports a damaged cache entry) otherwise. */
static char *
fetch_from_cache (const char *url, const char *cache_dir, const char *sha256, gint64 size,
                  GError **error)
{
  if (sha256 == NULL)
    return g_set_error_literal (error, UNPACK_ERROR, UNPACK_ERROR_DEFER, "no sha256"), NULL;
  g_autofree char *want = g_ascii_strdown (sha256, -1);
  g_autofree char *path = g_build_filename (cache_dir, want, NULL);
  if (!cache_is_valid (path, want, size))
    return g_set_error_literal (error, UNPACK_ERROR, UNPACK_ERROR_DEFER, "not cached"), NULL;
  return g_steal_pointer (&path);
}

/* Run `unpack-deb` here: its exit status, or -1 to hand it over. */
static int
lean_unpack_deb (int argc, char **argv)
{
  CmdInvocation inv = { "unpack-deb", NULL };
  int i = cmd_parse_global (argc, argv, &inv);
  if (i == argc || !g_str_equal (argv[i], "unpack-deb"))
    return -1;
  for (int k = i + 1; k < argc; k++)
    {
      if (g_str_has_prefix (argv[k], "--help") || g_str_equal (argv[k], "-h")
          || g_str_equal (argv[k], "-?"))
        return -1;
      /* A --batch list read here could not be read again by the full
       * binary unless it is a regular file (not standard input, a pipe). */
      const char *list = g_str_equal (argv[k], "--batch") ? argv[k + 1]
                         : g_str_has_prefix (argv[k], "--batch=") ? argv[k] + strlen ("--batch=")
                                                                  : NULL;
      struct stat st;
      if (list != NULL && (g_str_equal (list, "-") || stat (list, &st) < 0 || !S_ISREG (st.st_mode)))
        return -1;
    }

  /* The options are parsed from a copy: GOption reorders what it parses,
   * and the full binary may need the command line as it was. */
  int copy_argc = argc - i;
  g_autofree char **copy = g_memdup2 (argv + i, (copy_argc + 1) * sizeof (char *));
  g_auto(UnpackArgs) args = { NULL };
  g_autoptr(GError) error = NULL;
  if (!unpack_args_parse (&inv, copy_argc, copy, &args, &error))
    return -1;
  /* (Refs beyond what the file limit spares are libostree's to write.) */
  if (args.jobs->len > refs_max_staged ())
    return -1;
  g_autoptr(LeanRepo) repo = lean_repo_open (cmd_repo_path (&inv), &error);
  if (repo == NULL)
    return -1;
  if (unpack_run (lean_repo_unpack_repo (repo), &args, fetch_from_cache, &error))
    return 0;
  if (g_error_matches (error, UNPACK_ERROR, UNPACK_ERROR_DEFER))
    return -1;
  g_strdelimit (error->message, "\n", ' ');  /* one line, always (as main.c) */
  fprintf (stderr, "apt2ostree unpack-deb: error: %s\n", error->message);
  return 1;
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  g_set_prgname ("apt2ostree");
  if (g_strcmp0 (g_getenv ("APT2OSTREE_LEAN"), "0") != 0)
    {
      int status = lean_unpack_deb (argc, argv);
      if (status >= 0)
        return status;
    }
  run_full (argv);
}
