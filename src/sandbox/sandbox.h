/* sandbox.h — a bubblewrap sandbox described as data: a list of typed
 * mount operations plus the environment and the namespaces, executed in one
 * place (sandbox_run).
 *
 * An overlay operation is mounted by bubblewrap itself when it is new enough
 * (>= 0.11 has --overlay-src/--overlay) and the caller is root; otherwise
 * sandbox_run mounts it in a private mount namespace (a user namespace too
 * when not root, with the "userxattr" option) and hands bubblewrap the merged
 * directory.
 *
 * Whatever runs inside is treated as hostile (maintainer scripts of
 * third-party repositories): it keeps only the capabilities of
 * SANDBOX_CAPS, runs with no_new_privs (bubblewrap always sets it), in its
 * own session (no controlling terminal to inject keystrokes into) and UTS
 * namespace with the host name SANDBOX_HOSTNAME, under the system call
 * filter of seccomp.h, in a session keyring of its own; /proc/sys is
 * read-only, /proc/keys empty.  The same holds unprivileged, inside the
 * user namespace. */
#pragma once

#include <gio/gio.h>
#include <sys/types.h>

#include "sandbox/runlimits.h"

G_BEGIN_DECLS

/* The host name the command sees: never the build machine's, so that no
 * file an image's scripts write (ssh host key comments, logs) names it. */
#define SANDBOX_HOSTNAME "localhost"

/* The capabilities the command keeps, as root or as root of the user
 * namespace: what dpkg and maintainer scripts need to set owners, modes,
 * setuid bits and file capabilities, to switch users (su, start-stop-daemon)
 * and signal their own processes, and chroot (a host tool over /work).
 * Nothing that mounts, reads by file handle (CAP_DAC_READ_SEARCH), makes
 * device nodes, loads modules, traces, touches the network or the
 * kernel's settings. */
#define SANDBOX_CAPS "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL", \
                     "CAP_SETGID", "CAP_SETUID", "CAP_SYS_CHROOT", "CAP_SETFCAP"

typedef enum {
  SANDBOX_OP_BIND,      /* source (host) on dest, read-write */
  SANDBOX_OP_RO_BIND,   /* source (host) on dest, read-only */
  SANDBOX_OP_DEV,       /* a minimal /dev on dest */
  SANDBOX_OP_PROC,      /* a new procfs on dest, its sys/ read-only */
  SANDBOX_OP_TMPFS,     /* an empty tmpfs on dest */
  SANDBOX_OP_SYMLINK,   /* a symlink at dest pointing to source */
  SANDBOX_OP_OVERLAY,   /* lower = source, upper, work; merged on dest */
} SandboxOpType;

typedef struct {
  SandboxOpType type;
  char *source;
  char *dest;
  char *upper;    /* SANDBOX_OP_OVERLAY only */
  char *work;     /* SANDBOX_OP_OVERLAY only */
  char *merged;   /* SANDBOX_OP_OVERLAY only: an empty host directory where
                   * the overlay is mounted when bubblewrap cannot do it */
} SandboxOp;

typedef struct Sandbox Sandbox;

/* Called once the overlays are mounted, before the command starts, with the
 * st_dev the merged directory reports inside the sandbox.  It may add
 * environment variables (sandbox_setenv) for the command. */
typedef gboolean (*SandboxMountedFunc) (Sandbox *sandbox, dev_t overlay_dev, gpointer user_data,
                                        GError **error);

Sandbox *sandbox_new (void);
void sandbox_free (Sandbox *sandbox);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Sandbox, sandbox_free)

void sandbox_add (Sandbox *sandbox, SandboxOpType type, const char *source, const char *dest);
void sandbox_add_overlay (Sandbox *sandbox, const char *lower, const char *upper,
                          const char *work, const char *merged, const char *dest);
/* The command's whole environment is what is set here, nothing else. */
void sandbox_setenv (Sandbox *sandbox, const char *name, const char *value);
void sandbox_set_chdir (Sandbox *sandbox, const char *dir);
void sandbox_set_network (Sandbox *sandbox, gboolean network);
/* Not root: a user namespace maps the caller to uid/gid 0. */
void sandbox_set_unprivileged (Sandbox *sandbox, gboolean unprivileged);
/* Keep the IPC namespace of the host (fakeroot's SysV daemon runs there). */
void sandbox_set_share_ipc (Sandbox *sandbox, gboolean share_ipc);
void sandbox_set_mounted_func (Sandbox *sandbox, SandboxMountedFunc func, gpointer user_data);
/* The command's output goes to this file (and to stderr when ECHO). */
void sandbox_set_output (Sandbox *sandbox, const char *log_path, gboolean echo);
/* Each piece of the command's output, as it comes, is also given to FUNC
 * (in pieces as read, not lines). */
typedef void (*SandboxOutputFunc) (const char *data, gsize len, gpointer user_data);
void sandbox_set_output_func (Sandbox *sandbox, SandboxOutputFunc func, gpointer user_data);
/* The command reads and writes the caller's standard input, output and
 * error (a shell a user types into) instead of /dev/null and the log. */
void sandbox_set_terminal (Sandbox *sandbox, gboolean terminal);
/* Its deadline, memory and processes (runlimits.h); none unless set. */
void sandbox_set_limits (Sandbox *sandbox, const RunLimits *limits);

const GPtrArray *sandbox_get_ops (Sandbox *sandbox);

/* How the command ended. */
typedef struct {
  int exit_status;      /* bubblewrap's: the command's, 128+N when killed by signal N */
  gboolean not_found;   /* bubblewrap could not execute the command */
  gboolean overlay_failed;  /* bubblewrap (>= 0.11) could not mount the overlay */
  char *output_tail;    /* its last lines of output, "; "-separated, or "" */
  gboolean overlay_userxattr;  /* the overlay kept its own xattrs as user.overlay.*:
                                * unprivileged, or mounted by bubblewrap >= 0.11,
                                * which always mounts with "userxattr" */
  gboolean timed_out;   /* killed at its deadline (exit_status is then 128+SIGKILL) */
  char *limit_hit;      /* which limit it reached, a phrase for an error, or NULL */
  char *limits_held;    /* the limits and what held each (runcgroup_describe) */
} SandboxResult;

void sandbox_result_clear (SandboxResult *result);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SandboxResult, sandbox_result_clear)

/* The bubblewrap to use: $APT2OSTREE_BWRAP, else "bwrap" from PATH. */
char *sandbox_find_bwrap (GError **error);

/* Arguments for bubblewrap (after argv[0]) for this sandbox, as sandbox_run
 * passes them; PREMOUNTED says whether overlays were mounted beforehand.
 * Exposed for tests of the bubblewrap >= 0.11 path. */
GPtrArray *sandbox_bwrap_args (Sandbox *sandbox, gboolean premounted, char **argv);

/* Run ARGV in the sandbox and wait for it.  FALSE only when the sandbox
 * could not be set up; a command that fails is reported in RESULT.  When
 * the command exits, whatever it left running in the sandbox is killed (its
 * PID namespace goes with bubblewrap); past the deadline, all of it is. */
gboolean sandbox_run (Sandbox *sandbox, char **argv, SandboxResult *result,
                      GCancellable *cancellable, GError **error);

G_END_DECLS
