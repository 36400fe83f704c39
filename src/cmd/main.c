/* main.c — the `apt2ostree` program: unpack-deb's fast path, else every
 * command from the commands module.
 *
 * A build runs `apt2ostree unpack-deb` once per package, and each run
 * would spend more time starting than unpacking a small package if it
 * loaded libostree: libostree brings some sixty shared libraries, and
 * binding them costs about 10 ms of CPU per process, whatever the program
 * then does (bench/unpack.sh; the numbers are in the commit that made this
 * one program).  So this program links GLib, libarchive and Nettle only,
 * and runs unpack-deb itself (unpack.c over leanrepo.c and the store's
 * own transaction, barestore/txn.c, which the commands module runs too) when
 * the repository is a bare or bare-user one whose config it knows and
 * every .deb is a local file, in the download cache, or downloaded by the
 * cache's fetch service (apt/fetchclient.h).  Everything else (every other
 * command, --help, a usage error, a download the service cannot make, an
 * archive repository, an alias ref, the repository
 * lock taken, ...) is run by the commands module (commands.c), which it
 * loads with dlopen() in this same process, before anything is written or
 * printed.  Setting APT2OSTREE_LEAN=0 sends everything to the module. */
#include "config.h"

#include <dlfcn.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "apt/cache.h"
#include "base/installdirs.h"
#include "base/cmdline.h"
#include "base/progress.h"
#include "cmd/commands.h"
#include "deb/leanrepo.h"
#include "deb/unpack.h"

/* The commands module: beside this program (its build tree), else where
 * it is installed relative to this program (base/installdirs.h), else
 * where configure put it (a copy of the program elsewhere).  NULL when
 * none holds it, with TRIED listing the directories looked in. */
static char *
commands_module (GString *tried)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *beside = self != NULL ? g_path_get_dirname (self) : NULL;
  g_autofree char *installed = installdirs_from_program (PKGLIBDIR);
  const char *dirs[] = { beside, installed, PKGLIBDIR };
  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      if (dirs[i] == NULL)
        continue;
      g_autofree char *path = g_build_filename (dirs[i], COMMANDS_MODULE, NULL);
      if (g_file_test (path, G_FILE_TEST_EXISTS))
        return g_steal_pointer (&path);
      if (i == 0 || g_strcmp0 (dirs[i], dirs[i - 1]) != 0)
        g_string_append_printf (tried, "%s%s", tried->len > 0 ? ", " : "", dirs[i]);
    }
  return NULL;
}

static int
run_commands (int argc, char **argv)
{
  g_autoptr(GString) tried = g_string_new (NULL);
  g_autofree char *path = commands_module (tried);
  if (path == NULL)
    {
      fprintf (stderr, "apt2ostree: cannot find its commands module %s (looked in %s); "
               "install the program and the module together (\"make install\") "
               "or run the program from its build directory\n", COMMANDS_MODULE, tried->str);
      return 127;
    }
  void *module = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (module == NULL)
    {
      fprintf (stderr, "apt2ostree: cannot load %s: %s\n", path, dlerror ());
      return 127;
    }
  CommandsMain commands_main = (CommandsMain) dlsym (module, COMMANDS_MAIN);
  if (commands_main == NULL)
    {
      fprintf (stderr, "apt2ostree: %s: no %s: %s\n", path, COMMANDS_MAIN, dlerror ());
      return 127;
    }
  return commands_main (argc, argv);
}

/* A .deb a URL names, when the cache holds it already; the commands
 * module downloads it (or reports a damaged cache entry) otherwise. */
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

/* Run `unpack-deb` here: its exit status, or -1 to leave it to the
 * commands module. */
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
      /* A --batch list read here could not be read again by the
       * commands module unless it is a regular file (not standard input, a pipe). */
      const char *list = g_str_equal (argv[k], "--batch") ? argv[k + 1]
                         : g_str_has_prefix (argv[k], "--batch=") ? argv[k] + strlen ("--batch=")
                                                                  : NULL;
      struct stat st;
      if (list != NULL && (g_str_equal (list, "-") || stat (list, &st) < 0 || !S_ISREG (st.st_mode)))
        return -1;
    }

  /* The options are parsed from a copy: GOption reorders what it parses,
   * and the commands module may need the command line as it was. */
  int copy_argc = argc - i;
  g_autofree char **copy = g_memdup2 (argv + i, (copy_argc + 1) * sizeof (char *));
  g_auto(UnpackArgs) args = { NULL };
  g_autoptr(GError) error = NULL;
  if (!unpack_args_parse (&inv, copy_argc, copy, &args, &error))
    return -1;
  progress_say_command (argc - i, argv + i);
  if (lean_repo_run (&args, fetch_from_cache, &error))
    return 0;
  if (g_error_matches (error, UNPACK_ERROR, UNPACK_ERROR_DEFER))
    return -1;
  g_strdelimit (error->message, "\n", ' ');  /* one line, always (as commands.c) */
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
  return run_commands (argc, argv);
}
