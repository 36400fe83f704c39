/* syscall-probe.c — a fixture of tests/test-sandbox-hostile.sh: makes each
 * system call the sandbox's filter must deny, with harmless arguments, and
 * prints "NAME: allowed" or "NAME: ERROR" (strerror) for each, so the test
 * sees the errno the filter chose and not only a failure a capability
 * check would give as well.  On x86_64 "keyctl-i386" makes the call through
 * the 32-bit entry (int $0x80) and "keyctl-x32" with the x32 numbering, the
 * two ways around a filter that knows only the 64-bit numbers. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEYCTL_GET_KEYRING_ID 0
#define KEY_SPEC_SESSION_KEYRING -3
#define BPF_MAP_CREATE 0
#define UFFD_USER_MODE_ONLY 1

static void
report (const char *name, long r)
{
  if (r < 0)
    printf ("%s: %s\n", name, strerror (errno));
  else
    printf ("%s: allowed\n", name);
}

/* clone with FLAGS; the child, if any, exits at once. */
static long
probe_clone (unsigned long flags)
{
  long pid = syscall (SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0)
    _exit (0);
  if (pid > 0)
    waitpid (pid, NULL, 0);
  return pid;
}

#if defined(__x86_64__)
static long
keyctl_i386 (void)
{
  long r;
  /* 288: keyctl in the i386 table */
  __asm__ volatile ("int $0x80"
                    : "=a" (r)
                    : "a" (288), "b" (KEYCTL_GET_KEYRING_ID), "c" (KEY_SPEC_SESSION_KEYRING)
                    : "memory");
  if (r < 0 && r > -4096)
    {
      errno = -r;
      return -1;
    }
  return r;
}
#endif

int
main (void)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  report ("keyctl", syscall (SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
  report ("bpf", syscall (SYS_bpf, BPF_MAP_CREATE, NULL, 0));
  report ("perf_event_open", syscall (SYS_perf_event_open, NULL, 0, -1, -1, 0));
  report ("userfaultfd", syscall (SYS_userfaultfd, UFFD_USER_MODE_ONLY));
  report ("clone-newuser", probe_clone (CLONE_NEWUSER));
  report ("unshare-newuser", syscall (SYS_unshare, CLONE_NEWUSER));
#ifdef SYS_clone3
  report ("clone3", syscall (SYS_clone3, NULL, 0));
#endif
#ifdef SYS_io_uring_setup
  report ("io_uring_setup", syscall (SYS_io_uring_setup, 1, NULL));
#endif
#if defined(__x86_64__)
  report ("keyctl-i386", keyctl_i386 ());
  /* 0x40000000: the x32 bit; 250: keyctl in the x32 (and x86_64) table */
  report ("keyctl-x32", syscall (0x40000000 | 250, KEYCTL_GET_KEYRING_ID,
                                 KEY_SPEC_SESSION_KEYRING, 0));
#endif
  /* a plain call still works */
  report ("getpid", syscall (SYS_getpid));
  return 0;
}
