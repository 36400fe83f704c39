#!/bin/bash
# The merged-/usr rewrite as Debian trixie and later ship it (DEP 17):
# base-files ships the top-level links itself, files move between /lib and
# /usr/lib from one version to the next, and two packages may ship one file
# under both names.  The .list files keep the paths each package ships.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"

# links_pkg DIR: a base-files-like package staged in DIR that ships
# bin -> usr/bin, sbin -> usr/sbin, lib -> usr/lib, lib64 -> usr/lib64.
links_pkg () {
    mkdir -p "$1/usr/bin" "$1/usr/sbin" "$1/usr/lib" "$1/usr/lib64" "$1/etc"
    for d in bin sbin lib lib64; do ln -s "usr/$d" "$1/$d"; done
    echo trixie > "$1/etc/debian_version"
}

unpack () { a2o --repo repo unpack-deb --ref "$1" "$2" > /dev/null; }

test_expect_success 'a package that ships the top-level links keeps them at the root; its .list names them as shipped' '
    new_repo
    links_pkg base
    unpack deb/base "$(make_deb base base-files 13.8 amd64 "Essential: yes")"
    ls_tree repo deb/base > list
    for d in bin sbin lib lib64; do
        assert_file_has_content list "^l00777 0 0 0 /$d -> usr/$d\$"
        assert_file_has_content list "^d00755 0 0 0 /usr/$d\$"
    done
    ostree --repo=repo cat deb/base /var/lib/dpkg/info/base-files.list > base.list
    assert_file_has_content base.list "^/bin\$"
    assert_file_has_content base.list "^/lib64\$"
    assert_not_file_has_content base.list "^/usr/bin/bin"
'

test_expect_success 'stage 1 combines the shipped links with packages whose files the rewrite moves' '
    new_repo
    links_pkg base
    unpack deb/base "$(make_deb base base-files 13.8 amd64 "Essential: yes")"
    mkdir -p tool/bin tool/lib64 && echo tool > tool/bin/tool && echo ld > tool/lib64/ld.so
    unpack deb/tool "$(make_deb tool tool 1 amd64)"
    a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/base deb/tool
    ls_tree repo img/stage1 > list
    assert_file_has_content list "^l00777 0 0 0 /bin -> usr/bin\$"
    assert_file_has_content list "^l00777 0 0 0 /lib64 -> usr/lib64\$"
    assert_file_has_content list " /usr/bin/tool\$"
    assert_file_has_content list " /usr/lib64/ld.so\$"
    ostree --repo=repo checkout "$(rev_commit repo img/stage1)" co
    assert_file_has_content co/var/lib/dpkg/info/tool.list "^/bin/tool\$"
    assert_file_has_content co/var/lib/dpkg/info/base-files.list "^/bin\$"
    dpkg --root=co -S /bin/tool > owner
    assert_file_has_content owner "^tool: /bin/tool\$"
'

test_expect_success 'a top-level link that points anywhere but into /usr is refused under merged /usr' '
    new_repo
    mkdir -p evil/usr/bin && ln -s /opt evil/bin
    expect_failure err a2o --repo repo unpack-deb --ref deb/evil "$(make_deb evil evil 1 amd64)"
    assert_one_line err
    assert_file_has_content err "evil_1_amd64.deb: symlink \"./bin\" points to \"/opt\"; with merged /usr it must point to \"usr/bin\""
    assert_not_has_file repo/refs/heads/deb/evil
'

test_expect_success 'without merged /usr a shipped top-level link stays what it is' '
    new_repo
    links_pkg base
    a2o --repo repo unpack-deb --no-merged-usr --ref deb/base "$(make_deb base base-files 13.8 amd64)" > /dev/null
    ls_tree repo deb/base > list
    assert_file_has_content list "^l00777 0 0 0 /bin -> usr/bin\$"
'

test_expect_success 'a file that moved from /lib to /usr/lib between versions lands in one place; each .list keeps its path' '
    new_repo
    mkdir -p v1/lib/x86_64-linux-gnu v2/usr/lib/x86_64-linux-gnu
    echo so > v1/lib/x86_64-linux-gnu/libz.so.1
    echo so > v2/usr/lib/x86_64-linux-gnu/libz.so.1
    unpack deb/v1 "$(make_deb v1 zlib1g 1:1.2 amd64)"
    unpack deb/v2 "$(make_deb v2 zlib1g 1:1.3 amd64)"
    ls_tree repo deb/v1 | grep " /usr/lib/" > one
    ls_tree repo deb/v2 | grep " /usr/lib/" > two
    diff -u one two
    ostree --repo=repo cat deb/v1 /var/lib/dpkg/info/zlib1g.list > v1.list
    ostree --repo=repo cat deb/v2 /var/lib/dpkg/info/zlib1g.list > v2.list
    assert_file_has_content v1.list "^/lib/x86_64-linux-gnu/libz.so.1\$"
    assert_file_has_content v2.list "^/usr/lib/x86_64-linux-gnu/libz.so.1\$"
'

test_expect_success 'a directory one package ships where another ships the link: the directory goes under /usr' '
    new_repo
    links_pkg base
    unpack deb/base "$(make_deb base base-files 13.8 amd64)"
    mkdir -p libc/lib64 && echo ld > libc/lib64/ld-linux-x86-64.so.2
    unpack deb/libc "$(make_deb libc libc6 2.41 amd64)"
    a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/libc deb/base
    ls_tree repo img/stage1 > list
    assert_file_has_content list "^l00777 0 0 0 /lib64 -> usr/lib64\$"
    assert_file_has_content list " /usr/lib64/ld-linux-x86-64.so.2\$"
'

test_expect_success 'the same file under /lib/x and /usr/lib/x in two packages is one file when equal' '
    new_repo
    mkdir -p a/lib/x b/usr/lib/x && echo same > a/lib/x/f && echo same > b/usr/lib/x/f
    unpack deb/a "$(make_deb a a 1 amd64)"
    unpack deb/b "$(make_deb b b 1 amd64)"
    a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/a deb/b
    ostree --repo=repo checkout "$(rev_commit repo img/stage1)" co
    assert_streq "$(cat co/usr/lib/x/f)" same
    [ ! -e co/var/lib/apt2ostree/set-aside.list ] || [ ! -s co/var/lib/apt2ostree/set-aside.list ]
'

test_expect_success 'different files under /lib/x and /usr/lib/x in two packages meet at one path, as on a merged system' '
    new_repo
    mkdir -p a/lib/x b/usr/lib/x && echo one > a/lib/x/f && echo two > b/usr/lib/x/f
    unpack deb/a "$(make_deb a a 1 amd64)"
    unpack deb/b "$(make_deb b b 1 amd64 "Replaces: a")"
    a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/a deb/b
    ostree --repo=repo checkout "$(rev_commit repo img/stage1)" co
    assert_streq "$(cat co/usr/lib/x/f)" one
    assert_streq "$(cat co/var/lib/apt2ostree/set-aside.list)" "/usr/lib/x/f a b"
'

test_expect_success 'members compressed with zstd (Ubuntu 21.10 and later) unpack like xz ones' '
    new_repo
    mkdir -p z/usr/bin && echo z > z/usr/bin/z
    DEB_COMPRESSION=zstd make_deb z zt 1 amd64 > zstd.name
    ar t "$(cat zstd.name)" > members
    assert_file_has_content members "^data.tar.zst\$"
    assert_file_has_content members "^control.tar.zst\$"
    unpack deb/zstd "$(cat zstd.name)"
    DEB_COMPRESSION=xz make_deb z zt 1 amd64 > xz.name
    unpack deb/xz "$(cat xz.name)"
    assert_streq "$(ls_tree repo deb/zstd | grep -v apt2ostree)" "$(ls_tree repo deb/xz | grep -v apt2ostree)"
'

test_done
