#!/bin/bash
# Hostile commands in the mod / stage-2 sandbox: each one that would let a
# maintainer script reach the host (remount a read-only bind read-write,
# open a host file by handle, write kernel settings, make a device node,
# mount a filesystem) fails, the capability sets are exactly the bounded
# ones, and the host name is the fixed one.  Runs as root and, through
# test-sandbox-hostile-unprivileged.sh, as a normal user.
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

while IFS="|" read -r hostile_name hostile_cmd; do
    [ -n "$hostile_name" ] || continue
    test_expect_success "hostile command fails: $hostile_name ($hostile_cmd)" '
        echo original > "$HOSTDIR/f"
        OUT=hostile-$hostile_name expect_failure err in_sandbox "( $hostile_cmd ) && echo HOSTILE-SUCCEEDED"
        assert_not_file_has_content err "^HOSTILE-SUCCEEDED$"
        assert_streq "$(cat "$HOSTDIR/f")" original
        assert_not_has_file "$R/refs/heads/hostile-$hostile_name"
    '
done <<< "$HOSTILE"

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

ostree --repo="$R" fsck > "$SCRATCH/fsck.out" 2>&1 || { cat "$SCRATCH/fsck.out"; echo "not ok - final fsck"; }
test_done
