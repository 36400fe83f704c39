/* seccomp.h — the system calls the sandbox's command may not make, as the
 * classic-BPF program bubblewrap loads with "--seccomp FD".
 *
 * The capabilities the sandbox drops already stop most of the kernel's
 * surface; the filter closes what a process needs no capability for (the
 * kernel keyrings the host's root shares, eBPF, perf events, userfaultfd,
 * io_uring, the kernel log, new user namespaces, in which it would be
 * root with every capability again) and, as a second line, the calls that
 * only a capability guards (modules, kexec, swap, clocks, quotas, file
 * handles, port I/O), as flatpak's and Docker's default profiles do.  The
 * host's secondary architectures (32-bit x86 and x32 on amd64, 32-bit Arm
 * on arm64) get the same rules, so a 32-bit call cannot go around them. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* The filter, compiled, in a new anonymous file opened close-on-exec and
 * positioned at its start: the caller lets bubblewrap inherit it. */
gboolean sandbox_seccomp_open (int *out_fd, GError **error);

G_END_DECLS
