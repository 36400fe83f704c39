/* apt2ostree fetch-service — serve a download cache's unpack edges (see
 * apt/fetchclient.h); the first edge that needs a download starts it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "apt/fetchclient.h"
#include "apt/fetchservice.h"
#include "base/util.h"
#include "cmd/cmd.h"

/* The log keeps what the service says (a client is told its own errors):
 * the last run's, so it never grows. */
static gboolean
log_to (const char *cache_dir, GError **error)
{
  g_autofree char *path = g_build_filename (cache_dir, FETCH_SERVICE_LOG, NULL);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  if (dup2 (fd, STDERR_FILENO) < 0)
    return close (fd), util_fail (error, "%s: %s", path, g_strerror (errno));
  close (fd);
  return TRUE;
}

gboolean
cmd_fetch_service (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                   GError **error)
{
  g_autofree char *cache = NULL;
  gboolean foreground = FALSE;
  const GOptionEntry entries[] = {
    { "cache", 0, 0, G_OPTION_ARG_FILENAME, &cache,
      "The download cache to serve (required)", "DIR" },
    { "foreground", 0, 0, G_OPTION_ARG_NONE, &foreground,
      "Stay in this session and keep standard error (default: a session of its own, "
      "errors to DIR/" FETCH_SERVICE_LOG ")", NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "--cache DIR",
                  "Download .debs into DIR for the unpack edges of builds, over connections\n"
                  "kept for all of them (one name lookup per mirror), fetching each build's\n"
                  "download list ahead; exit when idle.  unpack-deb starts it when it needs\n"
                  "a download and none runs; it is not run by hand.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 1)
    return cmd_usage_error (inv, error, "unexpected argument \"%s\"", argv[1]);
  if (cache == NULL)
    return cmd_usage_error (inv, error, "--cache DIR is required");
  if (g_mkdir_with_parents (cache, 0755) < 0)
    return util_fail (error, "%s: cannot create the cache directory: %s", cache,
                      g_strerror (errno));
  if (!foreground)
    {
      /* Out of the build's process group: ninja's Ctrl-C stops the edges,
       * and they let go of their downloads. */
      (void) setsid ();
      if (!log_to (cache, error))
        return FALSE;
    }
  gboolean other = FALSE;
  g_autoptr(GError) local_error = NULL;
  if (!fetch_service_run (cache, &other, &local_error))
    {
      if (other)
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  return TRUE;
}
