#!/bin/bash
# build --incremental (issue #23): stage 2 starts from the image the ref
# holds and does what apt-get would on a running device (purge what left,
# dpkg --unpack what changed or arrived, dpkg --configure -a), and the
# image says it is incremental.  Hermetic: Debian's own bookworm base .debs
# (tests/libbuildtest.sh) and small packages made here, served on
# 127.0.0.1.  The incremental image of a lockfile is compared with the
# from-scratch image of the same lockfile: same packages and versions, all
# "ii", dpkg --verify clean, and every file that differs printed and
# explained by the allow-list below.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2
umask 022

base_archive

# fixture NAME VERSION [FIELD: VALUE]...: a package in $D's pool shipping
# /usr/share/NAME/version and the conffile /etc/NAME.conf (both naming the
# version), with the maintainer scripts staged in $SCRATCH/scripts/NAME-VERSION/.
fixture () {
    local name=$1 version=$2
    shift 2
    local stage="$SCRATCH/stage/$name-$version"
    rm -rf "$stage"
    mkdir -p "$stage/usr/share/$name" "$stage/etc" "$stage/DEBIAN"
    echo "$name $version" > "$stage/usr/share/$name/version"
    echo "# $name $version" > "$stage/etc/$name.conf"
    echo "/etc/$name.conf" > "$stage/DEBIAN/conffiles"
    cp "$SCRATCH/scripts/$name-$version/"* "$stage/DEBIAN/" 2> /dev/null || true
    ( cd "$D/pool/main" && make_deb "$stage" "$name" "$version" all "Priority: optional" "$@" ) > /dev/null
}
# script NAME-VERSION SCRIPT BODY: a maintainer script for fixture().
script () {
    mkdir -p "$SCRATCH/scripts/$1"
    printf '#!/bin/sh\nset -e\n%s\n' "$3" > "$SCRATCH/scripts/$1/$2"
}

# alpha: upgraded 1.0 -> 2.0 (its postinst runs again: "configure 1.0").
script alpha-1.0 postinst 'mkdir -p /var/lib/alpha; echo "alpha 1.0 configured" > /var/lib/alpha/state'
script alpha-2.0 postinst 'mkdir -p /var/lib/alpha; echo "alpha 2.0 configured" > /var/lib/alpha/state'
fixture alpha 1.0 "Depends: coreutils"
fixture alpha 2.0 "Depends: coreutils"
# beta: downgraded 2.0 -> 1.0.
fixture beta 2.0
fixture beta 1.0
# gamma: removed; its postrm takes away what its postinst made.
script gamma-1.0 postinst 'echo made > /etc/gamma.generated'
script gamma-1.0 postrm 'if [ "$1" = purge ]; then rm -f /etc/gamma.generated; fi'
fixture gamma 1.0
# delta: added; its preinst is run by dpkg --unpack ("install").
script delta-1.0 preinst 'echo "$@" > /etc/delta.preinst'
# delta also offers an alternative (update-alternatives' own database).
script delta-1.0 postinst 'update-alternatives --install /usr/bin/delta-version delta-version /usr/share/delta/version 10'
script delta-1.0 prerm 'if [ "$1" = remove ]; then update-alternatives --remove delta-version /usr/share/delta/version; fi'
# epsilon: kept, with a file trigger on alpha's directory; it logs each run
# (an upgraded alpha runs it again on the device, not in a fresh image).
script epsilon-1.0 postinst 'mkdir -p /var/lib/epsilon; echo "$@" >> /var/lib/epsilon/log'
mkdir -p "$SCRATCH/scripts/epsilon-1.0"
echo "interest-noawait /usr/share/alpha" > "$SCRATCH/scripts/epsilon-1.0/triggers"
fixture epsilon 1.0
fixture delta 1.0
# broken: added later; its postinst fails.
script broken-1.0 postinst 'echo "broken: cannot frobnicate the widget" >&2; exit 3'
fixture broken 1.0
repo_publish "$D" bookworm amd64 archive
repo_serve "$SRV"

W="$SCRATCH/work"
mkdir -p "$W"
cd "$W"
repo_sources_line "$HTTPD_URL/debian" bookworm archive > sources.list
R=build/ostree

base_lock v1 alpha=1.0 beta=2.0 gamma epsilon
base_lock v2 alpha=2.0 beta=1.0 delta epsilon
base_lock v3 alpha=2.0 beta=1.0 delta epsilon broken

# incremental_of REF [REPO]: the commit REF's image started from, or nothing.
incremental_of () {
    ostree --repo="${2:-$R}" show --print-metadata-key=apt2ostree.incremental "$1" 2> /dev/null \
        | tr -d "'"
}

# What the incremental image of a lockfile may hold differently from its
# from-scratch image, each path with its reason (a device upgraded with
# apt-get holds the same).  Anything else that differs fails the test.
cat > allowed <<'END'
var/lib/epsilon/log	a package's own log: on the device its trigger ran again when alpha was upgraded
var/lib/dpkg/triggers/File	file-trigger interests, in the order dpkg (not stage 2) recorded them
var/lib/dpkg/alternatives/delta-version	update-alternatives' database: the same entries, written by one more run
END

# compare_images A B: export both, then: the same packages and versions,
# all ii, dpkg --verify clean in each, and the paths that differ (printed)
# all on the allow-list.
compare_images () {
    rm -rf "ex-$1" "ex-$2"
    a2o --repo "$R" export "$1" --dir "ex-$1" > /dev/null
    a2o --repo "$R" export "$2" --dir "ex-$2" > /dev/null
    local q='${Package} ${Version} ${Architecture} ${db:Status-Abbrev}\n'
    dpkg-query --admindir="ex-$1/var/lib/dpkg" -W -f "$q" > "$1.pkgs"
    dpkg-query --admindir="ex-$2/var/lib/dpkg" -W -f "$q" > "$2.pkgs"
    diff -u "$1.pkgs" "$2.pkgs"
    assert_dpkg_clean "ex-$1" > /dev/null
    assert_dpkg_clean "ex-$2" > /dev/null
    # what differs: content, type, or a path only one of them has
    (cd "ex-$1" && find . -printf '%P\t%y\t%m\t%u\t%g\t%l\n' | LC_ALL=C sort) > "$1.files"
    (cd "ex-$2" && find . -printf '%P\t%y\t%m\t%u\t%g\t%l\n' | LC_ALL=C sort) > "$2.files"
    { diff "$1.files" "$2.files" | sed -n 's/^[<>] //p' | cut -f1
      diff -rq --no-dereference "ex-$1" "ex-$2" | sed -n "s|^Files ex-$1/\(.*\) and .* differ\$|\1|p"
    } | LC_ALL=C sort -u > differ
    local bad
    bad=$(grep -v -x -F -f <(cut -f1 allowed) differ || true)
    [ -z "$bad" ] || { echo "differ, not on the allow-list:"; printf '%s\n' "$bad"; false; }
}

test_expect_success 'build --incremental with no previous image configures from scratch' '
    cd "$W"
    a2o build v1.lock.json=img --incremental > out
    [ -z "$(incremental_of img)" ]
    a2o build v1.lock.json=scratch1 > out
    assert_streq "$(ref_commit $R img)" "$(ref_commit $R scratch1)"
'

test_expect_success 'an incremental build upgrades, downgrades, removes and adds packages over the previous image' '
    cd "$W"
    prev=$(ref_commit $R img)
    a2o build v2.lock.json=img --incremental > out
    assert_streq "$(incremental_of img)" "$prev"
    ostree --repo="$R" show --print-metadata-key=apt2ostree.incremental.stage1 img | tr -d "'\''" > s1
    assert_streq "$(cat s1)" "$(ref_commit $R stage1/img)"
    ostree --repo="$R" show img > show
    assert_file_has_content show "^    Debian GNU/Linux 12 (bookworm): $(grep -c "\"sha256\": " v2.lock.json) packages for amd64, configured incrementally\$"
    a2o --repo "$R" export img --dir ex > /dev/null
    assert_streq "$(cat ex/usr/share/alpha/version)" "alpha 2.0"
    assert_streq "$(cat ex/usr/share/beta/version)" "beta 1.0"
    assert_streq "$(cat ex/etc/alpha.conf)" "# alpha 2.0"
    assert_streq "$(cat ex/etc/delta.preinst)" "install"
    assert_not_has_file ex/usr/share/gamma
    assert_not_has_file ex/etc/gamma.generated
    assert_not_has_file ex/etc/gamma.conf
    assert_not_has_file ex/var/lib/dpkg/info/gamma.list
'

test_expect_success 'the incremental image has the packages, versions and files of the from-scratch image of the same lockfile' '
    cd "$W"
    a2o build v2.lock.json=scratch2 > out
    [ -z "$(incremental_of scratch2)" ]
    compare_images scratch2 img
'
# The comparison's list, explained.
while read -r path; do
    why=$(awk -F '\t' -v p="$path" '$1 == p { print $2 }' "$W/allowed")
    say "differs: $path (${why:-not on the allow-list})"
done < "$W/differ"
[ -s "$W/differ" ] || say "differs: nothing"

# Kept checkouts (store/keptcheckout.h): the incremental stage 2 keeps the
# checkout of the image it made, and the next one over that image starts
# from it instead of checking the image out again.
K=$R/apt2ostree-checkouts
# kept_commit REF: the commit REF's kept checkout says it is of.
kept_commit () { cut -d " " -f1 "$K/$1/key"; }
# configure_img LOCKFILE STAGE1: img's incremental stage 2 alone, as the
# build runs it; what it said in err.
configure_img () {
    a2o --repo "$R" configure --ref img --incremental --lockfile "$1" "$2" > /dev/null 2> err \
        || { cat err; false; }
}

test_expect_success 'an incremental build keeps the checkout of the image it made; a from-scratch one keeps none' '
    cd "$W"
    assert_streq "$(kept_commit img)" "$(ref_commit $R img)"
    assert_not_has_file "$K/scratch1"
    assert_not_has_file "$K/scratch2"
    assert_streq "$(stat -c %a "$K")" 700
'

test_expect_success 'the next incremental stage 2 starts from the kept checkout, brings it to its image, and makes the image a fresh checkout makes' '
    cd "$W"
    ref_commit $R img > q.commit
    ino=$(stat -c %i "$K/img/tree/usr/share/beta")
    configure_img v1.lock.json stage1/scratch1
    assert_not_file_has_content err "kept checkout"
    assert_streq "$(stat -c %i "$K/img/tree/usr/share/beta")" "$ino"
    ref_commit $R img > p.commit
    assert_streq "$(kept_commit img)" "$(cat p.commit)"
    rm -rf co && ostree --repo="$R" checkout img co
    diff -u <(listing co) <(listing "$K/img/tree")
    diff -r --no-dereference co "$K/img/tree"
    cp q.commit $R/refs/heads/img
    rm -rf "$K/img"
    configure_img v1.lock.json stage1/scratch1
    assert_streq "$(ref_commit $R img)" "$(cat p.commit)"
'

test_expect_success 'a kept checkout of another commit of the image (the ref was set back) is brought to it and used, to the same image' '
    cd "$W"
    assert_streq "$(kept_commit img)" "$(cat p.commit)"
    ino=$(stat -c %i "$K/img/tree/usr/share/beta")
    cp q.commit $R/refs/heads/img
    configure_img v1.lock.json stage1/scratch1
    assert_not_file_has_content err "kept checkout"
    assert_streq "$(stat -c %i "$K/img/tree/usr/share/beta")" "$ino"
    assert_streq "$(ref_commit $R img)" "$(cat p.commit)"
    assert_streq "$(kept_commit img)" "$(cat p.commit)"
'

test_expect_success 'a kept checkout that changed since it was kept, has no key, or is gone, is not used: stage 2 checks the image out again, to the same image' '
    cd "$W"
    configure_img v2.lock.json stage1/img
    ref_commit $R img > e.commit
    for tamper in "touch $K/img/tree/etc/tampered" "chmod 700 $K/img/tree/usr/share" \
                  "rm -f $K/img/tree/etc/alpha.conf" "rm -f $K/img/key" "rm -rf $K/img"; do
        cp q.commit $R/refs/heads/img && rm -rf "$K/img"
        configure_img v1.lock.json stage1/scratch1
        assert_streq "$(ref_commit $R img)" "$(cat p.commit)"
        $tamper
        configure_img v2.lock.json stage1/img
        assert_streq "$(ref_commit $R img)" "$(cat e.commit)"
        assert_streq "$(kept_commit img)" "$(cat e.commit)"
        case $tamper in
            "rm -rf"*) assert_not_file_has_content err "kept checkout" ;;
            *key) assert_file_has_content err "the kept checkout of img is not used (it has no key" ;;
            *) assert_file_has_content err "the kept checkout of img is not used (it changed since it was kept)" ;;
        esac
    done
'

test_expect_success 'an incremental stage 2 whose postinst fails writes no ref and leaves the previous image as it was' '
    cd "$W"
    before=$(ref_commit $R img)
    m=$(mtime $R/refs/heads/img)
    expect_failure err a2o build v3.lock.json=img --incremental > out 2>&1
    grep -q "broken: cannot frobnicate the widget" out err
    assert_streq "$(ref_commit $R img)" "$before"
    assert_streq "$(mtime $R/refs/heads/img)" "$m"
    assert_not_has_file "$K/img"
    [ -z "$(ls $R/tmp | grep "^mod-")" ]
'

test_expect_success 'an incremental build with the packages the image already has leaves it as it is' '
    cd "$W"
    before=$(ref_commit $R img)
    a2o build v2.lock.json=img --incremental > out
    assert_streq "$(ref_commit $R img)" "$before"
'

test_expect_success 'without --incremental the image is configured from scratch again: the from-scratch commit' '
    cd "$W"
    a2o build v2.lock.json=img > out
    [ -z "$(incremental_of img)" ]
    assert_streq "$(ref_commit $R img)" "$(ref_commit $R scratch2)"
'

test_expect_success 'an incremental image never goes into the build cache' '
    cd "$W"
    ostree --repo="$R" refs | grep "^cache/" | sort > cache.before || :
    expect_failure err a2o --repo "$R" configure --incremental --lockfile v2.lock.json --ref x \
        --cache-url http://127.0.0.1:1/ stage1/img 2> /dev/null
    grep -q "cache holds from-scratch images only" err
    ostree --repo="$R" refs | grep "^cache/" | sort > cache.after || :
    diff -u cache.before cache.after
    [ ! -e "$R/refs/heads/x" ]
'

test_expect_success 'with --cache-url an incremental build writes no keyed image or stage-2 cache ref' '
    cd "$W"
    a2o build v1.lock.json=cached --builddir cb --cache-url "$HTTPD_URL/cache" > out 2>&1 \
        || { cat out; false; }
    ostree --repo=cb/ostree refs | grep -E "^cache/(image|configured)/" | sort > before
    assert_streq "$(wc -l < before)" 2
    a2o build v2.lock.json=cached --builddir cb --cache-url "$HTTPD_URL/cache" --incremental > out 2>&1 \
        || { cat out; false; }
    [ -n "$(incremental_of cached cb/ostree)" ]
    ostree --repo=cb/ostree refs | grep -E "^cache/(image|configured)/" | sort > after
    diff -u before after
'

# mine VERSION TEXT: the local package mine, shipping TEXT, into $W/local.
mine () {
    local stage="$SCRATCH/stage/mine"
    rm -rf "$stage" && mkdir -p "$stage/usr/share/mine" "$W/local"
    echo "$2" > "$stage/usr/share/mine/text"
    ( cd "$W/local" && make_deb "$stage" mine "$1" all "Priority: optional" ) > /dev/null
}

test_expect_success 'a local package rebuilt with the same version is unpacked again by an incremental build' '
    cd "$W"
    mine 1.0 first
    base_lock local alpha=2.0 beta=1.0 delta epsilon ./local/mine_1.0_all.deb
    a2o build local.lock.json=img --incremental > out
    a2o --repo "$R" export img --dir ex1 > /dev/null
    assert_streq "$(cat ex1/usr/share/mine/text)" first
    prev=$(ref_commit $R img)
    mine 1.0 second
    base_lock local alpha=2.0 beta=1.0 delta epsilon ./local/mine_1.0_all.deb
    a2o build local.lock.json=img --incremental > out
    assert_streq "$(incremental_of img)" "$prev"
    a2o --repo "$R" export img --dir ex2 > /dev/null
    assert_streq "$(cat ex2/usr/share/mine/text)" second
    dpkg --root=ex2 --verify
'

test_expect_success 'a previous image with another dpkg architecture list is not built on: stage 2 runs from scratch, saying why' '
    cd "$W"
    a2o --repo "$R" mod --ref img img -- sh -c "echo i386 >> /work/var/lib/dpkg/arch" > /dev/null
    a2o build v1.lock.json=img --incremental > out 2>&1 || { cat out; false; }
    grep -q "another dpkg architecture list" out
    [ -z "$(incremental_of img)" ]
    assert_streq "$(ref_commit $R img)" "$(ref_commit $R scratch1)"
'

test_expect_success 'the Ninja file of an incremental build starts stage 2 from the image and reads the lockfile' '
    cd "$W"
    a2o ninja v2.lock.json=img --incremental -o inc.ninja
    grep -q "^rule a2o_configure_incremental" inc.ninja
    grep -q ": a2o_configure_incremental \$repo/refs/heads/stage1/img | v2.lock.json\$" inc.ninja
    a2o ninja v2.lock.json=img -o plain.ninja
    ! grep -q incremental plain.ninja
'

test_expect_success 'configure -v says where the time around the stage-2 script went' '
    cd "$W"
    a2o --repo "$R" configure -v --ref vtest stage1/scratch1 > /dev/null 2> err
    grep -q "^apt2ostree configure: checkout [0-9.]* s, command [0-9.]* s, commit [0-9.]* s, keeping the checkout [0-9.]* s, cleanup [0-9.]* s\$" err
'

test_expect_success 'two images of one incremental build keep a checkout each, of their own image' '
    cd "$W"
    a2o build v1.lock.json=two-a v2.lock.json=two-b --incremental > out
    a2o build v2.lock.json=two-a v1.lock.json=two-b --incremental > out
    [ -n "$(incremental_of two-a)" ]
    [ -n "$(incremental_of two-b)" ]
    assert_streq "$(kept_commit two-a)" "$(ref_commit $R two-a)"
    assert_streq "$(kept_commit two-b)" "$(ref_commit $R two-b)"
    [ "$(ref_commit $R two-a)" != "$(ref_commit $R two-b)" ]
'

test_expect_success 'prune removes the kept checkouts of the images it deletes, and of images built since from scratch' '
    cd "$W"
    [ -e "$K/img" ] || { a2o build v2.lock.json=img --incremental > out; a2o build v1.lock.json=img > out; }
    [ "$(kept_commit img)" != "$(ref_commit $R img)" ]
    a2o prune --builddir build v1.lock.json=img v1.lock.json=two-b > out
    assert_not_has_file "$K/img"
    assert_not_has_file "$K/two-a"
    assert_streq "$(kept_commit two-b)" "$(ref_commit $R two-b)"
'

test_done
