#!/bin/bash
# The real image: lock and build Debian bookworm minbase from the mirror the
# host's apt configuration names, and compare it with what mmdebstrap builds
# on the same machine from the same mirror, and its stage 1 with what the
# real dpkg --unpack makes of the same .debs (tests/libdifferential.sh).
# Skips, saying why, only when no mirror answers.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libpodman.sh"
. "$TOP_SRCDIR/tests/libdifferential.sh"

require_mirror
[ "$(id -u)" = 0 ] || skip_all "mmdebstrap --mode=root and chroot need root"
command -v mmdebstrap > /dev/null || skip_all "mmdebstrap is not installed"
[ "$(dpkg --print-architecture)" = amd64 ] || skip_all "the comparison is for an amd64 host"

# The tests share one work directory: each builds on the one before.
W=$SCRATCH/work
mkdir -p "$W"

# On a host of another release (trixie), the host's sources moved to
# bookworm, for lock (--suite) and for mmdebstrap alike.
LOCK_SUITE=
MM_SOURCES=
if [ "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")" != bookworm ]; then
    LOCK_SUITE="--suite bookworm"
    host_sources_for bookworm > "$W/bookworm.sources"
    MM_SOURCES="$W/bookworm.sources"
fi

test_expect_success 'lock and build bookworm minbase from the host'"'"'s mirror' '
    cd "$W"
    : > minbase.txt
    a2o lock minbase.txt --variant minbase --arch amd64 $LOCK_SUITE -o minbase.lock.json
    a2o build minbase.lock.json --ref minbase --builddir build > build.out
    cat build.out
    assert_file_has_content build.out "^image minbase: commit [0-9a-f]\{64\}\$"
    a2o --repo build/ostree export minbase --dir img
'

test_expect_success 'stage 1 is what the real dpkg --unpack makes of the same .debs in the same order, in a chroot: files, owners, modes, contents, links, info files, status stanzas, but for the documented differences' '
    cd "$W"
    a2o --repo build/ostree export stage1/minbase --dir s1
    start=$(date +%s)
    unpack_reference dpkgref minbase.lock.json build/cache/debs
    assert_same_unpacked dpkgref s1
    echo $(($(date +%s) - start)) > dpkgref.seconds
'
[ ! -f "$W/dpkgref.seconds" ] || say "the dpkg --unpack reference and the comparison took $(cat "$W/dpkgref.seconds") s"

test_expect_success 'stage 1 writes the status stanzas in dpkg'"'"'s order, by name then architecture' '
    assert_same_status_order "$W/dpkgref" "$W/s1"
'

test_expect_success 'every package is installed and configured, dpkg --audit and a full dpkg --verify are clean' '
    assert_dpkg_clean "$W/img"
'

test_expect_success 'the image runs: bash, apt-get check (in a copy: running writes to it)' '
    cd "$W"
    a2o --repo build/ostree export minbase --dir run
    assert_streq "$(chroot "$W/run" bash -c "echo ok")" ok
    chroot "$W/run" apt-get check > check.out
    assert_file_has_content check.out "Building dependency tree"
'

test_expect_success 'setuid passwd and root:shadow chage are there, with dpkg'"'"'s modes' '
    cd "$W"
    stat -c "%a %U %G" "$W/img/usr/bin/passwd" > passwd.stat
    assert_streq "$(cat passwd.stat)" "4755 root root"
    stat -c "%a %U %G" "$W/img/usr/bin/chage" > chage.stat
    assert_streq "$(cat chage.stat)" "2755 root shadow"
'

if ! podman_usable; then
    test_skip 'minbase as an OCI archive: podman loads it and runs dpkg-query in it' "podman or runc is not installed (tools/setup installs them)"
else
    test_expect_success 'minbase as an OCI archive: podman loads it and runs dpkg-query in it, without a network' '
        cd "$W"
        a2o --repo build/ostree export minbase --oci minbase-oci.tar --tag minbase:latest
        n=$(podman_run minbase-oci.tar localhost/minbase:latest sh -c "dpkg-query -W | wc -l")
        assert_streq "$n" "$(grep -c "\"sha256\": " minbase.lock.json)"
    '
fi

test_expect_success 'mmdebstrap --variant=minbase bookworm builds on the same machine' '
    cd "$W"
    mmdebstrap --quiet --variant=minbase --mode=root --arch=amd64 bookworm mm.tar $MM_SOURCES
    mkdir mm && tar -C mm --numeric-owner -xpf mm.tar
'

test_expect_success 'the same packages and versions as mmdebstrap installs' '
    cd "$W"
    [ -d mm ]
    q="\${Package}:\${Architecture} \${Version} \${db:Status-Abbrev}\n"
    dpkg-query --admindir="$W/mm/var/lib/dpkg" -W -f "$q" | sort > mm.packages
    dpkg-query --admindir="$W/img/var/lib/dpkg" -W -f "$q" | sort > ours.packages
    diff -u mm.packages ours.packages
    [ "$(wc -l < ours.packages)" -gt 80 ]
'

test_expect_success 'the same files, owners and modes as mmdebstrap'"'"'s, but for the documented differences' '
    cd "$W"
    [ -d mm ]
    python3 "$TOP_SRCDIR/tests/compare-trees.py" mm img \
        --expected "$TOP_SRCDIR/tests/mmdebstrap-differences.txt" > compare.out || { cat compare.out; false; }
    cat compare.out
'

test_expect_success 'the dpkg database is mmdebstrap'"'"'s: every status stanza, info file, diversion, statoverride and trigger interest' '
    assert_same_dpkg_database "$W/mm" "$W/img"
'

test_expect_success 'building again does no work' '
    cd "$W"
    ninja -f build/minbase.ninja minbase > again.out
    assert_file_has_content again.out "no work to do"
'

test_expect_success 'the same lockfile built in a fresh build directory gives the same image commit' '
    cd "$W"
    a2o build minbase.lock.json --ref minbase --builddir build2 > build2.out
    assert_streq "$(cat build2/ostree/refs/heads/minbase)" "$(cat build/ostree/refs/heads/minbase)"
'

test_expect_success 'build --apt-sources: the sources it was built from are in /etc/apt, and apt-get update works inside' '
    cd "$W"
    a2o build minbase.lock.json --ref minbase-apt --builddir build --apt-sources > apt.out
    a2o --repo build/ostree export minbase-apt --dir aptimg
    cat aptimg/etc/apt/sources.list.d/apt2ostree.sources
    assert_file_has_content aptimg/etc/apt/sources.list.d/apt2ostree.sources "^URIs: $MIRROR"
    cp /etc/resolv.conf aptimg/etc/resolv.conf
    mount --bind /dev aptimg/dev
    rc=0
    chroot aptimg apt-get update > update.out 2>&1 || rc=$?
    umount aptimg/dev
    cat update.out
    [ $rc = 0 ]
    assert_not_file_has_content update.out "^[WE]:"
    ls aptimg/var/lib/apt/lists/ | grep -q "_InRelease\$"
'

# Slim images (lock --path-exclude/--path-include): the package trees are
# the ones above; stage 1 and 2 are the filtered image's own.
SLIM_FILTERS=(--path-exclude='/usr/share/doc/*' --path-include='/usr/share/doc/*/copyright'
              --path-exclude='/usr/share/man/*' --path-exclude='/usr/share/locale/*')
SLIM_DPKGOPTS=(--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
               --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*')
# slim_filtered PATH: is PATH (relative to the image) one the rules leave out?
slim_filtered () {
    case "/$1" in
        /usr/share/doc/*/copyright) return 1 ;;
        /usr/share/doc/*|/usr/share/man/*|/usr/share/locale/*) return 0 ;;
    esac
    return 1
}

test_expect_success 'minbase with path filters is what mmdebstrap --dpkgopt=path-exclude makes: the same files left out, the same dpkg --verify' '
    cd "$W"
    : > slim.txt
    a2o lock slim.txt --variant minbase --arch amd64 $LOCK_SUITE "${SLIM_FILTERS[@]}" -o slim.lock.json
    diff <(grep "\"filename\"" minbase.lock.json) <(grep "\"filename\"" slim.lock.json)
    a2o build slim.lock.json --ref minbase-slim --builddir build --apt-sources > slim.out
    a2o --repo build/ostree export minbase-slim --dir slimimg
    mmdebstrap --quiet --variant=minbase --mode=root --arch=amd64 "${SLIM_DPKGOPTS[@]}" \
        bookworm mmslim.tar $MM_SOURCES
    mkdir mmslim && tar -C mmslim --numeric-owner -xpf mmslim.tar
    { cat "$TOP_SRCDIR/tests/mmdebstrap-differences.txt"
      echo "only-reference /etc/dpkg/dpkg.cfg.d/99mmdebstrap"
      echo "only-ours /etc/dpkg/dpkg.cfg.d/apt2ostree-path-filters"
      echo "only-ours /etc/apt/sources.list.d/apt2ostree.sources"
      echo "only-ours /etc/apt/keyrings/*"; } > slim-differences.txt
    python3 "$TOP_SRCDIR/tests/compare-trees.py" mmslim slimimg --expected slim-differences.txt \
        > slim-compare.out || { cat slim-compare.out; false; }
    cat slim-compare.out
    chroot mmslim dpkg --verify | LC_ALL=C sort > mmslim.verify || true
    chroot slimimg dpkg --verify | LC_ALL=C sort > slim.verify || true
    diff -u mmslim.verify slim.verify
    awk "\$1 != \"missing\" || NF != 2 { print }" slim.verify > slim.other
    [ ! -s slim.other ] || { cat slim.other; false; }
    while read -r state path; do slim_filtered "${path#/}" || { echo "missing, not filtered: $path"; false; }; done < slim.verify
    grep -v "^#" slimimg/etc/dpkg/dpkg.cfg.d/apt2ostree-path-filters > rules
    grep -v "^#" mmslim/etc/dpkg/dpkg.cfg.d/99mmdebstrap | diff - rules
'

test_expect_success 'the slim image is smaller by what the filtered paths hold in minbase' '
    cd "$W"
    (cd img && find . -type f -printf "%P %s\n" | LC_ALL=C sort) > full.files
    (cd slimimg && find . -type f ! -path ./etc/apt/sources.list.d/apt2ostree.sources \
        ! -path "./etc/apt/keyrings/*" -printf "%P %s\n" | LC_ALL=C sort) > slim.files
    while read -r path size; do ! slim_filtered "$path" || { echo "filtered but kept: $path"; false; }; done < slim.files
    LC_ALL=C join -v 1 full.files slim.files > removed.files
    # Besides the filtered paths, maintainer scripts leave out what they make
    # only for a man page that is there: bash'"'"'s builtins.7.gz alternative.
    : > filtered.files
    : > scripts.files
    while read -r path size; do
        if slim_filtered "$path"; then
            echo "$path $size" >> filtered.files
        elif [ "${path#var/lib/dpkg/alternatives/}" != "$path" ] \
             && slim_filtered "$(sed -n "2s|^/||p" "img/$path")"; then
            echo "$path $size" >> scripts.files
        else
            echo "removed but not filtered: $path"; false
        fi
    done < removed.files
    awk "{ print \$1 }" filtered.files > filtered.paths
    awk "{ print \$1 }" full.files | while read -r path; do
        ! slim_filtered "$path" || echo "$path"; done | diff - filtered.paths
    full=$(awk "{ s += \$2 } END { print s }" full.files)
    saved=$(awk "{ s += \$2 } END { print s + 0 }" filtered.files)
    scripts=$(awk "{ s += \$2 } END { print s + 0 }" scripts.files)
    slim=$(awk "{ s += \$2 } END { print s }" slim.files)
    say "minbase: $full bytes in regular files; with the filters: $slim; the filtered paths held $saved ($((saved * 100 / full))%)"
    # The rest: the rules file, and dash'"'"'s postinst diverts sh.1.gz only
    # when /usr/share/man/man1 exists (so var/lib/dpkg/diversions is shorter).
    rules=$(stat -c %s slimimg/etc/dpkg/dpkg.cfg.d/apt2ostree-path-filters)
    diversions=$(( $(stat -c %s slimimg/var/lib/dpkg/diversions) - $(stat -c %s img/var/lib/dpkg/diversions) ))
    assert_streq "$((full - saved - scripts + rules + diversions))" "$slim"
    [ "$saved" -gt 0 ]
'

test_expect_success 'apt-get install inside the slim image honours the rules' '
    cd "$W"
    cp /etc/resolv.conf slimimg/etc/resolv.conf
    mount --bind /dev slimimg/dev
    mount -t proc proc slimimg/proc
    rc=0
    { chroot slimimg apt-get update && chroot slimimg apt-get install -y --no-install-recommends less; } \
        > slim-install.out 2>&1 || rc=$?
    umount slimimg/proc
    umount slimimg/dev
    cat slim-install.out
    [ $rc = 0 ]
    assert_has_file slimimg/usr/bin/less
    assert_has_file slimimg/usr/share/doc/less/copyright
    grep -q "^/usr/share/man/man1/less.1.gz\$" slimimg/var/lib/dpkg/info/less.list
    assert_not_has_file slimimg/usr/share/man/man1/less.1.gz
    [ -z "$(find slimimg/usr/share/doc/less -type f ! -name copyright)" ]
    chroot slimimg dpkg --verify less > less.verify || true
    awk "\$1 != \"missing\" || NF != 2 { print }" less.verify > less.other
    [ ! -s less.other ] || { cat less.other; false; }
    [ -s less.verify ]
'

test_done
