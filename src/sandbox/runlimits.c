/* runlimits.c — the limits of one sandboxed run: parsed from options and
 * the environment, held by a cgroup of the run's own where the host lets us
 * make one, else by rlimits set on the process before bubblewrap starts
 * anything. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/runlimits.h"
#include "base/util.h"

/* --- parsing --- */

static gboolean
is_none (const char *text)
{
  return g_str_equal (text, "0") || g_ascii_strcasecmp (text, "none") == 0;
}

static guint64
physical_memory (void)
{
  long pages = sysconf (_SC_PHYS_PAGES);
  long size = sysconf (_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (guint64) pages * (guint64) size : 0;
}

static gboolean
parse_count (const char *text, const char *what, guint64 max, guint64 *out, GError **error)
{
  char *end = NULL;
  errno = 0;
  guint64 v = g_ascii_strtoull (text, &end, 10);
  if (!g_ascii_isdigit (*text) || errno != 0 || *end != '\0' || v > max)
    return util_fail (error, "%s \"%s\": expected a whole number (0 or \"none\": no limit)", what,
                      text);
  *out = v;
  return TRUE;
}

static gboolean
parse_size (const char *text, guint64 *out, GError **error)
{
  char *end = NULL;
  errno = 0;
  guint64 v = g_ascii_strtoull (text, &end, 10);
  guint shift = 0;
  if (g_ascii_isdigit (*text) && errno == 0 && g_str_equal (end, "%") && v >= 1 && v <= 100)
    {
      *out = physical_memory () / 100 * v;
      return TRUE;
    }
  switch (g_ascii_toupper (*end))
    {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    default: break;
    }
  if (!g_ascii_isdigit (*text) || errno != 0 || *end != '\0' || v > (G_MAXUINT64 >> shift))
    return util_fail (error, "memory limit \"%s\": expected a size such as 4G, 512M or 50%% "
                      "(of RAM), or 0 or \"none\" for no limit", text);
  *out = v << shift;
  return TRUE;
}

/* The option's value, else the environment's, else the default. */
static const char *
pick (const char *option, const char *env_name, const char *fallback)
{
  if (option != NULL)
    return option;
  const char *env = g_getenv (env_name);
  return env != NULL && *env != '\0' ? env : fallback;
}

gboolean
runlimits_init (RunLimits *limits, const char *timeout, const char *memory,
                const char *max_processes, GError **error)
{
  const char *t = pick (timeout, "APT2OSTREE_TIMEOUT", RUNLIMITS_DEFAULT_TIMEOUT);
  const char *m = pick (memory, "APT2OSTREE_MEMORY_LIMIT", RUNLIMITS_DEFAULT_MEMORY);
  const char *p = pick (max_processes, "APT2OSTREE_MAX_PROCESSES",
                        RUNLIMITS_DEFAULT_MAX_PROCESSES);
  guint64 tv = 0, pv = 0, mv = 0;
  if (!is_none (t) && !parse_count (t, "--timeout", G_MAXUINT / 1000, &tv, error))
    return FALSE;
  if (!is_none (p) && !parse_count (p, "--max-processes", G_MAXINT, &pv, error))
    return FALSE;
  if (!is_none (m) && !parse_size (m, &mv, error))
    return FALSE;
  *limits = (RunLimits) { .timeout = tv, .memory = mv, .max_processes = pv };
  return TRUE;
}

char *
runlimits_format_size (guint64 bytes)
{
  /* (g_format_size puts a no-break space before the unit) */
  static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
  double value = bytes;
  guint u = 0;
  while (value >= 1024 && u + 1 < G_N_ELEMENTS (units))
    value /= 1024, u++;
  return u == 0 ? g_strdup_printf ("%" G_GUINT64_FORMAT " bytes", bytes)
                : g_strdup_printf ("%.1f %s", value, units[u]);
}

/* --- finding the cgroups --- */

/* The caller's cgroup in the hierarchy whose /proc/self/cgroup line has
 * CONTROLLER among its controllers (NULL: the v2 line, "0::PATH"). */
static char *
own_cgroup (const char *controller)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents ("/proc/self/cgroup", &text, NULL, NULL))
    return NULL;
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      g_auto(GStrv) f = g_strsplit (*l, ":", 3);
      if (g_strv_length (f) != 3)
        continue;
      if (controller == NULL && g_str_equal (f[0], "0") && f[1][0] == '\0')
        return g_strdup (f[2]);
      g_auto(GStrv) names = g_strsplit (f[1], ",", -1);
      if (controller != NULL && g_strv_contains ((const char *const *) names, controller))
        return g_strdup (f[2]);
    }
  return NULL;
}

/* Where the hierarchy of CONTROLLER (NULL: the v2 one) is mounted, with
 * the mount's root taken off PATH (a container's view). */
static char *
hierarchy_dir (const char *controller, const char *path)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents ("/proc/self/mountinfo", &text, NULL, NULL))
    return NULL;
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      const char *sep = strstr (*l, " - ");
      if (sep == NULL)
        continue;
      g_auto(GStrv) head = g_strsplit (*l, " ", 6);
      g_auto(GStrv) tail = g_strsplit (sep + 3, " ", 3);
      if (g_strv_length (head) < 5 || g_strv_length (tail) < 3)
        continue;
      gboolean match;
      if (controller == NULL)
        match = g_str_equal (tail[0], "cgroup2");
      else
        {
          g_auto(GStrv) opts = g_strsplit (g_strstrip (tail[2]), ",", -1);
          match = g_str_equal (tail[0], "cgroup")
                  && g_strv_contains ((const char *const *) opts, controller);
        }
      if (!match)
        continue;
      const char *root = head[3], *rel = path;
      if (!g_str_equal (root, "/") && g_str_has_prefix (path, root))
        rel = path + strlen (root);
      return g_build_filename (head[4], rel, NULL);
    }
  return NULL;
}

static gboolean
write_file (const char *dir, const char *name, const char *value)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  FILE *f = fopen (path, "we");
  if (f == NULL)
    return FALSE;
  gboolean ok = fputs (value, f) >= 0;
  return fclose (f) == 0 && ok;
}

/* The number after KEY in a "key value" file of DIR, or 0. */
static guint64
read_key (const char *dir, const char *name, const char *key)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      g_auto(GStrv) f = g_strsplit (*l, " ", 2);
      if (g_strv_length (f) == 2 && g_str_equal (f[0], key))
        return g_ascii_strtoull (f[1], NULL, 10);
    }
  return 0;
}

/* --- the run's cgroups --- */

typedef enum { HELD_BY_RLIMIT, HELD_BY_V2, HELD_BY_V1 } Held;

struct RunCgroup {
  RunLimits limits;
  char *memory_dir;        /* NULL: not held by a cgroup */
  char *pids_dir;
  Held memory_held, pids_held;
  GPtrArray *dirs;         /* every directory made, removed at the end */
};

/* The empty directories runs that were killed left under PARENT (their
 * process is gone): removed. */
static void
remove_stale (const char *parent)
{
  g_autoptr(GDir) dir = g_dir_open (parent, 0, NULL);
  const char *name;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      int pid = 0;
      if (sscanf (name, "apt2ostree-run-%d-", &pid) == 1 && pid > 0 && kill (pid, 0) < 0
          && errno == ESRCH)
        {
          g_autofree char *path = g_build_filename (parent, name, NULL);
          (void) rmdir (path);
        }
    }
}

/* A new directory under PARENT for this run. */
static char *
make_run_dir (RunCgroup *cg, const char *parent)
{
  remove_stale (parent);
  g_autofree char *name = g_strdup_printf ("apt2ostree-run-%d-%" G_GINT64_FORMAT,
                                           (int) getpid (), g_get_monotonic_time ());
  char *dir = g_build_filename (parent, name, NULL);
  if (mkdir (dir, 0755) < 0)
    return g_free (dir), NULL;
  g_ptr_array_add (cg->dirs, dir);
  return dir;
}

static gboolean
v2_has_controller (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, "cgroup.subtree_control", NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  g_auto(GStrv) names = g_strsplit_set (g_strstrip (text), " ", -1);
  if (g_strv_contains ((const char *const *) names, name))
    return TRUE;
  /* Delegated but not enabled yet: possible when our cgroup holds no
   * process (the v2 rule), e.g. a delegated parent of the caller's leaf. */
  g_autofree char *plus = g_strconcat ("+", name, NULL);
  return write_file (dir, "cgroup.subtree_control", plus);
}

/* cgroup v2: one directory holds both limits, where the caller's cgroup
 * hands the controllers down. */
static void
try_v2 (RunCgroup *cg)
{
  g_autofree char *own = own_cgroup (NULL);
  g_autofree char *parent = own != NULL ? hierarchy_dir (NULL, own) : NULL;
  if (parent == NULL)
    return;
  gboolean memory = cg->limits.memory > 0 && v2_has_controller (parent, "memory");
  gboolean pids = cg->limits.max_processes > 0 && v2_has_controller (parent, "pids");
  if (!memory && !pids)
    return;
  const char *dir = make_run_dir (cg, parent);
  if (dir == NULL)
    return;
  g_autofree char *mem = g_strdup_printf ("%" G_GUINT64_FORMAT, cg->limits.memory);
  g_autofree char *max = g_strdup_printf ("%u", cg->limits.max_processes);
  if (memory && write_file (dir, "memory.max", mem))
    {
      /* Swap would let the command outgrow its limit slowly instead of
       * failing; where the file is missing there is no swap accounting. */
      (void) write_file (dir, "memory.swap.max", "0");
      cg->memory_dir = g_strdup (dir);
      cg->memory_held = HELD_BY_V2;
    }
  if (pids && write_file (dir, "pids.max", max))
    {
      cg->pids_dir = g_strdup (dir);
      cg->pids_held = HELD_BY_V2;
    }
}

/* cgroup v1: a directory in the CONTROLLER hierarchy, with FILE set to VALUE. */
static char *
try_v1 (RunCgroup *cg, const char *controller, const char *file, const char *value)
{
  g_autofree char *own = own_cgroup (controller);
  g_autofree char *parent = own != NULL ? hierarchy_dir (controller, own) : NULL;
  if (parent == NULL || access (parent, W_OK) < 0)
    return NULL;
  const char *dir = make_run_dir (cg, parent);
  if (dir == NULL || !write_file (dir, file, value))
    return NULL;
  return g_strdup (dir);
}

RunCgroup *
runcgroup_new (const RunLimits *limits)
{
  RunCgroup *cg = g_new0 (RunCgroup, 1);
  cg->limits = *limits;
  cg->dirs = g_ptr_array_new_with_free_func (g_free);
  try_v2 (cg);
  if (cg->limits.memory > 0 && cg->memory_dir == NULL)
    {
      g_autofree char *mem = g_strdup_printf ("%" G_GUINT64_FORMAT, cg->limits.memory);
      cg->memory_dir = try_v1 (cg, "memory", "memory.limit_in_bytes", mem);
      cg->memory_held = cg->memory_dir != NULL ? HELD_BY_V1 : HELD_BY_RLIMIT;
    }
  if (cg->limits.max_processes > 0 && cg->pids_dir == NULL)
    {
      g_autofree char *max = g_strdup_printf ("%u", cg->limits.max_processes);
      cg->pids_dir = try_v1 (cg, "pids", "pids.max", max);
      cg->pids_held = cg->pids_dir != NULL ? HELD_BY_V1 : HELD_BY_RLIMIT;
    }
  return cg;
}

static gboolean
set_rlimit (pid_t pid, int resource, guint64 value, const char *what, GError **error)
{
  struct rlimit limit = { .rlim_cur = value, .rlim_max = value };
  struct rlimit old;
  /* Never above what the caller already has. */
  if (prlimit (pid, resource, NULL, &old) == 0 && old.rlim_max != RLIM_INFINITY
      && old.rlim_max < value)
    limit.rlim_cur = limit.rlim_max = old.rlim_max;
  if (prlimit (pid, resource, &limit, NULL) < 0)
    return util_fail (error, "cannot set the sandbox's %s limit: %s", what, g_strerror (errno));
  return TRUE;
}

/* Move PID into *DIR; where it cannot go (a v2 cgroup outside the
 * subtree we may move processes in), the limit falls back to an rlimit. */
static void
enter_dir (char **dir, Held *held, pid_t pid)
{
  g_autofree char *text = g_strdup_printf ("%d", (int) pid);
  if (*dir != NULL && !write_file (*dir, "cgroup.procs", text))
    {
      g_clear_pointer (dir, g_free);
      *held = HELD_BY_RLIMIT;
    }
}

gboolean
runcgroup_enter (RunCgroup *cg, pid_t pid, GError **error)
{
  enter_dir (&cg->memory_dir, &cg->memory_held, pid);
  enter_dir (&cg->pids_dir, &cg->pids_held, pid);
  if (cg->limits.memory > 0 && cg->memory_dir == NULL
      && !set_rlimit (pid, RLIMIT_DATA, cg->limits.memory, "memory", error))
    return FALSE;
  if (cg->limits.max_processes > 0 && cg->pids_dir == NULL
      && !set_rlimit (pid, RLIMIT_NPROC, cg->limits.max_processes, "process", error))
    return FALSE;
  return TRUE;
}

/* SIGKILL every process in DIR; TRUE when there was none. */
static gboolean
kill_all (const char *dir)
{
  g_autofree char *path = g_build_filename (dir, "cgroup.procs", NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return TRUE;
  gboolean empty = TRUE;
  g_auto(GStrv) pids = g_strsplit (text, "\n", -1);
  for (char **p = pids; *p != NULL; p++)
    if (**p != '\0')
      {
        empty = FALSE;
        (void) kill ((pid_t) g_ascii_strtoll (*p, NULL, 10), SIGKILL);
      }
  return empty;
}

void
runcgroup_kill (RunCgroup *cg)
{
  /* Killed processes leave the cgroup once the kernel has torn them down:
   * a few milliseconds; give up after two seconds (the directory stays). */
  for (guint i = 0; i < cg->dirs->len; i++)
    for (int tries = 0; tries < 2000 && !kill_all (cg->dirs->pdata[i]); tries++)
      g_usleep (1000);
}

char *
runcgroup_limit_hit (RunCgroup *cg)
{
  if (cg->memory_dir != NULL
      && read_key (cg->memory_dir, cg->memory_held == HELD_BY_V2 ? "memory.events"
                   : "memory.oom_control", "oom_kill") > 0)
    {
      g_autofree char *size = runlimits_format_size (cg->limits.memory);
      return g_strdup_printf ("it ran out of its memory limit of %s (--memory-limit)", size);
    }
  if (cg->pids_dir != NULL && read_key (cg->pids_dir, "pids.events", "max") > 0)
    return g_strdup_printf ("it reached its limit of %u processes (--max-processes)",
                            cg->limits.max_processes);
  return NULL;
}

static const char *
held_name (Held held)
{
  switch (held)
    {
    case HELD_BY_V2: return "cgroup v2";
    case HELD_BY_V1: return "cgroup v1";
    default: return "rlimit";
    }
}

char *
runcgroup_describe (RunCgroup *cg)
{
  g_autofree char *size = runlimits_format_size (cg->limits.memory);
  g_autofree char *timeout = cg->limits.timeout > 0 ? g_strdup_printf ("%u s", cg->limits.timeout)
                                                    : g_strdup ("none");
  g_autofree char *memory = cg->limits.memory > 0
                            ? g_strdup_printf ("%s (%s)", size, held_name (cg->memory_held))
                            : g_strdup ("none");
  gboolean ignored = cg->pids_held == HELD_BY_RLIMIT && getuid () == 0;
  g_autofree char *procs = cg->limits.max_processes > 0
                           ? g_strdup_printf ("%u (%s%s)", cg->limits.max_processes,
                                              held_name (cg->pids_held),
                                              ignored ? ", which root ignores" : "")
                           : g_strdup ("none");
  return g_strdup_printf ("timeout %s, memory %s, processes %s", timeout, memory, procs);
}

void
runcgroup_free (RunCgroup *cg)
{
  if (cg == NULL)
    return;
  runcgroup_kill (cg);
  for (guint i = cg->dirs->len; i > 0; i--)
    (void) rmdir (cg->dirs->pdata[i - 1]);
  g_ptr_array_unref (cg->dirs);
  g_free (cg->memory_dir);
  g_free (cg->pids_dir);
  g_free (cg);
}
