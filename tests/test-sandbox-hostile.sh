#!/bin/bash
# Hostile commands in the mod / stage-2 sandbox: each one that would let a
# maintainer script reach the host (remount a read-only bind read-write,
# open a host file by handle, write kernel settings, make a device node,
# mount a filesystem, read or plant a key in the host's keyrings, make a
# new user namespace, load eBPF) fails, the capability sets are exactly the
# bounded ones, the system call filter is there, and the host name is the
# fixed one; legitimate work (dpkg, strace) still runs.  Runs as root and,
# through test-sandbox-hostile-unprivileged.sh, as a normal user.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/mod-lib.sh"

if [ "$(id -u)" = 0 ]; then MODE=root; else MODE=unprivileged; fi
say "mode: $MODE"
command -v bwrap > /dev/null || skip_all "bubblewrap is not installed (apt-get install bubblewrap)"
for tool in mount unshare mknod python3; do
    [ -x "/usr/bin/$tool" ] || skip_all "/usr/bin/$tool is needed inside the sandbox (from the host's /usr)"
done

R="$SCRATCH/repo"
setup_base_repo "$R" || { echo "Bail out! cannot build the base tree"; exit 1; }

# A host directory bound read-only into the sandbox, and a host file the
# sandbox is not shown at all.
HOSTDIR="$SCRATCH/hostdir"
mkdir -p "$HOSTDIR" && echo original > "$HOSTDIR/f"
echo "host secret" > "$SCRATCH/secret"

# in_sandbox COMMAND: run the shell COMMAND through mod (the tree at /work,
# the host's /usr read-only, $HOSTDIR read-only at /ro); its output and
# mod's error on stderr; OUT is the ref it writes (default "hostile")
in_sandbox () {
    a2o --repo "$R" mod --ref "${OUT:-hostile}" base --ro-bind "$HOSTDIR" /ro -v -- /bin/sh -c "$1" > /dev/null
}

# The capabilities the command keeps: CHOWN DAC_OVERRIDE FOWNER FSETID KILL
# SETGID SETUID SYS_CHROOT SETFCAP.
CAPS=00000000800400fb

test_expect_success 'the command keeps exactly the bounded capabilities, with no_new_privs' '
    OUT=seen in_sandbox "grep -E \"^(Cap|NoNewPrivs)\" /proc/self/status" 2> status
    cat status
    for set in CapInh CapPrm CapEff CapAmb; do
        assert_file_has_content status "^$set:	$CAPS$"
    done
    assert_file_has_content status "^NoNewPrivs:	1$"
    # The bounding set is bubblewrap'"'"'s (it narrows it only when setuid or
    # in a user namespace it makes); no_new_privs means no execve can raise
    # the permitted set towards it.
    if [ "$MODE" = root ]; then
        bnd=$(sed -n "s/^CapBnd:	//p" /proc/self/status)
    else
        bnd=$(printf "%016x" $(( (1 << ($(cat /proc/sys/kernel/cap_last_cap) + 1)) - 1 )))
    fi
    assert_file_has_content status "^CapBnd:	$bnd$"
'

# (The shell lists its own descriptors through ls, a child of its own that
# holds nothing of the shell's but what it inherits: no pipeline, no
# command substitution, which would open descriptors of their own.)
test_expect_success 'the command inherits no descriptor but stdin (/dev/null), stdout and stderr' '
    OUT=seen in_sandbox "ls /proc/\$\$/fd; readlink /proc/\$\$/fd/0" 2> fds
    grep -v "^apt2ostree mod:" fds > seen
    cat seen
    assert_streq "$(tr "\n" " " < seen)" "0 1 2 /dev/null "
'

test_expect_success 'the host name is the fixed one, not the build machine'"'"'s' '
    OUT=seen in_sandbox "hostname; cat /proc/sys/kernel/hostname; uname -n" 2> names
    assert_streq "$(grep -v "^apt2ostree mod:" names | sort -u)" localhost
'

# Each row: a name, then a command (the variables are not "name" and "cmd":
# test_expect_success has a local "name") that must fail inside the sandbox.  Each
# succeeded as root before the sandbox dropped capabilities (except the
# nested user namespace: locked mounts stop that one either way).  mknod
# bypasses fakeroot, which fakes device nodes as plain files.
HOSTILE="
remount-ro-bind|mount -o remount,bind,rw /ro && echo written > /ro/f
remount-usr|mount -o remount,bind,rw /usr
remount-root|mount -o remount,rw /
mount-tmpfs|mkdir -p /tmp/m && mount -t tmpfs none /tmp/m
mount-sysfs|mkdir -p /tmp/m && mount -t sysfs none /tmp/m
mount-proc|mkdir -p /tmp/m && mount -t proc none /tmp/m
bind-host-dir|mkdir -p /tmp/m && mount --bind /ro /tmp/m && mount -o remount,bind,rw /tmp/m
sysctl-hostname|echo evil > /proc/sys/kernel/hostname
sysctl-global|cat /proc/sys/vm/swappiness > /tmp/v && cat /tmp/v > /proc/sys/vm/swappiness
mknod-block|env -u LD_PRELOAD mknod /tmp/disk b 8 0
mknod-char|env -u LD_PRELOAD mknod /tmp/mem c 1 1
unshare-mount|unshare -m true
nested-userns-remount|unshare -Urm sh -c 'mount -o remount,bind,rw /ro && echo written > /ro/f'
"

# hostile_cases: one test per "name|command" line of stdin.
hostile_cases () {
    while IFS="|" read -r hostile_name hostile_cmd; do
        [ -n "$hostile_name" ] || continue
        test_expect_success "hostile command fails: $hostile_name ($hostile_cmd)" '
            echo original > "$HOSTDIR/f"
            OUT=hostile-$hostile_name expect_failure err in_sandbox "( $hostile_cmd ) && echo HOSTILE-SUCCEEDED"
            assert_not_file_has_content err "^HOSTILE-SUCCEEDED$"
            assert_not_file_has_content err "host .* key"
            assert_streq "$(cat "$HOSTDIR/f")" original
            assert_not_has_file "$R/refs/heads/hostile-$hostile_name"
        '
    done
}
hostile_cases <<< "$HOSTILE"

# The host's keys: one in the caller's user keyring (readable by its owner,
# as root's keys often are), one in a session keyring the test joins and
# apt2ostree inherits.  Both are readable here, so the cases can fail; the
# user key is unlinked at the end, and expires should the test die first.
if [ -x /usr/bin/keyctl ]; then
    # (setperm and timeout before the new session: the user keyring is
    # reachable only from the default one)
    USER_KEY=$(keyctl add user apt2ostree-test-user "host user key" @u)
    keyctl setperm "$USER_KEY" 0x3f3f0000
    keyctl timeout "$USER_KEY" 3600
    keyctl new_session > /dev/null
    SESSION_KEY=$(keyctl add user apt2ostree-test-session "host session key" @s)
    { assert_streq "$(keyctl pipe "$SESSION_KEY")" "host session key" \
        && assert_streq "$(keyctl pipe "$USER_KEY")" "host user key"; } \
        || { echo "Bail out! the test's keys are not readable on the host"; exit 1; }
    hostile_cases <<KEYS
keyctl-read-session|keyctl pipe $SESSION_KEY
keyctl-read-user|keyctl pipe $USER_KEY
keyctl-search-user|keyctl search @u user apt2ostree-test-user
keyctl-request|keyctl request user apt2ostree-test-session
keyctl-add-user|keyctl add user apt2ostree-planted evil @u
keyctl-add-session|keyctl add user apt2ostree-planted evil @s
unshare-user|unshare -U true
KEYS
    test_expect_success 'the host'"'"'s keys are not listed in /proc/keys or /proc/key-users' '
        OUT=proc-keys in_sandbox "cat /proc/keys /proc/key-users; echo keys: \$(wc -c < /proc/keys)" 2> seen
        cat seen
        assert_not_file_has_content seen "apt2ostree-test"
        assert_file_has_content seen "^keys: 0$"
    '
    test_expect_success 'no key was planted in the host'"'"'s user or session keyring' '
        ! keyctl search @u user apt2ostree-planted 2> /dev/null || fail "a key was planted in the user keyring"
        ! keyctl search @s user apt2ostree-planted 2> /dev/null || fail "a key was planted in the session keyring"
    '
else
    test_skip "hostile commands fail: keyctl" "keyctl is not installed (apt-get install keyutils)"
fi

# The filter's answers, from a program that makes each call itself: EPERM,
# or ENOSYS where programs fall back (clone3, io_uring); the 32-bit and x32
# entries of an amd64 host answer the same.
test_expect_success 'the system call filter denies keyrings, eBPF, perf events, userfaultfd, io_uring and new user namespaces' '
    ${CC:-cc} -std=c11 -O2 -o "$HOSTDIR/syscall-probe" "$TOP_SRCDIR/tests/syscall-probe.c" \
        || fail "cannot build tests/syscall-probe.c (${CC:-cc})"
    OUT=probed in_sandbox "grep ^Seccomp: /proc/self/status; /ro/syscall-probe" 2> seen
    cat seen
    assert_file_has_content seen "^Seccomp:	2$"
    calls="keyctl bpf perf_event_open userfaultfd clone-newuser unshare-newuser"
    [ "$(uname -m)" != x86_64 ] || calls="$calls keyctl-i386 keyctl-x32"
    for call in $calls; do
        assert_file_has_content seen "^$call: Operation not permitted$"
    done
    for call in clone3 io_uring_setup; do
        assert_file_has_content seen "^$call: Function not implemented$"
    done
    assert_file_has_content seen "^getpid: allowed$"
'

# A handle the host made for a directory the sandbox cannot see, opened
# inside through the read-only bind on the same filesystem: the
# open_by_handle_at(2) escape, which needs CAP_DAC_READ_SEARCH.
HANDLE_PY='
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class FileHandle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int),
                ("f_handle", ctypes.c_ubyte * 128)]
if sys.argv[1] == "make":
    fh, mount_id = FileHandle(128, 0), ctypes.c_int()
    if libc.name_to_handle_at(-100, sys.argv[2].encode(), ctypes.byref(fh), ctypes.byref(mount_id), 0):
        sys.exit("name_to_handle_at: " + os.strerror(ctypes.get_errno()))
    print(fh.handle_type, bytes(fh.f_handle[:fh.handle_bytes]).hex())
else:
    kind, data = int(sys.argv[3]), bytes.fromhex(sys.argv[4])
    fh = FileHandle(len(data), kind, (ctypes.c_ubyte * 128)(*data))
    mount_fd = os.open(sys.argv[2], os.O_RDONLY | os.O_DIRECTORY)
    fd = libc.open_by_handle_at(mount_fd, ctypes.byref(fh), os.O_RDONLY | os.O_DIRECTORY)
    if fd < 0:
        sys.exit("open_by_handle_at: " + os.strerror(ctypes.get_errno()))
    print(open(os.open("secret", os.O_RDONLY, dir_fd=fd)).read().strip())
'

test_expect_success 'hostile command fails: open_by_handle_at of a host directory the sandbox does not show' '
    handle=$(/usr/bin/python3 -c "$HANDLE_PY" make "$SCRATCH") || fail "cannot make a handle here"
    if [ "$MODE" = root ]; then
        # the same program succeeds on the host: the test can fail
        assert_streq "$(/usr/bin/python3 -c "$HANDLE_PY" open "$HOSTDIR" $handle)" "host secret"
    fi
    expect_failure err in_sandbox "/usr/bin/python3 -c '"'"'$HANDLE_PY'"'"' open /ro $handle"
    assert_not_file_has_content err "host secret"
    assert_file_has_content err "open_by_handle_at: Operation not permitted"
'

test_expect_success 'a --bind asked for stays writable: the capabilities do not stop legitimate work' '
    mkdir rw && a2o --repo "$R" mod --ref legit base --bind "$PWD/rw" /rw -- \
        sh -c "echo out > /rw/f && chown 7:8 /rw/f && chmod 4750 /rw/f && stat -c \"%a %u %g\" /rw/f > /rw/seen" > /dev/null
    assert_streq "$(cat rw/f)" out
    assert_streq "$(cat rw/seen)" "4750 7 8"
'

test_expect_success 'dpkg installs a package and strace traces a command: the filter does not stop legitimate work' '
    [ -x /usr/bin/dpkg ] && [ -x /usr/bin/strace ] || fail "dpkg and strace are needed on the host"
    cat > "$HOSTDIR/legit.sh" <<"SH"
set -e
mkdir -p /tmp/p/DEBIAN /tmp/p/usr/share/probe /tmp/root/var/lib/dpkg/info /tmp/root/var/lib/dpkg/updates
touch /tmp/root/var/lib/dpkg/status
printf "Package: probe\nVersion: 1\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: p\n" \
    > /tmp/p/DEBIAN/control
echo probe > /tmp/p/usr/share/probe/f
dpkg-deb -b /tmp/p /tmp/p.deb > /dev/null
dpkg --root=/tmp/root --log=/dev/null -i /tmp/p.deb
dpkg --root=/tmp/root -s probe | grep ^Status:
strace -o /tmp/trace true
echo "traced: $(grep -c ^execve /tmp/trace)"
SH
    OUT=legit-work in_sandbox "sh /ro/legit.sh" 2> seen || { cat seen; fail "the legitimate work failed"; }
    assert_file_has_content seen "^Status: install ok installed$"
    assert_file_has_content seen "^traced: 1$"
'

# The test's key, and any a sandbox planted, out of the user keyring.
if [ -n "${USER_KEY:-}" ]; then
    keyctl unlink "$USER_KEY" @u > /dev/null
    while planted=$(keyctl search @u user apt2ostree-planted 2> /dev/null); do
        keyctl unlink "$planted" @u > /dev/null
    done
fi
ostree --repo="$R" fsck > "$SCRATCH/fsck.out" 2>&1 || { cat "$SCRATCH/fsck.out"; echo "not ok - final fsck"; }
test_done
