/* cmdline.c — what every command's command line shares, with GLib alone. */
#include "config.h"

#include <string.h>

#include "base/cmdline.h"

#define DEFAULT_REPO "build/ostree"

gboolean
cmd_parse (CmdInvocation *inv, const char *parameters, const char *summary,
           const GOptionEntry *entries, int *argc, char ***argv, GError **error)
{
  char *repo_path = NULL;
  const GOptionEntry global_entries[] = {
    { "repo", 0, 0, G_OPTION_ARG_FILENAME, &repo_path,
      "OSTree repository (default: $APT2OSTREE_REPO, else build/ostree)", "DIR" },
    { NULL }
  };

  g_autoptr(GOptionContext) context = g_option_context_new (parameters);
  g_autofree char *prgname = g_strdup_printf ("apt2ostree %s", inv->name);
  g_set_prgname (prgname);
  if (summary != NULL)
    g_option_context_set_summary (context, summary);
  if (entries != NULL)
    g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_add_main_entries (context, global_entries, NULL);

  g_autoptr(GError) local_error = NULL;
  if (!g_option_context_parse (context, argc, argv, &local_error))
    return cmd_usage_error (inv, error, "%s", local_error->message);

  if (repo_path != NULL)
    inv->repo_path = repo_path;  /* lives until exit, as the command line does */
  if (inv->repo_path != NULL && *inv->repo_path == '\0')
    return cmd_usage_error (inv, error, "--repo is the empty string");
  /* No option names a file, ref or value by the empty string. */
  for (const GOptionEntry *e = entries; e != NULL && e->long_name != NULL; e++)
    if ((e->arg == G_OPTION_ARG_STRING || e->arg == G_OPTION_ARG_FILENAME)
        && *(char **) e->arg_data != NULL && **(char **) e->arg_data == '\0')
      return cmd_usage_error (inv, error, "--%s is the empty string", e->long_name);
  /* Nor does any operand (mod's COMMAND is split off before this). */
  for (int i = 1; i < *argc; i++)
    if ((*argv)[i][0] == '\0')
      return cmd_usage_error (inv, error, "operand %d is the empty string", i);
  return TRUE;
}

gboolean
cmd_usage_error (CmdInvocation *inv, GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
               "%s; see \"apt2ostree %s --help\"", message, inv->name);
  return FALSE;
}

const char *
cmd_repo_path (const CmdInvocation *inv)
{
  if (inv->repo_path != NULL)
    return inv->repo_path;
  const char *env = g_getenv ("APT2OSTREE_REPO");
  if (env != NULL && *env != '\0')
    return env;
  return DEFAULT_REPO;
}

int
cmd_parse_global (int argc, char **argv, CmdInvocation *inv)
{
  int i = 1;
  for (; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--repo") && i + 1 < argc)
        inv->repo_path = argv[++i];
      else if (g_str_has_prefix (argv[i], "--repo="))
        inv->repo_path = argv[i] + strlen ("--repo=");
      else
        break;
    }
  return i;
}

int
cmd_split_at_command (int argc, char **argv, int *out_opt_argc, char ***out_opt_argv)
{
  int cmd_start = -1;
  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--"))
      {
        cmd_start = i;
        break;
      }
  *out_opt_argc = cmd_start >= 0 ? cmd_start : argc;
  *out_opt_argv = g_new0 (char *, *out_opt_argc + 1);
  memcpy (*out_opt_argv, argv, *out_opt_argc * sizeof (char *));
  return cmd_start;
}

gboolean
cmd_take_pairs (CmdInvocation *inv, int *argc, char **argv, CmdPairOption *pairs, guint n_pairs,
                GError **error)
{
  int out = 0;
  for (int i = 0; i < *argc; i++)
    {
      CmdPairOption *match = NULL;
      for (guint p = 0; p < n_pairs; p++)
        if (g_str_equal (argv[i], pairs[p].name))
          match = &pairs[p];
      if (match == NULL)
        {
          argv[out++] = argv[i];
          continue;
        }
      if (i + 2 >= *argc)
        return cmd_usage_error (inv, error, "%s takes two arguments", match->name);
      g_ptr_array_add (match->values, argv[i + 1]);
      g_ptr_array_add (match->values, argv[i + 2]);
      i += 2;
    }
  argv[out] = NULL;
  *argc = out;
  return TRUE;
}

gboolean
cmd_pair_option_callback (const char *option_name, const char *value, gpointer data,
                          GError **error)
{
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
               "%s takes two arguments, separated by a space", option_name);
  return FALSE;
}
