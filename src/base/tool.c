/* tool.c — running an external program with one-line errors; see tool.h. */
#include "config.h"

#include <string.h>

#include <gio/gio.h>

#include "base/tool.h"
#include "base/util.h"

gboolean
tool_run (const char *const *argv, const char *const *env, const char *stdin_path,
          const char *package, const char *step, char **out_stdout, GError **error)
{
  g_autofree char *path = g_find_program_in_path (argv[0]);
  if (path == NULL)
    return util_fail (error, "%s is not installed (Debian package %s)", argv[0], package);
  GSubprocessFlags flags = G_SUBPROCESS_FLAGS_STDERR_PIPE
    | (out_stdout != NULL ? G_SUBPROCESS_FLAGS_STDOUT_PIPE : G_SUBPROCESS_FLAGS_STDOUT_SILENCE);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (flags);
  for (const char *const *e = env; e != NULL && *e != NULL; e++)
    {
      g_auto(GStrv) kv = g_strsplit (*e, "=", 2);
      if (kv[1] != NULL && *kv[1] != '\0')
        g_subprocess_launcher_setenv (launcher, kv[0], kv[1], TRUE);
      else
        g_subprocess_launcher_unsetenv (launcher, kv[0]);
    }
  if (stdin_path != NULL)
    g_subprocess_launcher_set_stdin_file_path (launcher, stdin_path);
  const char *for_step = step != NULL ? " " : "";
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GSubprocess) proc = g_subprocess_launcher_spawnv (launcher, argv, &local_error);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err_bytes = NULL;
  if (proc == NULL
      || !g_subprocess_communicate (proc, NULL, NULL, &out, &err_bytes, &local_error))
    return util_fail (error, "running %s%s%s: %s", argv[0], for_step, step != NULL ? step : "",
                      local_error->message);
  if (!g_subprocess_get_successful (proc))
    {
      gsize len = 0;
      const char *data = g_bytes_get_data (err_bytes, &len);
      g_autofree char *err = g_utf8_make_valid (data != NULL ? data : "", (gssize) len);
      g_strdelimit (err, "\r", ' ');
      g_strstrip (err);
      const char *last = strrchr (err, '\n');
      return util_fail (error, "%s failed%s%s: %s", argv[0], for_step, step != NULL ? step : "",
                        *err == '\0' ? "no message" : last != NULL ? last + 1 : err);
    }
  if (out_stdout != NULL)
    {
      gsize len = 0;
      const char *data = g_bytes_get_data (out, &len);
      *out_stdout = g_strndup (data != NULL ? data : "", len);
    }
  return TRUE;
}
