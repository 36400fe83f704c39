/* progress.c — a step's word to the terminal of its build; see progress.h. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/progress.h"

/* This process's connection: one per process, by design (the reader
 * takes its end for the end of the step), opened on the first use (by
 * one thread: downloads run in several).  -2: no one listens. */
static int progress_fd = -1;
static gsize progress_opened = 0;

static int
progress_connect (void)
{
  const char *path = g_getenv (PROGRESS_ENV);
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (path == NULL || *path == '\0' || strlen (path) >= sizeof addr.sun_path)
    return -2;
  strcpy (addr.sun_path, path);
  /* Close-on-exec: a program this step runs (a sandbox, a service left
   * behind) must not keep the step "running". */
  int fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -2;
  if (connect (fd, (struct sockaddr *) &addr, sizeof addr) < 0)
    {
      close (fd);
      return -2;
    }
  return fd;
}

gboolean
progress_active (void)
{
  if (g_once_init_enter (&progress_opened))
    {
      progress_fd = progress_connect ();
      g_once_init_leave (&progress_opened, 1);
    }
  return g_atomic_int_get (&progress_fd) >= 0;
}

static void
progress_send (const char *text)
{
  if (*text == '\0' || !progress_active ())  /* an empty message reads as the end */
    return;
  char line[PROGRESS_MAX_MESSAGE];
  g_strlcpy (line, text, sizeof line);
  for (char *p = line; *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      *p = ' ';
  if (send (progress_fd, line, strlen (line), MSG_DONTWAIT | MSG_NOSIGNAL) < 0
      && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    {
      /* The build went away: say nothing more. */
      int fd = g_atomic_int_get (&progress_fd);
      if (fd >= 0 && g_atomic_int_compare_and_exchange (&progress_fd, fd, -2))
        close (fd);
    }
}

void
progress_say (const char *format, ...)
{
  if (!progress_active ())
    return;
  va_list args;
  va_start (args, format);
  g_autofree char *text = g_strdup_vprintf (format, args);
  va_end (args);
  progress_send (text);
}

/* A part of a package tree's ref as it was before deb_ref_name() wrote
 * each character but letters, digits, "." and "-" as "_XX". */
static char *
unescape_ref_part (const char *part)
{
  GString *out = g_string_new (NULL);
  for (const char *p = part; *p != '\0'; p++)
    if (p[0] == '_' && g_ascii_isxdigit (p[1]) && g_ascii_isxdigit (p[2]))
      {
        g_string_append_c (out, (char) (g_ascii_xdigit_value (p[1]) * 16
                                        + g_ascii_xdigit_value (p[2])));
        p += 2;
      }
    else
      g_string_append_c (out, *p);
  return g_string_free (out, FALSE);
}

void
progress_say_command (int argc, char **argv)
{
  if (argc < 1 || !progress_active ())
    return;
  const char *ref = NULL;
  for (int i = 1; i < argc && ref == NULL; i++)
    if (g_str_equal (argv[i], "--ref") && i + 1 < argc)
      ref = argv[i + 1];
    else if (g_str_has_prefix (argv[i], "--ref="))
      ref = argv[i] + strlen ("--ref=");
  /* A package tree's ref ends with the .deb's sha256: name and version say it. */
  g_auto(GStrv) parts = ref != NULL && g_str_has_prefix (ref, "deb/")
                        ? g_strsplit (ref, "/", 4) : NULL;
  if (parts != NULL && g_strv_length (parts) >= 3)
    {
      g_autofree char *name = unescape_ref_part (parts[1]);
      g_autofree char *version = unescape_ref_part (parts[2]);
      progress_say ("%s %s %s", argv[0], name, version);
    }
  else if (ref != NULL)
    progress_say ("%s %s", argv[0], ref);
  else
    progress_say ("%s", argv[0]);
}
