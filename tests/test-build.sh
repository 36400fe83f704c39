#!/bin/bash
# apt2ostree build and ninja, hermetic: real Debian bookworm .debs (dpkg,
# dash, coreutils, libc6...) plus small packages made here, in a repository
# signed and served on 127.0.0.1 at test time.  The image is configured for
# real (maintainer scripts run), and the tests prove what a user sees: the
# image, incremental rebuilds, shared package trees, the Ninja file itself,
# and the failures.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2

base_archive

# (ischroot: maintainer scripts run as in debootstrap's or mmdebstrap's
# chroot, not as on a live system)
hello_postinst () {
    echo "if [ \"\$1\" = configure ]; then mkdir -p /var/lib/hello; echo \"hello $1 configured\" > /var/lib/hello/state;"
    echo "  if ischroot; then echo yes; else echo \"no (\$?)\"; fi > /var/lib/hello/ischroot; fi"
}

test_deb hello 1.0 "$(hello_postinst 1.0)" "Depends: coreutils"
test_deb extra 1.0 "" "Depends: hello"
test_deb failing 1.0 'echo "failing: cannot frobnicate the widget" >&2; exit 3'
test_deb victim 1.0
test_deb lost 1.0
repo_publish "$D" bookworm amd64 archive

# The tests share one work directory (and one build directory, build/):
# each builds on the one before, as a user's checkout would.
serve_work_dir "$SRV"

# deb_mtimes: every package ref with its mtime.
deb_mtimes () {
    (cd build/ostree/refs/heads && find deb -type f -printf '%p %T@\n' | sort)
}

test_expect_success 'build gives an image where every package is configured (ii) as in a chroot, and prints its ref, commit and how to look inside' '
    cd "$W"
    base_lock one hello
    a2o build one.lock.json > build-a.out
    cat build-a.out
    commit=$(cat build/ostree/refs/heads/one)
    assert_file_has_content build-a.out "^image one: commit $commit\$"
    assert_file_has_content build-a.out "ostree --repo=build/ostree ls -R $commit"
    assert_file_has_content build-a.out "apt2ostree --repo build/ostree export one --dir rootfs"
    a2o --repo build/ostree export one --dir img-a
    n=$(grep -c "\"sha256\": " one.lock.json)
    dpkg --root="$W/img-a" -l | awk "NR > 5 { print \$1 }" | sort | uniq -c > states
    cat states
    assert_streq "$(awk "{ print \$1, \$2 }" states)" "$n ii"
    dpkg --root="$W/img-a" --audit > audit
    [ ! -s audit ]
    assert_streq "$(cat img-a/var/lib/hello/state)" "hello 1.0 configured"
    assert_streq "$(cat img-a/var/lib/hello/ischroot)" yes
    [ ! -e img-a/run/apt2ostree ]
    assert_streq "$(chroot img-a /bin/sh -c "echo ok")" ok
    # the commit says what it is: the release (its os-release), how many packages, the architecture
    ostree --repo=build/ostree show one > show
    assert_file_has_content show "^    Debian GNU/Linux 12 (bookworm): $n packages for amd64, configured\$"
'

test_expect_success 'the progress names each package as it is fetched and unpacked, then stage 1 and stage 2' '
    cd "$W"
    for p in $(sed -n "s/.*{\"name\": \"\([^\"]*\)\", \"version\": \"\([^\"]*\)\".*/\1=\2/p" one.lock.json); do
        grep -q -x -F "fetch+unpack ${p%%=*} ${p#*=}" <(ran build-a.out) || fail "no progress line for $p"
    done
    ran build-a.out | grep -x -F "stage1 stage1/one"
    ran build-a.out | grep -x -F "configure one (dpkg --configure -a)"
'

test_expect_success 'a second build with nothing changed does no work, and keeps the image ref as it was' '
    cd "$W"
    before=$(mtime build/ostree/refs/heads/one)
    a2o build one.lock.json > again.out
    cat again.out
    assert_file_has_content again.out "ninja: no work to do"
    [ -z "$(ran again.out)" ]
    ninja -f build/one.ninja one > ninja.out
    assert_file_has_content ninja.out "ninja: no work to do"
    assert_streq "$(mtime build/ostree/refs/heads/one)" "$before"
'

test_expect_success 'a new version of one package re-runs only that package'"'"'s unpack, stage 1 and stage 2' '
    cd "$W"
    deb_mtimes | grep -v "^deb/hello/" > before
    test_deb hello 1.1 "$(hello_postinst 1.1)" "Depends: coreutils"
    rm "$D"/pool/main/hello_1.0_amd64.deb
    repo_publish "$D" bookworm amd64 archive
    a2o lock --update one.lock.json
    assert_file_has_content one.lock.json "{\"name\": \"hello\", \"version\": \"1.1\""
    a2o build one.lock.json > build.out
    ran build.out > steps
    cat steps
    assert_streq "$(cat steps)" "$(printf "%s\n" "fetch+unpack hello 1.1" "stage1 stage1/one" "configure one (dpkg --configure -a)")"
    deb_mtimes | grep -v "^deb/hello/" > after
    diff -u before after
    a2o --repo build/ostree export one --dir img-a2
    assert_streq "$(cat img-a2/var/lib/hello/state)" "hello 1.1 configured"
    dpkg-query --admindir=img-a2/var/lib/dpkg -W -f "\${Version} \${db:Status-Abbrev}" hello > st
    assert_streq "$(cat st)" "1.1 ii "
'

test_expect_success 'a second image in the same build directory shares package trees: only the package the first lacked is unpacked' '
    cd "$W"
    deb_mtimes > before
    base_lock two hello extra
    a2o build two.lock.json > build-b.out
    ran build-b.out > steps
    cat steps
    assert_streq "$(grep -c "^fetch+unpack " steps)" 1
    grep -x -F "fetch+unpack extra 1.0" steps
    deb_mtimes > after
    assert_streq "$(comm -13 before after | cut -d/ -f2)" extra
    assert_streq "$(comm -23 before after)" ""
    a2o --repo build/ostree export two --dir img-b
    dpkg-query --admindir=img-b/var/lib/dpkg -W -f "\${Status}\n" extra hello > st
    assert_streq "$(sort -u st)" "install ok installed"
'

# libostree's ostree_repo_resolve_rev tries checksum prefixes first: "a"
# would be "not unique" once the repository holds several objects starting
# with a.  Refs are looked up as refs.
test_expect_success 'an image may have a name that is also a checksum prefix ("a")' '
    cd "$W"
    cp one.lock.json a.lock.json
    a2o build a.lock.json > build.out
    assert_file_has_content build.out "^image a: commit [0-9a-f]\{64\}\$"
    rm -f build/a.ninja
'

test_expect_success 'the Ninja file is stable: the same lockfile gives the same bytes, and an unchanged file keeps its mtime' '
    cd "$W"
    cp build/one.ninja one.ninja.saved
    before=$(mtime build/one.ninja)
    a2o ninja one.lock.json -o build/one.ninja --builddir build
    cmp one.ninja.saved build/one.ninja
    assert_streq "$(mtime build/one.ninja)" "$before"
    a2o ninja one.lock.json -o x.ninja --builddir build
    a2o ninja one.lock.json -o y.ninja --builddir build
    sed "s/ -o [^ ]*\.ninja / -o OUT /; s/^build [^ ]*\.ninja: a2o_regen/build OUT: a2o_regen/" x.ninja > x.norm
    sed "s/ -o [^ ]*\.ninja / -o OUT /; s/^build [^ ]*\.ninja: a2o_regen/build OUT: a2o_regen/" y.ninja > y.norm
    cmp x.norm y.norm
    assert_not_file_has_content x.ninja "debian\.org"
'

test_expect_success 'every edge has restat = 1, only unpack, stage1 and configure write refs, and downloads go through one pool' '
    cd "$W"
    python3 - build/one.ninja <<"EOF"
import re, sys
text = open(sys.argv[1]).read()
rules = dict(re.findall(r"^rule (\S+)\n((?:  .*\n)*)", text, re.M))
pools = dict(re.findall(r"^pool (\S+)\n  depth = (\d+)", text, re.M))
assert len(pools) == 1, pools
pool = next(iter(pools))
assert int(pools[pool]) >= 1
for name in rules:
    assert "  restat = 1\n" in rules[name], (name, rules[name])
assert "  pool = %s\n" % pool in rules["a2o_unpack"], rules["a2o_unpack"]
edges = re.findall(r"^build (.*?): (\S+)", text, re.M)
for out, rule in edges:
    if "refs/heads/" in out:
        assert rule in ("a2o_unpack", "a2o_stage1", "a2o_configure"), (out, rule)
n_unpack = sum(1 for _, r in edges if r == "a2o_unpack")
assert n_unpack == text.count("\n  sha256 = "), n_unpack
print("pool", pool, "depth", pools[pool], "unpack edges", n_unpack)
EOF
'

test_expect_success 'the Ninja file regenerates itself when its lockfile changes, and ninja then builds the new version' '
    cd "$W"
    test_deb hello 1.2 "$(hello_postinst 1.2)" "Depends: coreutils"
    rm "$D"/pool/main/hello_1.1_amd64.deb
    repo_publish "$D" bookworm amd64 archive
    a2o lock --update one.lock.json
    ninja -f build/one.ninja one > ninja.out
    ran ninja.out > steps
    cat steps
    grep -x -F "regenerate build/one.ninja" steps
    grep -x -F "fetch+unpack hello 1.2" steps
    assert_file_has_content build/one.ninja "version = 1.2"
    assert_streq "$(grep -c "^fetch+unpack " steps)" 1
    touch one.lock.json
    ninja -f build/one.ninja one > touched.out
    cat touched.out
    ninja -f build/one.ninja one > again.out
    assert_file_has_content again.out "ninja: no work to do"
'

test_expect_success 'update-lockfiles re-locks without building' '
    cd "$W"
    test_deb hello 1.3 "$(hello_postinst 1.3)" "Depends: coreutils"
    rm "$D"/pool/main/hello_1.2_amd64.deb
    repo_publish "$D" bookworm amd64 archive
    image=$(cat build/ostree/refs/heads/one)
    before=$(mtime build/ostree/refs/heads/one)
    ninja -f build/one.ninja update-lockfiles > update.out
    cat update.out
    ran update.out > steps
    grep -x -F "lock --update one.lock.json" steps
    ! grep -E "^(fetch\+unpack|stage1|configure) " steps || fail "steps ran again"
    assert_file_has_content one.lock.json "{\"name\": \"hello\", \"version\": \"1.3\""
    assert_streq "$(cat build/ostree/refs/heads/one)" "$image"
    assert_streq "$(mtime build/ostree/refs/heads/one)" "$before"
    ninja -f build/one.ninja one/update-lockfile > again.out
    grep -x -F "lock --update one.lock.json" <(ran again.out)
'

test_expect_success 'build and ninja refuse bad arguments and missing files with one line naming the fault' '
    cd "$W"
    set +e
    a2o ninja one.lock.json 2> err; rc=$?
    set -e
    assert_streq "$rc" 2
    assert_file_has_content err "-o FILE.ninja is required"
    set +e
    a2o build 2> err; rc=$?
    set -e
    assert_streq "$rc" 2
    assert_file_has_content err "expected one LOCKFILE"
    expect_failure err a2o build nosuch.lock.json
    assert_one_line err
    assert_file_has_content err "nosuch.lock.json"
    expect_failure err a2o build one.lock.json --download-jobs -1
    assert_one_line err
    assert_file_has_content err "download-jobs"
    expect_failure err a2o build one.lock.json --ref "no good"
    assert_one_line err
    assert_file_has_content err "no good"
    expect_failure err a2o build one.lock.json --ninja "$W/no-such-ninja"
    assert_one_line err
    assert_file_has_content err "no-such-ninja.*--ninja PATH"
'

test_expect_success 'build --builddir and --repo put the Ninja file, caches and repository where they say; the same lockfile gives the same commit there' '
    cd "$W"
    a2o --repo elsewhere/repo build one.lock.json --builddir other > out
    assert_has_file other/one.ninja
    assert_file_has_content other/one.ninja "^repo = elsewhere/repo\$"
    assert_has_file elsewhere/repo/refs/heads/one
    assert_not_has_file other/ostree
    [ -n "$(ls other/cache/debs)" ]
    # The same lockfile, built in another repository: the same commit.
    a2o build one.lock.json > /dev/null
    assert_streq "$(cat elsewhere/repo/refs/heads/one)" "$(cat build/ostree/refs/heads/one)"
    assert_file_has_content out "ostree --repo=elsewhere/repo ls -R"
'

test_expect_success 'build --include with no lockfile locks into the build directory, builds, and keeps the lockfile (mmdebstrap'"'"'s one command)' '
    cd "$W"
    a2o build --include "$(echo $BASE_REQUEST | tr " " ,)" --include hello --variant custom --merged-usr yes \
        --sources sources.list --ref quick > quick.out
    assert_file_has_content build/quick.txt "^hello\$"
    assert_file_has_content build/quick.lock.json "{\"name\": \"hello\", "
    commit=$(cat build/ostree/refs/heads/quick)
    assert_file_has_content quick.out "^image quick: commit $commit\$"
    ostree --repo=build/ostree cat quick /var/lib/hello/state > state
    assert_file_has_content state "^hello [0-9.]* configured\$"
    # the lockfile kept builds the same image
    a2o build build/quick.lock.json=quick > again.out
    assert_streq "$(cat build/ostree/refs/heads/quick)" "$commit"
    expect_failure err a2o build one.lock.json --include hello
    assert_one_line err
    assert_file_has_content err "give them without a LOCKFILE"
    # The image name becomes file names in the build directory: checked first.
    mkdir -p sub
    expect_failure err a2o build --include hello --sources sources.list --builddir sub/b --ref ../../outside
    assert_one_line err
    assert_file_has_content err "\"../../outside\""
    test ! -e outside.txt && test ! -e outside.lock.json && test ! -e sub/b
'

test_expect_success 'a failing postinst stops the build, naming the package; the image ref is not written' '
    cd "$W"
    base_lock three failing
    expect_failure err a2o build three.lock.json > build-c.out
    cat build-c.out err > all
    assert_file_has_content all "Errors were encountered while processing:.*failing"
    assert_file_has_content err "ninja stopped"
    assert_has_file build/ostree/refs/heads/stage1/three
    assert_not_has_file build/ostree/refs/heads/three
'

# dpkg's own report scrolls away behind the packages configured after the
# failing one: stage 2 says last which script failed and what it printed.
test_expect_success 'the failure shows the package'"'"'s failing script and its output' '
    cd "$W"
    expect_failure err a2o build three.lock.json > out
    cat out err > all
    assert_file_has_content all "failing.*post-installation script"
    assert_file_has_content all "cannot frobnicate the widget"
'

test_expect_success 'after the package is fixed upstream, re-running continues: only the fixed package, stage 1 and stage 2 run again' '
    cd "$W"
    deb_mtimes | grep -v "^deb/failing/" > before
    test_deb failing 1.1
    rm "$D"/pool/main/failing_1.0_amd64.deb
    repo_publish "$D" bookworm amd64 archive
    a2o lock --update three.lock.json
    a2o build three.lock.json > build.out
    ran build.out > steps
    cat steps
    assert_streq "$(cat steps)" "$(printf "%s\n" "fetch+unpack failing 1.1" "stage1 stage1/three" "configure three (dpkg --configure -a)")"
    deb_mtimes | grep -v "^deb/failing/" > after
    diff -u before after
    assert_has_file build/ostree/refs/heads/three
'

test_expect_success 'a mirror that serves different bytes for a package fails its unpack with the SHA256 mismatch, and nothing downstream runs' '
    cd "$W"
    base_lock tampered victim
    # The same file, the same size, other bytes.
    python3 -c "import sys; f = open(sys.argv[1], \"r+b\"); f.seek(-200, 2); b = f.read(1); f.seek(-200, 2); f.write(bytes([b[0] ^ 0xff]))" \
        "$D"/pool/main/victim_1.0_amd64.deb
    expect_failure err a2o build tampered.lock.json > build-e.out
    cat build-e.out
    cat build-e.out err > all
    assert_file_has_content all "victim"
    assert_file_has_content all "[Ss][Hh][Aa]256 mismatch"
    ran build-e.out > steps
    ! grep -E "^(stage1|configure) " steps || fail "steps ran again"
    assert_not_has_file build/ostree/refs/heads/stage1/tampered
    assert_not_has_file build/ostree/refs/heads/tampered
    [ -z "$(find build/ostree/refs/heads/deb -path "*/victim/*" -type f)" ]
'

test_expect_success 'a mirror that lost a package fails that package'"'"'s unpack, naming it, and nothing downstream runs' '
    cd "$W"
    base_lock gone lost
    rm "$D"/pool/main/lost_1.0_amd64.deb
    expect_failure err a2o build gone.lock.json > build-f.out
    cat build-f.out err > all
    assert_file_has_content all "lost"
    assert_file_has_content all "404"
    ! ran build-f.out | grep -E "^(stage1|configure) " || fail "steps ran again"
    assert_not_has_file build/ostree/refs/heads/stage1/gone
'

# clash_deb NAME TEXT [FIELD: VALUE]...: a package shipping
# /usr/share/clash/file with TEXT in it.
clash_deb () {
    local name=$1 text=$2; shift 2
    local stage="$SCRATCH/stage/$name"
    rm -rf "$stage" && mkdir -p "$stage/usr/share/clash"
    echo "$text" > "$stage/usr/share/clash/file"
    ( cd "$D/pool/main" && make_deb "$stage" "$name" 1.0 amd64 "Priority: optional" "$@" ) > /dev/null
}

test_expect_success 'two packages shipping one path, with no diversion and no Replaces: the build fails naming both, as dpkg would' '
    cd "$W"
    clash_deb clash-a "from a"
    clash_deb clash-b "from b" "Depends: clash-a"
    repo_publish "$D" bookworm amd64 archive
    base_lock clashing clash-b
    expect_failure err a2o build clashing.lock.json > build-g.out
    cat build-g.out err > all
    assert_file_has_content all "packages clash-a and clash-b both ship /usr/share/clash/file"
    assert_not_has_file build/ostree/refs/heads/clashing
'

test_expect_success 'a package that Replaces the other takes the path, as dpkg lets it' '
    cd "$W"
    clash_deb clash-c "from c" "Depends: clash-a" "Replaces: clash-a"
    repo_publish "$D" bookworm amd64 archive
    base_lock replacing clash-c
    a2o build replacing.lock.json > build-h.out
    a2o --repo build/ostree export replacing --dir replacing-img
    assert_streq "$(cat replacing-img/usr/share/clash/file)" "from c"
    assert_not_has_file replacing-img/var/lib/apt2ostree
'

test_done
