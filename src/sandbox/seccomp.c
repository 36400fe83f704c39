/* seccomp.c — the sandbox's system call filter, built with libseccomp and
 * exported as classic BPF for bubblewrap (which sets no_new_privs and loads
 * it just before it executes the command).
 *
 * Everything not named here is allowed: the filter is a deny list, like
 * Docker's default profile, because dpkg, maintainer scripts, fakeroot
 * (SysV IPC), qemu-user and build tools use a wide and changing set of
 * calls that none of the denied ones belongs to.
 *
 * Denied calls fail with EPERM ("Operation not permitted"), which names the
 * cause plainly, except where a program falls back to something that works
 * only on ENOSYS ("the kernel lacks it"): clone3 (glibc then uses clone,
 * whose flags the filter can see) and io_uring (liburing users go back to
 * plain reads and writes).
 *
 * ptrace stays allowed: the command is in its own PID namespace, so the
 * only processes it can name are its own, and strace or gdb inside a mod
 * command is legitimate work.  personality stays allowed too: gdb and
 * setarch need ADDR_NO_RANDOMIZE and PER_LINUX32, and MMAP_PAGE_ZERO is
 * refused by the kernel without CAP_SYS_RAWIO. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sandbox/seccomp.h"
#include "base/util.h"

G_DEFINE_AUTO_CLEANUP_FREE_FUNC (scmp_filter_ctx, seccomp_release, NULL)

typedef struct {
  const char *name;
  int err;
} Denial;

static const Denial denials[] = {
  /* The kernel's keyrings: root's user keyring is the host root's, and a
   * key found or planted there crosses into the host. */
  { "keyctl", EPERM }, { "add_key", EPERM }, { "request_key", EPERM },
  /* Programs and probes run by the kernel, page faults handled by user
   * code: the usual ways into kernel bugs, no capability needed. */
  { "bpf", EPERM }, { "perf_event_open", EPERM }, { "userfaultfd", EPERM },
  /* Operations the filter cannot see, run by the kernel on its behalf. */
  { "io_uring_setup", ENOSYS }, { "io_uring_enter", ENOSYS }, { "io_uring_register", ENOSYS },
  /* The host's kernel log (readable without a capability when
   * kernel.dmesg_restrict is 0). */
  { "syslog", EPERM },
  /* Guarded by capabilities the sandbox drops already; denied again in
   * case a capability comes back (a kernel bug, a setting of tomorrow). */
  { "kexec_load", EPERM }, { "kexec_file_load", EPERM },
  { "init_module", EPERM }, { "finit_module", EPERM }, { "delete_module", EPERM },
  { "swapon", EPERM }, { "swapoff", EPERM }, { "reboot", EPERM }, { "acct", EPERM },
  { "settimeofday", EPERM }, { "stime", EPERM },
  { "clock_settime", EPERM }, { "clock_settime64", EPERM },
  { "open_by_handle_at", EPERM }, { "lookup_dcookie", EPERM },
  { "ioperm", EPERM }, { "iopl", EPERM }, { "quotactl", EPERM }, { "quotactl_fd", EPERM },
  { "pivot_root", EPERM }, { "vhangup", EPERM }, { "uselib", EPERM }, { "nfsservctl", EPERM },
  { "_sysctl", EPERM },
};

static gboolean
seccomp_fail (GError **error, int r, const char *what)
{
  return util_fail (error, "cannot build the sandbox's system call filter: %s: %s", what,
                    g_strerror (-r));
}

/* The host's other ABIs: a process may switch to them (int 0x80, an x32
 * or 32-bit Arm program), and each has its own system call numbers. */
static gboolean
add_secondary_arches (scmp_filter_ctx ctx, GError **error)
{
  static const uint32_t on_x86_64[] = { SCMP_ARCH_X86, SCMP_ARCH_X32 };
  static const uint32_t on_aarch64[] = { SCMP_ARCH_ARM };
  const uint32_t *extra = NULL;
  guint n = 0;
  switch (seccomp_arch_native ())
    {
    case SCMP_ARCH_X86_64:
      extra = on_x86_64;
      n = G_N_ELEMENTS (on_x86_64);
      break;
    case SCMP_ARCH_AARCH64:
      extra = on_aarch64;
      n = G_N_ELEMENTS (on_aarch64);
      break;
    default:
      break;
    }
  for (guint i = 0; i < n; i++)
    {
      int r = seccomp_arch_add (ctx, extra[i]);
      if (r < 0 && r != -EEXIST)
        return seccomp_fail (error, r, "adding a secondary architecture");
    }
  return TRUE;
}

static gboolean
add_denials (scmp_filter_ctx ctx, GError **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (denials); i++)
    {
      int nr = seccomp_syscall_resolve_name (denials[i].name);
      if (nr == __NR_SCMP_ERROR)
        continue;   /* a libseccomp too old to know it */
      int r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (denials[i].err), nr, 0);
      /* EFAULT: no architecture of the filter has this call */
      if (r < 0 && r != -EFAULT)
        return seccomp_fail (error, r, denials[i].name);
    }
  return TRUE;
}

/* No new user namespace: in one the command would be root with every
 * capability again, over mounts and kernel code a real root never
 * exposes to it.  clone3 passes its flags in memory the filter cannot
 * read, so it is refused as missing and glibc falls back to clone. */
static gboolean
add_user_namespace_rules (scmp_filter_ctx ctx, GError **error)
{
  /* s390 has clone's first two arguments the other way round. */
  uint32_t arch = seccomp_arch_native ();
  unsigned int flags_arg = (arch == SCMP_ARCH_S390 || arch == SCMP_ARCH_S390X) ? 1 : 0;
  struct scmp_arg_cmp newuser = SCMP_CMP (flags_arg, SCMP_CMP_MASKED_EQ, CLONE_NEWUSER,
                                          CLONE_NEWUSER);
  struct scmp_arg_cmp unshare_newuser = SCMP_A0 (SCMP_CMP_MASKED_EQ, CLONE_NEWUSER,
                                                 CLONE_NEWUSER);
  int r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (clone), 1, newuser);
  if (r < 0)
    return seccomp_fail (error, r, "clone");
  r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (unshare), 1, unshare_newuser);
  if (r < 0)
    return seccomp_fail (error, r, "unshare");
  int clone3 = seccomp_syscall_resolve_name ("clone3");
  if (clone3 != __NR_SCMP_ERROR)
    {
      r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (ENOSYS), clone3, 0);
      if (r < 0 && r != -EFAULT)
        return seccomp_fail (error, r, "clone3");
    }
  return TRUE;
}

gboolean
sandbox_seccomp_open (int *out_fd, GError **error)
{
  g_auto(scmp_filter_ctx) ctx = seccomp_init (SCMP_ACT_ALLOW);
  if (ctx == NULL)
    return util_fail (error, "cannot build the sandbox's system call filter: seccomp_init failed");
  if (!add_secondary_arches (ctx, error) || !add_denials (ctx, error)
      || !add_user_namespace_rules (ctx, error))
    return FALSE;

  util_autofd int fd = memfd_create ("apt2ostree-seccomp", MFD_CLOEXEC);
  if (fd < 0)
    return util_fail (error, "cannot store the sandbox's system call filter: memfd_create: %s",
                      g_strerror (errno));
  int r = seccomp_export_bpf (ctx, fd);
  if (r < 0)
    return seccomp_fail (error, r, "exporting it");
  if (lseek (fd, 0, SEEK_SET) < 0)
    return util_fail (error, "cannot store the sandbox's system call filter: lseek: %s",
                      g_strerror (errno));
  *out_fd = fd;
  fd = -1;
  return TRUE;
}
