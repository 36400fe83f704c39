#!/bin/bash
# stage1: package trees from unpack-deb combined into one tree holding a
# dpkg database in which every package is unpacked.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"

# Three packages: "base" ships /bin/sh, /lib64/ld.so and a conffile; "libfoo"
# is Multi-Arch: same; "tool" depends on both.
make_packages () {
    new_repo repo
    mkdir -p base/bin base/lib64 base/etc base/usr/share/doc/base
    echo sh > base/bin/sh && chmod 755 base/bin/sh
    echo ld > base/lib64/ld.so
    echo setting=1 > base/etc/base.conf
    mkdir -p base/DEBIAN && echo /etc/base.conf > base/DEBIAN/conffiles
    printf '#!/bin/sh\nexit 0\n' > base/DEBIAN/postinst
    make_deb base base 1.0 amd64 "Essential: yes" "Priority: required" > base.name
    mkdir -p libfoo/usr/lib/x86_64-linux-gnu
    echo so > libfoo/usr/lib/x86_64-linux-gnu/libfoo.so.1
    make_deb libfoo libfoo1 2:1.5-1 amd64 "Multi-Arch: same" > libfoo.name
    mkdir -p tool/usr/bin && echo tool > tool/usr/bin/tool
    make_deb tool tool 0.1 amd64 "Depends: base, libfoo1" > tool.name
    a2o --repo repo unpack-deb --ref deb/base "$(cat base.name)" > /dev/null
    a2o --repo repo unpack-deb --ref deb/libfoo1 "$(cat libfoo.name)" > /dev/null
    a2o --repo repo unpack-deb --ref deb/tool "$(cat tool.name)" > /dev/null
}

test_expect_success 'stage1 assembles var/lib/dpkg/status from every package, sorted by name' '
    make_packages
    a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/base deb/libfoo1 deb/tool
    ostree --repo=repo checkout "$(rev_commit repo img/stage1)" co
    grep "^Package: " co/var/lib/dpkg/status > names
    printf "Package: base\nPackage: libfoo1\nPackage: tool\n" > expected
    diff -u expected names
    assert_streq "$(grep -c "^Status: install ok unpacked\$" co/var/lib/dpkg/status)" 3
    assert_file_has_content co/var/lib/dpkg/status "^ /etc/base.conf [0-9a-f]\{32\}\$"
    assert_not_has_file co/var/lib/apt2ostree
'

test_expect_success 'dpkg reads the result: every package is unpacked, not configured' '
    make_packages
    a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/base deb/libfoo1 deb/tool
    ostree --repo=repo checkout "$(rev_commit repo img/stage1)" co
    dpkg --root="$PWD/co" -l > list
    assert_file_has_content list "^iU  base  *1.0  *amd64"
    assert_file_has_content list "^iU  libfoo1:amd64  *2:1.5-1  *amd64"
    assert_file_has_content list "^iU  tool  *0.1  *amd64"
    dpkg --root="$PWD/co" -L base > files
    assert_file_has_content files "^/bin/sh\$"
    assert_has_file co/var/lib/dpkg/info/libfoo1:amd64.list
'

test_expect_success 'stage1 writes the files and directories dpkg expects' '
    make_packages
    a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/base deb/libfoo1 deb/tool
    ostree --repo=repo checkout "$(rev_commit repo img/stage1)" co
    for f in available diversions statoverride; do
        assert_has_file co/var/lib/dpkg/$f
        [ ! -s co/var/lib/dpkg/$f ]
    done
    assert_streq "$(cat co/var/lib/dpkg/arch)" amd64
    assert_streq "$(cat co/var/lib/dpkg/info/format)" 1
    for d in alternatives info parts triggers updates; do [ -d co/var/lib/dpkg/$d ]; done
'

test_expect_success 'a merged-/usr image links bin, sbin, lib and the lib dirs packages use' '
    make_packages
    a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/base deb/libfoo1 deb/tool
    ls_tree repo img/stage1 > list
    for d in bin sbin lib lib64; do
        assert_file_has_content list "^l00777 0 0 0 /$d -> usr/$d\$"
    done
    assert_not_file_has_content list " /lib32"
    assert_not_file_has_content list " /libx32"
    assert_file_has_content list "^-00755 0 0 3 /usr/bin/sh\$"
    assert_file_has_content list "^d00755 0 0 0 /usr/sbin\$"
'

test_expect_success 'without merged /usr the paths stay as shipped and no links are made' '
    make_packages
    a2o --repo repo unpack-deb --no-merged-usr --ref legacy/base "$(cat base.name)" > /dev/null
    a2o --repo repo unpack-deb --no-merged-usr --ref legacy/tool "$(cat tool.name)" > /dev/null
    a2o --repo repo stage1 --ref old/stage1 --arch amd64 legacy/base legacy/tool
    ls_tree repo old/stage1 > list
    assert_file_has_content list "^-00755 0 0 3 /bin/sh\$"
    assert_not_file_has_content list " /sbin"
'

test_expect_success 'package trees unpacked with and without merged /usr do not mix' '
    make_packages
    a2o --repo repo unpack-deb --no-merged-usr --ref legacy/tool "$(cat tool.name)" > /dev/null
    expect_failure err a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/base legacy/tool
    assert_one_line err
    assert_file_has_content err "\"legacy/tool\" was unpacked without merged /usr"
    assert_not_has_file repo/refs/heads/img/stage1
'

test_expect_success 'two packages shipping different files at one path: the later one is set aside for stage 2' '
    make_packages
    mkdir -p other/usr/bin && echo other > other/usr/bin/tool
    a2o --repo repo unpack-deb --ref deb/other "$(make_deb other other 1 amd64)" > /dev/null
    a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/base deb/tool deb/other
    ostree --repo=repo checkout "$(rev_commit repo img/stage1)" co
    assert_streq "$(cat co/usr/bin/tool)" tool
    assert_streq "$(cat co/var/lib/apt2ostree/set-aside/other/usr/bin/tool)" other
    assert_streq "$(cat co/var/lib/apt2ostree/set-aside.list)" "/usr/bin/tool tool other"
'

test_expect_success 'a file in one package where another has a directory is an error naming both' '
    make_packages
    mkdir -p clash/usr/bin/tool && echo x > clash/usr/bin/tool/x
    a2o --repo repo unpack-deb --ref deb/clash "$(make_deb clash clash 1 amd64)" > /dev/null
    expect_failure err a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/base deb/tool deb/clash
    assert_one_line err
    assert_file_has_content err "\"/usr/bin/tool\" is a directory in \"deb/clash\" but not in \"deb/tool\"\$"
    assert_not_has_file repo/refs/heads/img/stage1
'

test_expect_success 'a tree that unpack-deb did not make is refused' '
    make_packages
    mkdir -p plain/etc && echo x > plain/etc/x
    commit_dir repo plain plain
    expect_failure err a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/base plain
    assert_one_line err
    assert_file_has_content err "\"plain\" is not a package tree"
'

test_expect_success 'stage1 reports the entries OSTree could not store' '
    make_packages
    mkdir -p fifo/usr/share && mkfifo fifo/usr/share/pipe
    a2o --repo repo unpack-deb --ref deb/fifo "$(make_deb fifo fifo 1 amd64)" > /dev/null 2>&1
    a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/base deb/fifo > /dev/null 2> err
    assert_file_has_content err "warning: fifo: .*usr/share/pipe (fifo) is not in the image"
'

test_expect_success 'stage1 is deterministic and leaves an unchanged ref file alone' '
    make_packages
    a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/base deb/libfoo1 deb/tool
    before=$(mtime repo/refs/heads/img/stage1)
    sleep 0.05
    a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/base deb/libfoo1 deb/tool
    assert_streq "$(mtime repo/refs/heads/img/stage1)" "$before"
'

test_expect_success 'stage1 needs --arch and at least one package tree' '
    make_packages
    expect_failure err a2o --repo repo stage1 --ref img/stage1 deb/base
    assert_file_has_content err "\-\-arch ARCH is required"
    expect_failure err a2o --repo repo stage1 --ref img/stage1 --arch amd64
    assert_file_has_content err "expected at least one PACKAGE-TREE"
'

test_expect_success 'stage1 --packages-from reads the package trees from a file, separated by spaces or newlines, and makes the commit the arguments make' '
    make_packages
    a2o --repo repo stage1 --ref a/stage1 --arch amd64 deb/base deb/libfoo1 deb/tool > args.out
    printf "deb/base deb/libfoo1\n\tdeb/tool" > list
    a2o --repo repo stage1 --ref b/stage1 --arch amd64 --packages-from list > list.out
    assert_streq "$(cat list.out)" "$(cat args.out)"
    printf "%s\n" deb/base deb/libfoo1 deb/tool > lines
    a2o --repo repo stage1 --ref c/stage1 --arch amd64 --packages-from lines > lines.out
    assert_streq "$(cat lines.out)" "$(cat args.out)"
'

test_expect_success 'stage1 takes its package trees as arguments or from a file, not both, and names a listed tree that is not there' '
    make_packages
    echo deb/tool > list
    expect_failure err a2o --repo repo stage1 --ref img/stage1 --arch amd64 --packages-from list deb/base
    assert_file_has_content err "as arguments or with --packages-from FILE, not both"
    printf "deb/base\ndeb/nosuch\n" > list
    expect_failure err a2o --repo repo stage1 --ref img/stage1 --arch amd64 --packages-from list
    assert_one_line err
    assert_file_has_content err "\"deb/nosuch\": no such ref or commit in the repository"
    expect_failure err a2o --repo repo stage1 --ref img/stage1 --arch amd64 --packages-from nosuch
    assert_one_line err
    assert_file_has_content err "nosuch: No such file or directory"
    assert_not_has_file repo/refs/heads/img/stage1
'

test_expect_success 'a conffile flagged remove-on-upgrade is recorded as dpkg --unpack records it (newconffile)' '
    new_repo repo
    mkdir -p rou/etc/sysctl.d rou/DEBIAN
    echo "# settings" > rou/etc/sysctl.d/README
    printf "/etc/sysctl.d/README\nremove-on-upgrade /etc/sysctl.conf\n" > rou/DEBIAN/conffiles
    deb=$(make_deb rou procps 2:4.0.4-9 amd64)
    a2o --repo repo unpack-deb --ref deb/procps "$deb" > /dev/null
    a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/procps
    ostree --repo=repo checkout "$(rev_commit repo img/stage1)" co
    mkdir -p ref/var/lib/dpkg/info ref/var/lib/dpkg/updates && : > ref/var/lib/dpkg/status
    dpkg --root="$PWD/ref" --force-architecture --unpack "$deb" > /dev/null
    sed -n "/^Conffiles:/,/^[A-Z]/p" ref/var/lib/dpkg/status | grep "^ " > expected
    sed -n "/^Conffiles:/,/^[A-Z]/p" co/var/lib/dpkg/status | grep "^ " > got
    cat expected got
    # dpkg writes "newconffile" for every conffile until it is configured;
    # stage 1 writes the shipped ones'"'"' md5sums at once (as dpkg does on
    # configure), and the one never shipped as dpkg does.
    grep remove-on-upgrade expected > expected.rou
    assert_streq "$(cat expected.rou)" " /etc/sysctl.conf newconffile remove-on-upgrade"
    assert_streq "$(grep remove-on-upgrade got)" "$(cat expected.rou)"
'

test_expect_success 'conffile paths with spaces are read whole and recorded as dpkg records them: dpkg-query and dpkg --verify agree' '
    new_repo repo
    mkdir -p sp/etc/my\ app sp/DEBIAN
    echo "setting = 1" > "sp/etc/my app/main file.conf"
    echo plain > sp/etc/plain.conf
    printf "/etc/my app/main file.conf\n/etc/plain.conf\nremove-on-upgrade /etc/old  two spaces.conf\n" > sp/DEBIAN/conffiles
    deb=$(make_deb sp spaced 1.0 amd64)
    a2o --repo repo unpack-deb --ref deb/spaced "$deb" > /dev/null
    a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/spaced
    ostree --repo=repo checkout "$(rev_commit repo img/stage1)" co
    dpkg-query --admindir=co/var/lib/dpkg -W -f="\${Conffiles}\n" spaced > got
    sum=$(md5sum < "sp/etc/my app/main file.conf" | cut -d" " -f1)
    plain=$(md5sum < sp/etc/plain.conf | cut -d" " -f1)
    printf " %s\n" "/etc/my app/main file.conf $sum" "/etc/plain.conf $plain" \
        "/etc/old  two spaces.conf newconffile remove-on-upgrade" > expected
    diff -u expected got
    dpkg --root="$PWD/co" --verify spaced > verify 2>&1 || { cat verify; fail "dpkg --verify"; }
    assert_streq "$(cat verify)" ""
    mkdir -p ref/var/lib/dpkg/info ref/var/lib/dpkg/updates && : > ref/var/lib/dpkg/status
    dpkg --root="$PWD/ref" --force-architecture --unpack "$deb" > /dev/null
    cmp ref/var/lib/dpkg/info/spaced.conffiles co/var/lib/dpkg/info/spaced.conffiles
    assert_streq "$(grep remove-on-upgrade ref/var/lib/dpkg/status)" "$(grep remove-on-upgrade co/var/lib/dpkg/status)"
'

test_done
