/* Unit tests for the sandbox described as data: how its operations become
 * bubblewrap's arguments, for bubblewrap >= 0.11 (it mounts the overlay) and
 * for older ones (the overlay is mounted beforehand and bound). */
#include "config.h"

#include <string.h>

#include "sandbox/sandbox.h"

static char *
joined (GPtrArray *args)
{
  g_ptr_array_add (args, NULL);
  char *s = g_strjoinv (" ", (char **) args->pdata);
  g_ptr_array_remove_index (args, args->len - 1);
  return s;
}

static Sandbox *
chroot_sandbox (void)
{
  Sandbox *sandbox = sandbox_new ();
  sandbox_add_overlay (sandbox, "/s/lower", "/s/upper", "/s/work", "/s/merged", "/");
  sandbox_add (sandbox, SANDBOX_OP_DEV, NULL, "/dev");
  sandbox_add (sandbox, SANDBOX_OP_PROC, NULL, "/proc");
  sandbox_add (sandbox, SANDBOX_OP_TMPFS, NULL, "/tmp");
  sandbox_add (sandbox, SANDBOX_OP_RO_BIND, "/host/src", "/src");
  sandbox_add (sandbox, SANDBOX_OP_SYMLINK, "usr/bin", "/bin");
  sandbox_set_chdir (sandbox, "/");
  return sandbox;
}

static void
test_overlay_by_bubblewrap (void)
{
  g_autoptr(Sandbox) sandbox = chroot_sandbox ();
  char *argv[] = { "dpkg", "--configure", "-a", NULL };
  g_autoptr(GPtrArray) args = sandbox_bwrap_args (sandbox, FALSE, argv);
  g_autofree char *s = joined (args);
  g_assert_cmpstr (s, ==,
                   "--die-with-parent --new-session --unshare-pid --unshare-uts "
                   "--hostname localhost --unshare-cgroup-try --cap-drop ALL "
                   "--cap-add CAP_CHOWN --cap-add CAP_DAC_OVERRIDE --cap-add CAP_FOWNER "
                   "--cap-add CAP_FSETID --cap-add CAP_KILL --cap-add CAP_SETGID "
                   "--cap-add CAP_SETUID --cap-add CAP_SYS_CHROOT --cap-add CAP_SETFCAP "
                   "--unshare-ipc --unshare-net "
                   "--overlay-src /s/lower --overlay /s/upper /s/work / "
                   "--dev /dev --proc /proc --ro-bind /proc/sys /proc/sys "
                   "--dev-bind-try /dev/null /proc/keys --dev-bind-try /dev/null /proc/key-users "
                   "--tmpfs /tmp "
                   "--ro-bind /host/src /src "
                   "--symlink usr/bin /bin --chdir / -- dpkg --configure -a");
}

static void
test_overlay_premounted (void)
{
  g_autoptr(Sandbox) sandbox = chroot_sandbox ();
  char *argv[] = { "true", NULL };
  g_autoptr(GPtrArray) args = sandbox_bwrap_args (sandbox, TRUE, argv);
  g_autofree char *s = joined (args);
  g_assert_nonnull (strstr (s, " --bind /s/merged / --dev /dev "));
  g_assert_null (strstr (s, "--overlay"));
}

static void
test_network_and_ipc_shared_on_request (void)
{
  g_autoptr(Sandbox) sandbox = chroot_sandbox ();
  sandbox_set_network (sandbox, TRUE);
  sandbox_set_share_ipc (sandbox, TRUE);
  char *argv[] = { "true", NULL };
  g_autoptr(GPtrArray) args = sandbox_bwrap_args (sandbox, TRUE, argv);
  g_autofree char *s = joined (args);
  g_assert_null (strstr (s, "--unshare-net"));
  g_assert_null (strstr (s, "--unshare-ipc"));
  g_assert_nonnull (strstr (s, "--unshare-pid"));
}

static void
test_command_after_double_dash (void)
{
  g_autoptr(Sandbox) sandbox = sandbox_new ();
  char *argv[] = { "sh", "-c", "--bind / /", NULL };
  g_autoptr(GPtrArray) args = sandbox_bwrap_args (sandbox, TRUE, argv);
  g_assert_cmpuint (args->len, >=, 4);
  g_assert_cmpstr (args->pdata[args->len - 4], ==, "--");
  g_assert_cmpstr (args->pdata[args->len - 1], ==, "--bind / /");
}

static void
test_find_bwrap_env (void)
{
  g_setenv ("APT2OSTREE_BWRAP", "/nonexistent/bwrap", TRUE);
  g_autoptr(GError) error = NULL;
  g_autofree char *bwrap = sandbox_find_bwrap (&error);
  g_assert_null (bwrap);
  g_assert_nonnull (strstr (error->message, "APT2OSTREE_BWRAP=\"/nonexistent/bwrap\""));
  g_assert_nonnull (strstr (error->message, "\"bubblewrap\" package"));
  g_unsetenv ("APT2OSTREE_BWRAP");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sandbox/args/overlay-by-bubblewrap", test_overlay_by_bubblewrap);
  g_test_add_func ("/sandbox/args/overlay-premounted", test_overlay_premounted);
  g_test_add_func ("/sandbox/args/network-and-ipc-on-request", test_network_and_ipc_shared_on_request);
  g_test_add_func ("/sandbox/args/command-after-double-dash", test_command_after_double_dash);
  g_test_add_func ("/sandbox/find-bwrap/env", test_find_bwrap_env);
  return g_test_run ();
}
