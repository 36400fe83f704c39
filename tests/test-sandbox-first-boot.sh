#!/bin/bash
# No per-machine state in an image: stage 2 removes what postinsts make for
# one machine (ssh host keys, the machine id, random seeds), the sandbox's
# host name is fixed so nothing names the build machine, and an image with
# openssh-server carries a unit that makes its host keys at first boot.
# Hermetic: real Debian bookworm .debs (tests/libbuildtest.sh) plus an
# "openssh-server" made here whose postinst writes keys the way the real one
# does, in a repository signed and served on 127.0.0.1 at test time.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2

base_archive

# Per-machine files, each with content no two machines (or builds) share.
stage="$SCRATCH/stage/openssh-server"
mkdir -p "$stage/DEBIAN" "$stage/usr/share/doc/openssh-server"
echo "fixture" > "$stage/usr/share/doc/openssh-server/README"
cat > "$stage/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
[ "$1" = configure ] || exit 0
random () { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }
mkdir -p /etc/ssh /var/lib/dbus /var/lib/systemd /var/lib/urandom
for type in rsa ecdsa ed25519; do
    echo "PRIVATE KEY $(random)" > /etc/ssh/ssh_host_${type}_key
    echo "ssh-$type $(random) root@$(uname -n)" > /etc/ssh/ssh_host_${type}_key.pub
done
random > /etc/machine-id
random > /var/lib/dbus/machine-id
random > /var/lib/systemd/random-seed
random > /var/lib/urandom/random-seed
random > /var/lib/systemd/credential.secret
uname -n > /etc/built-on
EOF
chmod 755 "$stage/DEBIAN/postinst"
# The real one's epoch (libc6 Breaks openssh-server << 1:8.1p1-5); no "%3a"
# in the pool file name, which the test server would decode.
( cd "$D/pool/main" && deb=$(make_deb "$stage" openssh-server 1:9.2p1-2 amd64 \
    "Priority: optional" "Depends: coreutils") && mv "$deb" openssh-server_9.2p1-2_amd64.deb )
repo_publish "$D" bookworm amd64 archive

serve_work_dir "$SRV"
base_lock img openssh-server
HOOK='grep -E "^(CapEff|CapBnd|NoNewPrivs)" /proc/self/status > /etc/stage2-status'

test_expect_success 'two builds in fresh build directories give the same commit' '
    cd "$W"
    a2o build img.lock.json --builddir b1 --configure-hook "$HOOK" > out1
    a2o build img.lock.json --builddir b2 --configure-hook "$HOOK" > out2
    a2o --repo b1/ostree export img --dir "$W/rootfs"
    dpkg --root="$W/rootfs" -l | awk "NR > 5 { print \$1 }" | sort -u > states
    assert_streq "$(cat states)" ii
    assert_streq "$(cat b2/ostree/refs/heads/img)" "$(cat b1/ostree/refs/heads/img)"
'

test_expect_success 'the image holds no host keys, no machine id, no random seed' '
    cd "$W/rootfs"
    assert_streq "$(ls etc/ssh)" ""
    assert_streq "$(stat -c %s etc/machine-id)" 0
    for f in var/lib/dbus/machine-id var/lib/systemd/random-seed var/lib/urandom/random-seed \
             var/lib/systemd/credential.secret; do
        assert_not_has_file "$f"
    done
'

test_expect_success 'nothing in the image names the build machine: the scripts saw the fixed host name' '
    cd "$W/rootfs"
    assert_streq "$(cat etc/built-on)" localhost
    host=$(uname -n)
    if [ "$host" != localhost ]; then
        ! grep -r -l -I -F "@$host" . > named || { cat named; fail "files name the build host $host"; }
    fi
'

test_expect_success 'stage 2 ran with the bounded capabilities and no_new_privs' '
    cd "$W/rootfs"
    assert_file_has_content etc/stage2-status "^CapEff:	00000000800400fb$"
    assert_file_has_content etc/stage2-status "^NoNewPrivs:	1$"
'

UNIT=etc/systemd/system/ssh-keygen-first-boot.service

test_expect_success 'the image carries an enabled unit that makes the host keys before sshd starts' '
    cd "$W/rootfs"
    assert_file_has_content "$UNIT" "^ExecStart=/usr/bin/ssh-keygen -A$"
    assert_file_has_content "$UNIT" "^Before=ssh.service ssh.socket"
    assert_streq "$(readlink etc/systemd/system/multi-user.target.wants/ssh-keygen-first-boot.service)" \
        ../ssh-keygen-first-boot.service
    assert_streq "$(stat -c "%a %u %g" "$UNIT")" "644 0 0"
    if command -v systemd-analyze > /dev/null; then
        systemd-analyze verify --man=no "$PWD/$UNIT" > verify 2>&1 || true
        assert_not_file_has_content verify "ssh-keygen-first-boot.service:"
    fi
'

if command -v ssh-keygen > /dev/null && command -v bwrap > /dev/null; then
test_expect_success 'the unit'"'"'s command, run over the image'"'"'s /etc/ssh, makes the host keys' '
    cd "$W"
    cmd=$(sed -n "s/^ExecStart=//p" "rootfs/$UNIT")
    mkdir -p keys/etc && cp -a rootfs/etc/ssh keys/etc/ssh
    bwrap --ro-bind / / --bind "$W/keys/etc/ssh" /etc/ssh --dev /dev --proc /proc \
        --unshare-uts --hostname first-boot -- $cmd
    for type in rsa ecdsa ed25519; do
        assert_has_file keys/etc/ssh/ssh_host_${type}_key
        assert_file_has_content keys/etc/ssh/ssh_host_${type}_key.pub "root@first-boot$"
    done
'
else
test_skip 'the unit'"'"'s command, run over the image'"'"'s /etc/ssh, makes the host keys' \
    "ssh-keygen (openssh-client) or bwrap is not installed"
fi

test_expect_success 'an image without openssh-server gets no unit' '
    cd "$W"
    printf "%s\n" $BASE_REQUEST > plain.txt
    a2o lock plain.txt --sources sources.list --variant custom --merged-usr yes --cache cache \
        -o plain.lock.json > /dev/null
    a2o build plain.lock.json --builddir b3 > out3
    a2o --repo b3/ostree export plain --dir plain
    assert_not_has_file plain/etc/systemd/system/ssh-keygen-first-boot.service
    assert_streq "$(stat -c %s plain/etc/machine-id 2>/dev/null || echo none)" none
'

test_done
