/* runlimits.h — what one sandboxed command may take: a deadline, memory and
 * a number of processes.
 *
 * Memory and processes are held by a cgroup made for the run, a child of
 * the caller's own: cgroup v2 where the caller's cgroup delegates the
 * "memory" and "pids" controllers, else the v1 "memory" and "pids"
 * hierarchies where they are mounted and writable (root on a hybrid host).
 * A limit no cgroup can hold falls back to a resource limit (rlimit) of the
 * processes: RLIMIT_DATA per process for memory, RLIMIT_NPROC for
 * processes, which the kernel counts per user across the host and never
 * enforces for root. */
#pragma once

#include <glib.h>
#include <sys/types.h>

#include "base/cmdline.h"

G_BEGIN_DECLS

typedef struct {
  guint timeout;          /* seconds; 0: none */
  guint64 memory;         /* bytes; 0: none */
  guint max_processes;    /* 0: none */
} RunLimits;

/* The limits from the options (NULL when not given), else from
 * $APT2OSTREE_TIMEOUT, $APT2OSTREE_MEMORY_LIMIT, $APT2OSTREE_MAX_PROCESSES,
 * else the defaults.  "0" or "none" is no limit; a memory size is bytes
 * with an optional K, M, G or T (powers of 1024) or a percentage of RAM. */
gboolean runlimits_init (RunLimits *limits, const char *timeout, const char *memory,
                         const char *max_processes, GError **error);

/* "4.0 GiB" */
char *runlimits_format_size (guint64 bytes);

/* The cgroups of one run (or none), and the rlimits left to set. */
typedef struct RunCgroup RunCgroup;

/* Make the run's cgroups (a directory per limit a cgroup can hold); never
 * fails: a cgroup that cannot be made leaves the limit to an rlimit. */
RunCgroup *runcgroup_new (const RunLimits *limits);
void runcgroup_free (RunCgroup *cgroup);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RunCgroup, runcgroup_free)

/* Put PID (not yet started anything) into the run's cgroups and set on it
 * the rlimits for what no cgroup holds. */
gboolean runcgroup_enter (RunCgroup *cgroup, pid_t pid, GError **error);

/* Kill whatever is still in the run's cgroups and wait until they are
 * empty (bounded), so they can be removed. */
void runcgroup_kill (RunCgroup *cgroup);

/* Which limit the run reached, as a phrase for an error ("ran out of its
 * memory limit of 256.0 MiB (--memory-limit)"), or NULL. */
char *runcgroup_limit_hit (RunCgroup *cgroup);

/* How each limit is held, for --verbose: "memory: cgroup v1, processes: rlimit". */
char *runcgroup_describe (RunCgroup *cgroup);

G_END_DECLS
