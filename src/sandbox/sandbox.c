/* sandbox.c — run a command in bubblewrap over a list of mount operations.
 *
 * One forked child does everything that must happen in new namespaces before
 * bubblewrap starts (bubblewrap < 0.11 cannot mount an overlay): it unshares
 * a mount namespace (and a user namespace when not root), mounts each
 * overlay on its host-side "merged" directory, reports the overlay's st_dev
 * to the parent and executes bubblewrap with "--args FD": bubblewrap waits
 * until the parent has written the last arguments there (environment
 * variables known only once the overlay is up, e.g. fakeroot's key), so
 * they reach the command but not bubblewrap itself.  The child first joins
 * a new session keyring of its own, and bubblewrap loads the system call
 * filter of seccomp.c ("--seccomp FD") before it executes the command.
 * The child only makes async-signal-safe calls: everything it needs is
 * prepared before the fork. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <linux/keyctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "sandbox/seccomp.h"
#include "base/util.h"

#define TAIL_LINES 8

struct Sandbox {
  GPtrArray *ops;        /* SandboxOp */
  GPtrArray *env;        /* "NAME=VALUE" */
  char *chdir;
  gboolean network;
  gboolean unprivileged;
  gboolean share_ipc;
  SandboxMountedFunc mounted_func;
  gpointer mounted_data;
  char *log_path;
  gboolean echo;
  SandboxOutputFunc output_func;
  gpointer output_data;
  gboolean terminal;
  RunLimits limits;
};

static void
sandbox_op_free (SandboxOp *op)
{
  g_free (op->source);
  g_free (op->dest);
  g_free (op->upper);
  g_free (op->work);
  g_free (op->merged);
  g_free (op);
}

Sandbox *
sandbox_new (void)
{
  Sandbox *sandbox = g_new0 (Sandbox, 1);
  sandbox->ops = g_ptr_array_new_with_free_func ((GDestroyNotify) sandbox_op_free);
  sandbox->env = g_ptr_array_new_with_free_func (g_free);
  return sandbox;
}

void
sandbox_free (Sandbox *sandbox)
{
  if (sandbox == NULL)
    return;
  g_ptr_array_unref (sandbox->ops);
  g_ptr_array_unref (sandbox->env);
  g_free (sandbox->chdir);
  g_free (sandbox->log_path);
  g_free (sandbox);
}

void
sandbox_add (Sandbox *sandbox, SandboxOpType type, const char *source, const char *dest)
{
  g_return_if_fail (type != SANDBOX_OP_OVERLAY);
  SandboxOp *op = g_new0 (SandboxOp, 1);
  op->type = type;
  op->source = g_strdup (source);
  op->dest = g_strdup (dest);
  g_ptr_array_add (sandbox->ops, op);
}

void
sandbox_add_overlay (Sandbox *sandbox, const char *lower, const char *upper, const char *work,
                     const char *merged, const char *dest)
{
  SandboxOp *op = g_new0 (SandboxOp, 1);
  op->type = SANDBOX_OP_OVERLAY;
  op->source = g_strdup (lower);
  op->upper = g_strdup (upper);
  op->work = g_strdup (work);
  op->merged = g_strdup (merged);
  op->dest = g_strdup (dest);
  g_ptr_array_add (sandbox->ops, op);
}

void
sandbox_setenv (Sandbox *sandbox, const char *name, const char *value)
{
  g_autofree char *prefix = g_strconcat (name, "=", NULL);
  for (guint i = 0; i < sandbox->env->len; i++)
    if (g_str_has_prefix (sandbox->env->pdata[i], prefix))
      {
        g_ptr_array_remove_index (sandbox->env, i);
        break;
      }
  g_ptr_array_add (sandbox->env, g_strconcat (prefix, value, NULL));
}

void
sandbox_set_chdir (Sandbox *sandbox, const char *dir)
{
  g_free (sandbox->chdir);
  sandbox->chdir = g_strdup (dir);
}

void
sandbox_set_network (Sandbox *sandbox, gboolean network)
{
  sandbox->network = network;
}

void
sandbox_set_unprivileged (Sandbox *sandbox, gboolean unprivileged)
{
  sandbox->unprivileged = unprivileged;
}

void
sandbox_set_share_ipc (Sandbox *sandbox, gboolean share_ipc)
{
  sandbox->share_ipc = share_ipc;
}

void
sandbox_set_mounted_func (Sandbox *sandbox, SandboxMountedFunc func, gpointer user_data)
{
  sandbox->mounted_func = func;
  sandbox->mounted_data = user_data;
}

void
sandbox_set_output (Sandbox *sandbox, const char *log_path, gboolean echo)
{
  g_free (sandbox->log_path);
  sandbox->log_path = g_strdup (log_path);
  sandbox->echo = echo;
}

void
sandbox_set_output_func (Sandbox *sandbox, SandboxOutputFunc func, gpointer user_data)
{
  sandbox->output_func = func;
  sandbox->output_data = user_data;
}

void
sandbox_set_terminal (Sandbox *sandbox, gboolean terminal)
{
  sandbox->terminal = terminal;
}

void
sandbox_set_limits (Sandbox *sandbox, const RunLimits *limits)
{
  sandbox->limits = *limits;
}

const GPtrArray *
sandbox_get_ops (Sandbox *sandbox)
{
  return sandbox->ops;
}

void
sandbox_result_clear (SandboxResult *result)
{
  g_clear_pointer (&result->output_tail, g_free);
  g_clear_pointer (&result->limit_hit, g_free);
  g_clear_pointer (&result->limits_held, g_free);
}

char *
sandbox_find_bwrap (GError **error)
{
  const char *env = g_getenv ("APT2OSTREE_BWRAP");
  const char *name = (env != NULL && *env != '\0') ? env : "bwrap";
  g_autofree char *path = g_find_program_in_path (name);
  if (path == NULL)
    {
      if (env != NULL && *env != '\0')
        util_fail (error, "bubblewrap not found: APT2OSTREE_BWRAP=\"%s\" is not an executable; "
                   "install the \"bubblewrap\" package or fix APT2OSTREE_BWRAP", env);
      else
        util_fail (error, "bubblewrap (\"bwrap\") not found in PATH; install the \"bubblewrap\" "
                   "package or set APT2OSTREE_BWRAP to its path");
      return NULL;
    }
  return g_steal_pointer (&path);
}

/* bubblewrap's version as major * 1000 + minor, e.g. 8 for 0.8.0. */
static gboolean
bwrap_version (const char *bwrap, guint *out_version, GError **error)
{
  const char *argv[] = { bwrap, "--version", NULL };
  g_autofree char *out = NULL;
  int status;
  g_autoptr(GError) local_error = NULL;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out,
                     NULL, &status, &local_error))
    return util_fail (error, "%s: cannot run it: %s; install the \"bubblewrap\" package",
                      bwrap, local_error->message);
  guint major = 0, minor = 0;
  if (!g_spawn_check_wait_status (status, NULL) || out == NULL
      || sscanf (out, "bubblewrap %u.%u", &major, &minor) != 2)
    return util_fail (error, "%s: \"%s --version\" does not answer like bubblewrap; "
                      "install the \"bubblewrap\" package", bwrap, bwrap);
  *out_version = major * 1000 + minor;
  return TRUE;
}

static void
add_args (GPtrArray *args, const char *first, ...)
{
  va_list ap;
  va_start (ap, first);
  for (const char *a = first; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (args, g_strdup (a));
  va_end (ap);
}

GPtrArray *
sandbox_bwrap_args (Sandbox *sandbox, gboolean premounted, char **argv)
{
  GPtrArray *args = g_ptr_array_new_with_free_func (g_free);
  add_args (args, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-uts",
            "--hostname", SANDBOX_HOSTNAME, "--unshare-cgroup-try", "--cap-drop", "ALL", NULL);
  static const char *const caps[] = { SANDBOX_CAPS };
  for (guint i = 0; i < G_N_ELEMENTS (caps); i++)
    add_args (args, "--cap-add", caps[i], NULL);
  if (!sandbox->share_ipc)
    add_args (args, "--unshare-ipc", NULL);
  if (!sandbox->network)
    add_args (args, "--unshare-net", NULL);

  for (guint i = 0; i < sandbox->ops->len; i++)
    {
      const SandboxOp *op = sandbox->ops->pdata[i];
      switch (op->type)
        {
        case SANDBOX_OP_BIND:
          add_args (args, "--bind", op->source, op->dest, NULL);
          break;
        case SANDBOX_OP_RO_BIND:
          add_args (args, "--ro-bind", op->source, op->dest, NULL);
          break;
        case SANDBOX_OP_DEV:
          add_args (args, "--dev", op->dest, NULL);
          break;
        case SANDBOX_OP_PROC:
          {
            /* bubblewrap leaves /proc/sys writable (access(2) says EACCES for
             * the directory, so it skips it), and a write there needs only
             * uid 0, no capability.  What it shows depends on the reader's
             * namespaces, not on the procfs, so the host's serves.  keys
             * and key-users list the keys (names, owners) the caller's user
             * may view, the host's included: masked, as Docker masks them,
             * by /dev/null (a device: a read-only bind, nodev, refuses it). */
            g_autofree char *sys = g_build_filename (op->dest, "sys", NULL);
            g_autofree char *keys = g_build_filename (op->dest, "keys", NULL);
            g_autofree char *key_users = g_build_filename (op->dest, "key-users", NULL);
            add_args (args, "--proc", op->dest, "--ro-bind", "/proc/sys", sys,
                      "--dev-bind-try", "/dev/null", keys, "--dev-bind-try", "/dev/null", key_users,
                      NULL);
          }
          break;
        case SANDBOX_OP_TMPFS:
          add_args (args, "--tmpfs", op->dest, NULL);
          break;
        case SANDBOX_OP_SYMLINK:
          add_args (args, "--symlink", op->source, op->dest, NULL);
          break;
        case SANDBOX_OP_OVERLAY:
          if (premounted)
            add_args (args, "--bind", op->merged, op->dest, NULL);
          else
            add_args (args, "--overlay-src", op->source, "--overlay", op->upper, op->work,
                      op->dest, NULL);
          break;
        }
    }
  if (sandbox->chdir != NULL)
    add_args (args, "--chdir", sandbox->chdir, NULL);
  add_args (args, "--", NULL);
  for (char **a = argv; *a != NULL; a++)
    g_ptr_array_add (args, g_strdup (*a));
  return args;
}

/* --- the child: namespaces, overlay mounts, exec --- */

typedef enum {
  STEP_MOUNTED,          /* not an error: the overlays are up */
  STEP_KEYRING,
  STEP_UNSHARE,
  STEP_ID_MAP,
  STEP_MAKE_PRIVATE,
  STEP_MOUNT_OVERLAY,
  STEP_EXEC,
} ChildStep;

typedef struct {
  int step;
  int err;
  int op_index;
  dev_t dev;
} ChildMessage;

typedef struct {
  gboolean premount;
  gboolean unprivileged;
  char uid_map[64];
  char gid_map[64];
  const char **overlay_targets;   /* merged directories */
  const char **overlay_options;   /* mount data */
  const char **overlay_volatile_options;
  int n_overlays;
  const char *bwrap;
  char **bwrap_argv;
  char **envp;
  int status_fd;
  int args_fd;                    /* read by bubblewrap (--args) */
  int seccomp_fd;                 /* read by bubblewrap (--seccomp) */
  int max_fd;                     /* past the highest descriptor there may be */
  int output_fd;                  /* -1: the caller's stdin, stdout and stderr */
  int parent_fds[3];              /* the parent's ends, closed in the child */
} ChildPlan;

static void
child_report (int fd, int step, int err, int op_index, dev_t dev)
{
  ChildMessage msg = { step, err, op_index, dev };
  ssize_t r;
  do
    r = write (fd, &msg, sizeof msg);
  while (r < 0 && errno == EINTR);
}

static G_GNUC_NORETURN void
child_fail (ChildPlan *plan, int step, int op_index)
{
  child_report (plan->status_fd, step, errno, op_index, 0);
  _exit (127);
}

static gboolean
write_proc_file (const char *path, const char *content)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return FALSE;
  ssize_t len = strlen (content);
  gboolean ok = write (fd, content, len) == len;
  int saved = errno;
  close (fd);
  errno = saved;
  return ok;
}

static G_GNUC_NORETURN void
child_main (ChildPlan *plan)
{
  for (int i = 0; i < 3; i++)
    close (plan->parent_fds[i]);

  /* A keyring of its own: the session keyring inherited from the caller
   * (root's holds the host's keys) is out of reach even for a process the
   * filter would not stop.  ENOSYS and EPERM: the kernel has no keyrings,
   * or a filter outside ours denies them, so none is reachable anyway. */
  if (syscall (SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0
      && errno != ENOSYS && errno != EPERM)
    child_fail (plan, STEP_KEYRING, -1);

  if (plan->premount)
    {
      int flags = CLONE_NEWNS | (plan->unprivileged ? CLONE_NEWUSER : 0);
      if (unshare (flags) < 0)
        child_fail (plan, STEP_UNSHARE, -1);
      if (plan->unprivileged
          && (!write_proc_file ("/proc/self/uid_map", plan->uid_map)
              || !write_proc_file ("/proc/self/setgroups", "deny")
              || !write_proc_file ("/proc/self/gid_map", plan->gid_map)))
        child_fail (plan, STEP_ID_MAP, -1);
      if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        child_fail (plan, STEP_MAKE_PRIVATE, -1);
    }

  dev_t dev = 0;
  for (int i = 0; i < plan->n_overlays; i++)
    {
      /* "volatile" first (Linux >= 5.10): the scratch layers are thrown
       * away, so their unmount need not sync the filesystem. */
      if (mount ("overlay", plan->overlay_targets[i], "overlay", 0,
                 plan->overlay_volatile_options[i]) < 0
          && mount ("overlay", plan->overlay_targets[i], "overlay", 0,
                    plan->overlay_options[i]) < 0)
        child_fail (plan, STEP_MOUNT_OVERLAY, i);
      struct stat st;
      if (i == 0 && stat (plan->overlay_targets[i], &st) == 0)
        dev = st.st_dev;
    }
  child_report (plan->status_fd, STEP_MOUNTED, 0, -1, dev);

  /* Nothing the caller had open reaches the command (a descriptor of
   * ninja's, a terminal, a log open for writing): every descriptor past
   * stderr closes on exec, but the two bubblewrap reads its last arguments
   * and the filter from. */
  if (close_range (3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
    for (int fd = 3; fd < plan->max_fd; fd++)
      (void) fcntl (fd, F_SETFD, FD_CLOEXEC);
  if (fcntl (plan->args_fd, F_SETFD, 0) < 0 || fcntl (plan->seccomp_fd, F_SETFD, 0) < 0)
    child_fail (plan, STEP_EXEC, -1);
  if (plan->output_fd >= 0)
    {
      int devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
      if (devnull > 0)
        dup2 (devnull, 0);
      else if (devnull == 0)
        (void) fcntl (0, F_SETFD, 0);
      dup2 (plan->output_fd, 1);
      dup2 (plan->output_fd, 2);
    }
  execve (plan->bwrap, plan->bwrap_argv, plan->envp);
  child_fail (plan, STEP_EXEC, -1);
}

/* --- the parent --- */

static gboolean
read_message (int fd, ChildMessage *msg, gboolean *out_eof)
{
  size_t got = 0;
  while (got < sizeof *msg)
    {
      ssize_t r = read (fd, ((char *) msg) + got, sizeof *msg - got);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      got += r;
    }
  *out_eof = (got == 0);
  return got == sizeof *msg;
}

static gboolean
child_error (Sandbox *sandbox, const char *bwrap, const ChildMessage *msg, GError **error)
{
  const char *why = g_strerror (msg->err);
  switch (msg->step)
    {
    case STEP_UNSHARE:
      if (sandbox->unprivileged)
        return util_fail (error, "cannot create a user and mount namespace (%s); enable "
                          "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 "
                          "and user.max_user_namespaces > 0) or run as root", why);
      return util_fail (error, "cannot create a mount namespace (%s); run as root", why);
    case STEP_ID_MAP:
      return util_fail (error, "cannot map the calling user to root in a user namespace (%s); "
                        "enable unprivileged user namespaces or run as root", why);
    case STEP_KEYRING:
      return util_fail (error, "cannot give the sandbox a session keyring of its own (%s)%s", why,
                        msg->err == EDQUOT ? "; too many keys for this user: raise the "
                        "sysctl kernel.keys.maxkeys" : "");
    case STEP_MAKE_PRIVATE:
      return util_fail (error, "cannot make the sandbox's mounts private (%s)", why);
    case STEP_MOUNT_OVERLAY:
      {
        const SandboxOp *op = NULL;
        int n = 0;
        for (guint i = 0; i < sandbox->ops->len; i++)
          {
            const SandboxOp *o = sandbox->ops->pdata[i];
            if (o->type == SANDBOX_OP_OVERLAY && n++ == msg->op_index)
              op = o;
          }
        if (msg->err == ENODEV)
          return util_fail (error, "cannot mount an overlay on %s: the kernel does not support "
                            "overlayfs (%s); load it with \"modprobe overlay\" or use a kernel "
                            "with CONFIG_OVERLAY_FS", op ? op->merged : "?", why);
        return util_fail (error, "cannot mount an overlay on %s (lower %s, upper %s): %s; the "
                          "kernel or the filesystem of %s does not support overlayfs there "
                          "(choose another --workdir on the repository's filesystem%s)",
                          op ? op->merged : "?", op ? op->source : "?", op ? op->upper : "?",
                          why, op ? op->upper : "?",
                          sandbox->unprivileged ? ", or run as root: unprivileged overlay "
                          "mounts need Linux >= 5.11" : "");
      }
    case STEP_EXEC:
      return util_fail (error, "cannot execute %s: %s; install the \"bubblewrap\" package",
                        bwrap, why);
    default:
      return util_fail (error, "sandbox setup failed: %s", why);
    }
}

/* Keep the last TAIL_LINES lines of the output. */
static void
tail_append (GString *tail, const char *buf, gsize len)
{
  g_string_append_len (tail, buf, len);
  if (tail->len > 16384)
    g_string_erase (tail, 0, tail->len - 8192);
}

static char *
tail_format (GString *tail)
{
  g_auto(GStrv) lines = g_strsplit (tail->str, "\n", -1);
  g_autoptr(GPtrArray) kept = g_ptr_array_new ();
  for (char **l = lines; *l != NULL; l++)
    {
      g_strstrip (*l);
      if (**l != '\0')
        g_ptr_array_add (kept, *l);
    }
  guint start = kept->len > TAIL_LINES ? kept->len - TAIL_LINES : 0;
  GString *s = g_string_new ("");
  for (guint i = start; i < kept->len; i++)
    {
      if (s->len > 0)
        g_string_append (s, " | ");
      const char *line = kept->pdata[i];
      if (strlen (line) > 200)
        g_string_append_printf (s, "%.200s…", line);
      else
        g_string_append (s, line);
    }
  return g_string_free (s, FALSE);
}

static gboolean
overlay_options (Sandbox *sandbox, const SandboxOp *op, char **out_options, GError **error)
{
  const char *paths[] = { op->source, op->upper, op->work };
  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    if (strpbrk (paths[i], ",:\\") != NULL)
      return util_fail (error, "%s: overlay directories cannot contain \",\", \":\" or \"\\\"; "
                        "choose another --workdir", paths[i]);
  /* No redirects, no index, no metacopy: the upper directory then says all
   * there is to say with plain files, whiteouts and opaque directories. */
  *out_options = g_strdup_printf ("lowerdir=%s,upperdir=%s,workdir=%s,index=off,metacopy=off,%s",
                                  op->source, op->upper, op->work,
                                  /* userxattr never writes redirects, and refuses the option */
                                  sandbox->unprivileged ? "userxattr" : "redirect_dir=off");
  return TRUE;
}

static gboolean
make_pipe (int *out_read, int *out_write, GError **error)
{
  int fds[2];
  if (pipe2 (fds, O_CLOEXEC) < 0)
    return util_fail (error, "pipe: %s", g_strerror (errno));
  *out_read = fds[0];
  *out_write = fds[1];
  return TRUE;
}

/* The overlays the child mounts: mount points and mount options, with and
 * without "volatile". */
typedef struct {
  GPtrArray *targets;            /* borrowed from the ops */
  GPtrArray *options;
  GPtrArray *volatile_options;
} Premounts;

static void
premounts_clear (Premounts *mounts)
{
  g_clear_pointer (&mounts->targets, g_ptr_array_unref);
  g_clear_pointer (&mounts->options, g_ptr_array_unref);
  g_clear_pointer (&mounts->volatile_options, g_ptr_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Premounts, premounts_clear)

/* Every overlay when PREMOUNT, else none. */
static gboolean
premount_plan (Sandbox *sandbox, gboolean premount, Premounts *mounts, GError **error)
{
  mounts->targets = g_ptr_array_new ();
  mounts->options = g_ptr_array_new_with_free_func (g_free);
  mounts->volatile_options = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; premount && i < sandbox->ops->len; i++)
    {
      const SandboxOp *op = sandbox->ops->pdata[i];
      if (op->type != SANDBOX_OP_OVERLAY)
        continue;
      char *opts = NULL;
      if (!overlay_options (sandbox, op, &opts, error))
        return FALSE;
      g_ptr_array_add (mounts->targets, op->merged);
      g_ptr_array_add (mounts->options, opts);
      g_ptr_array_add (mounts->volatile_options, g_strconcat (opts, ",volatile", NULL));
    }
  return TRUE;
}

/* Environment variables added since the child was forked (by the mounted
 * callback) go to bubblewrap's --args: "--setenv NAME VALUE", NUL-separated,
 * so they reach the command and not bubblewrap itself. */
static gboolean
send_late_env (Sandbox *sandbox, guint n_env, int args_fd, GError **error)
{
  g_autoptr(GString) extra = g_string_new ("");
  for (guint i = n_env; i < sandbox->env->len; i++)
    {
      const char *var = sandbox->env->pdata[i];
      const char *eq = strchr (var, '=');
      g_string_append_len (extra, "--setenv", sizeof "--setenv");
      g_string_append_len (extra, var, eq - var);
      g_string_append_c (extra, '\0');
      g_string_append_len (extra, eq + 1, strlen (eq + 1) + 1);
    }
  if (extra->len > 0 && write (args_fd, extra->str, extra->len) != (ssize_t) extra->len)
    return util_fail (error, "cannot start the sandbox: %s", g_strerror (errno));
  return TRUE;
}

/* Milliseconds until DEADLINE (monotonic microseconds; 0: none, -1 for
 * poll), 0 once past. */
static int
ms_until (gint64 deadline)
{
  if (deadline == 0)
    return -1;
  gint64 left = deadline - g_get_monotonic_time ();
  if (left <= 0)
    return 0;
  return (int) MIN ((left + 999) / 1000, (gint64) G_MAXINT);
}

/* The command's output until it ends (FALSE: DEADLINE came first): to the
 * log, to stderr when echoing, and its tail kept.  Write errors (a full
 * disk) must not hide the command's own status, so they are ignored. */
static gboolean
collect_output (Sandbox *sandbox, int output_fd, int log_fd, GString *tail, gint64 deadline)
{
  char buf[8192];
  for (;;)
    {
      int wait_ms = ms_until (deadline);
      if (wait_ms == 0)
        return FALSE;
      struct pollfd pfd = { .fd = output_fd, .events = POLLIN };
      int n = poll (&pfd, 1, wait_ms);
      if (n < 0 && errno != EINTR)
        break;
      if (n <= 0)
        continue;
      ssize_t r = read (output_fd, buf, sizeof buf);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      tail_append (tail, buf, r);
      if (log_fd >= 0)
        (void) !write (log_fd, buf, r);
      if (sandbox->echo)
        (void) !write (STDERR_FILENO, buf, r);
      if (sandbox->output_func != NULL)
        sandbox->output_func (buf, r, sandbox->output_data);
    }
  return TRUE;
}

/* The command's output until its end or the deadline; past it, bubblewrap
 * is killed, and with it (--die-with-parent) the namespace's init and
 * every process in the namespace, then whatever the run's cgroup holds. */
static void
output_until_deadline (Sandbox *sandbox, pid_t pid, RunCgroup *cgroup, int output_fd,
                       int log_fd, GString *tail, SandboxResult *result)
{
  gint64 deadline = 0;
  if (sandbox->limits.timeout > 0)
    deadline = g_get_monotonic_time () + (gint64) sandbox->limits.timeout * G_USEC_PER_SEC;
  if (collect_output (sandbox, output_fd, log_fd, tail, deadline))
    return;
  result->timed_out = TRUE;
  (void) kill (pid, SIGKILL);
  runcgroup_kill (cgroup);
  /* What was written before the kill; nothing is left to hold the pipe. */
  (void) collect_output (sandbox, output_fd, log_fd, tail,
                         g_get_monotonic_time () + 5 * G_USEC_PER_SEC);
}

/* The pipes between the parent, the child and bubblewrap; each [0] is the
 * read end, [1] the write end. */
typedef struct {
  int status[2];   /* the child's ChildMessages */
  int args[2];     /* bubblewrap's last arguments (--args) */
  int output[2];   /* the command's stdout and stderr */
} Pipes;

static void
pipes_close (Pipes *pipes)
{
  for (int i = 0; i < 2; i++)
    {
      util_fd_close (&pipes->status[i]);
      util_fd_close (&pipes->args[i]);
      util_fd_close (&pipes->output[i]);
    }
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Pipes, pipes_close)

/* bubblewrap's command line: the rest of its arguments it reads from
 * ARGS_FD (--args) once the parent has written them; the system call
 * filter from SECCOMP_FD. */
static GPtrArray *
bwrap_command (Sandbox *sandbox, const char *bwrap, gboolean premount, int args_fd,
               int seccomp_fd, char **argv)
{
  GPtrArray *args = sandbox_bwrap_args (sandbox, premount, argv);
  g_ptr_array_insert (args, 0, g_strdup (bwrap));
  g_ptr_array_insert (args, 1, g_strdup ("--args"));
  g_ptr_array_insert (args, 2, g_strdup_printf ("%d", args_fd));
  g_ptr_array_insert (args, 3, g_strdup ("--seccomp"));
  g_ptr_array_insert (args, 4, g_strdup_printf ("%d", seccomp_fd));
  g_ptr_array_add (args, NULL);
  return args;
}

/* The environment as it is now, NULL-terminated (borrowed strings). */
static GPtrArray *
environment_vector (Sandbox *sandbox)
{
  GPtrArray *envp = g_ptr_array_new ();
  for (guint i = 0; i < sandbox->env->len; i++)
    g_ptr_array_add (envp, sandbox->env->pdata[i]);
  g_ptr_array_add (envp, NULL);
  return envp;
}

static gboolean
open_log (Sandbox *sandbox, int *out_fd, GError **error)
{
  if (sandbox->log_path == NULL)
    return TRUE;
  *out_fd = open (sandbox->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (*out_fd < 0)
    return util_fail (error, "%s: cannot create: %s", sandbox->log_path, g_strerror (errno));
  return TRUE;
}

/* Everything the child needs, prepared before the fork (it may only make
 * async-signal-safe calls). */
static void
child_plan_init (ChildPlan *plan, Sandbox *sandbox, gboolean premount, const Premounts *mounts,
                 const char *bwrap, GPtrArray *args, GPtrArray *envp, const Pipes *pipes,
                 int seccomp_fd)
{
  *plan = (ChildPlan) {
    .premount = premount,
    .unprivileged = sandbox->unprivileged,
    .overlay_targets = (const char **) mounts->targets->pdata,
    .overlay_options = (const char **) mounts->options->pdata,
    .overlay_volatile_options = (const char **) mounts->volatile_options->pdata,
    .n_overlays = mounts->targets->len,
    .bwrap = bwrap,
    .bwrap_argv = (char **) args->pdata,
    .envp = (char **) envp->pdata,
    .status_fd = pipes->status[1],
    .args_fd = pipes->args[0],
    .seccomp_fd = seccomp_fd,
    .max_fd = (int) MIN (MAX (sysconf (_SC_OPEN_MAX), 1024), 65536),
    .output_fd = sandbox->terminal ? -1 : pipes->output[1],
    .parent_fds = { pipes->status[0], pipes->args[1], pipes->output[0] },
  };
  g_snprintf (plan->uid_map, sizeof plan->uid_map, "0 %u 1\n", (guint) getuid ());
  g_snprintf (plan->gid_map, sizeof plan->gid_map, "0 %u 1\n", (guint) getgid ());
}

/* The child runs child_main; the parent keeps its own ends of the pipes. */
static gboolean
fork_child (ChildPlan *plan, Pipes *pipes, pid_t *out_pid, GError **error)
{
  pid_t pid = fork ();
  if (pid < 0)
    return util_fail (error, "fork: %s", g_strerror (errno));
  if (pid == 0)
    child_main (plan);

  util_fd_close (&pipes->status[1]);
  util_fd_close (&pipes->args[0]);
  util_fd_close (&pipes->output[1]);
  *out_pid = pid;
  return TRUE;
}

/* The parent's side of the start: the overlays are up (or the child says
 * why not), the mounted callback adds what it knows, bubblewrap gets its
 * last arguments and starts.  On failure the child is killed before
 * bubblewrap reads an incomplete --args. */
static gboolean
start_command (Sandbox *sandbox, const char *bwrap, pid_t pid, Pipes *pipes, guint n_env,
               GError **error)
{
  gboolean ok = TRUE;
  ChildMessage msg;
  gboolean eof;
  if (!read_message (pipes->status[0], &msg, &eof))
    ok = util_fail (error, "the sandbox's setup process died unexpectedly");
  else if (msg.step != STEP_MOUNTED)
    ok = child_error (sandbox, bwrap, &msg, error);
  else if (sandbox->mounted_func != NULL)
    ok = sandbox->mounted_func (sandbox, msg.dev, sandbox->mounted_data, error);

  if (ok)
    ok = send_late_env (sandbox, n_env, pipes->args[1], error);
  if (!ok)
    (void) kill (pid, SIGKILL);
  util_fd_close (&pipes->args[1]);

  /* A message now means bubblewrap could not be executed. */
  if (ok && read_message (pipes->status[0], &msg, &eof))
    ok = child_error (sandbox, bwrap, &msg, error);
  return ok;
}

static gboolean
wait_child (pid_t pid, int *out_wstatus, GError **error)
{
  while (waitpid (pid, out_wstatus, 0) < 0)
    if (errno != EINTR)
      return util_fail (error, "waitpid: %s", g_strerror (errno));
  return TRUE;
}

/* How COMMAND ended, from its wait status and the tail of its output. */
static void
fill_result (SandboxResult *result, int wstatus, GString *tail, const char *command)
{
  if (WIFEXITED (wstatus))
    result->exit_status = WEXITSTATUS (wstatus);
  else if (WIFSIGNALED (wstatus))
    result->exit_status = 128 + WTERMSIG (wstatus);
  result->output_tail = tail_format (tail);

  /* bubblewrap's own words when it cannot execute the command. */
  g_autofree char *expected = g_strdup_printf ("bwrap: execvp %s: No such file or directory",
                                               command);
  if (result->exit_status == 1 && strstr (tail->str, expected) != NULL)
    result->not_found = TRUE;
  if (result->exit_status == 1 && strstr (tail->str, "bwrap: Can't make overlay mount") != NULL)
    result->overlay_failed = TRUE;
}

gboolean
sandbox_run (Sandbox *sandbox, char **argv, SandboxResult *result, GCancellable *cancellable,
             GError **error)
{
  memset (result, 0, sizeof *result);
  g_autofree char *bwrap = sandbox_find_bwrap (error);
  if (bwrap == NULL)
    return FALSE;
  guint version = 0;
  if (!bwrap_version (bwrap, &version, error))
    return FALSE;

  /* bubblewrap >= 0.11 mounts overlays itself, but only the caller's own
   * namespace setup lets us see the overlay's st_dev (for fakeroot) and
   * choose its options, so unprivileged runs always premount. */
  gboolean premount = version < 11 || sandbox->unprivileged;
  result->overlay_userxattr = !premount || sandbox->unprivileged;
  g_auto(Premounts) mounts = { NULL };
  if (!premount_plan (sandbox, premount, &mounts, error))
    return FALSE;

  g_auto(Pipes) pipes = { { -1, -1 }, { -1, -1 }, { -1, -1 } };
  if (!make_pipe (&pipes.status[0], &pipes.status[1], error)
      || !make_pipe (&pipes.args[0], &pipes.args[1], error)
      || !make_pipe (&pipes.output[0], &pipes.output[1], error))
    return FALSE;

  util_autofd int seccomp_fd = -1;
  if (!sandbox_seccomp_open (&seccomp_fd, error))
    return FALSE;
  g_autoptr(GPtrArray) args = bwrap_command (sandbox, bwrap, premount, pipes.args[0], seccomp_fd,
                                             argv);
  g_autoptr(GPtrArray) envp = environment_vector (sandbox);
  guint n_env = sandbox->env->len;
  util_autofd int log_fd = -1;
  if (!open_log (sandbox, &log_fd, error))
    return FALSE;

  g_autoptr(RunCgroup) cgroup = runcgroup_new (&sandbox->limits);
  ChildPlan plan;
  child_plan_init (&plan, sandbox, premount, &mounts, bwrap, args, envp, &pipes, seccomp_fd);
  pid_t pid = -1;
  if (!fork_child (&plan, &pipes, &pid, error))
    return FALSE;

  /* bubblewrap starts nothing before it has read all of --args, which
   * start_command writes: the limits are in place by then. */
  gboolean ok = runcgroup_enter (cgroup, pid, error);
  result->limits_held = runcgroup_describe (cgroup);
  if (!ok)
    (void) kill (pid, SIGKILL);
  ok = ok && start_command (sandbox, bwrap, pid, &pipes, n_env, error);
  g_autoptr(GString) tail = g_string_new ("");
  output_until_deadline (sandbox, pid, cgroup, pipes.output[0], log_fd, tail, result);
  int wstatus;
  if (!wait_child (pid, &wstatus, error))
    return FALSE;
  if (!ok)
    return FALSE;
  fill_result (result, wstatus, tail, argv[0]);
  result->limit_hit = runcgroup_limit_hit (cgroup);
  return TRUE;
}
