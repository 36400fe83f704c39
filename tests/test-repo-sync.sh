#!/bin/bash
# How a transaction reaches the disk: the objects are synced before they
# are renamed into objects/, each commit after the objects it names, the
# renames (and the refs' new files) synced before any ref names them, and
# the refs last; each new commit marked partial (state/*.commitpartial)
# from before the first syncfs until after the second; without the fsync
# of every objects/XX directory OSTree does on its own, nor one of every
# ref file.  Watched with strace (tests/test-crash.sh kills the commands
# instead, at random instants).
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"

command -v strace > /dev/null || skip_all "strace is not installed (tools/setup installs it)"

(
    cd "$SCRATCH"
    mkdir -p s/usr/bin s/usr/share/doc/p && echo tool > s/usr/bin/p && echo doc > s/usr/share/doc/p/README
    mv "$(make_deb s p 1.0 amd64)" p.deb
    mkdir -p q/usr/lib && echo lib > q/usr/lib/libq.so.1
    mv "$(make_deb q q 2.0 amd64)" q.deb
    mkdir -p r/usr/bin r/DEBIAN && echo tool > r/usr/bin/r && ln -s r r/usr/bin/r-alias
    printf "#!/bin/sh\nexit 0\n" > r/DEBIAN/postinst
    mv "$(make_deb r r 3.0 amd64)" r.deb
) > "$SCRATCH/log" 2>&1 || { cat "$SCRATCH/log"; echo "Bail out! cannot build the test packages"; exit 1; }

# syncs FILE CMD...: run CMD under strace; FILE gets one letter per event:
# S syncfs, O objects put into objects/, renamed from the staging directory
# or linked from an open file (a run of them: one O), C a commit object
# put there (the calls that failed, e.g. for want of its XX directory, are
# not counted), M a commit marked partial (state/COMMIT.commitpartial made),
# U a marker removed,
# W a ref's new file opened (an O_TMPFILE under refs/),
# F fsync or fdatasync of a ref file, D fsync of an objects directory,
# f fsync of any other file or directory, R a ref renamed into place.
syncs () {
    local out=$1
    shift
    strace -f -y -o "$out.strace" -e trace=syncfs,fsync,fdatasync,renameat,renameat2,linkat,openat,unlinkat "$@" > /dev/null 2>&1
    awk '
        $2 ~ /^openat/ && /O_TMPFILE/ && /\/refs\// { printf "W"; next }
        $2 ~ /^openat/ && /\.commitpartial"/ && /O_CREAT/ { printf "M"; next }
        $2 ~ /^openat/ { next }
        $2 ~ /^unlinkat/ && /\.commitpartial"/ { printf "U"; next }
        $2 ~ /^unlinkat/ { next }
        $2 ~ /^syncfs/ { printf "S"; next }
        $2 ~ /^f(data)?sync\(.*\/refs\// { printf "F"; next }
        $2 ~ /^f(data)?sync\(.*\/objects(\/..)?>/ { printf "D"; next }
        $2 ~ /^f(data)?sync/ { printf "f"; next }
        $2 ~ /^(rename|link)/ && /\/objects>, "/ && /\.commit"/ { if (/= 0$/) printf "C"; next }
        $2 ~ /^(rename|link)/ && /\/objects>, "/ { printf "O"; next }
        $2 ~ /^rename/ && /\/refs\// { printf "R"; next }
    ' "$out.strace" | sed -E "s/O+/O/g" > "$out"
    echo >> "$out"
}

# durable_before_visible FILE N: the events of syncs() say that N new
# commits reached the disk before any ref named them: each marked partial
# before the first syncfs, every object and commit put into objects/ after
# it (so none appears before its content is on disk), the refs' new files
# written, a second syncfs, the markers removed, then the N refs renamed
# into place; and no fsync of an objects directory or a ref file.
durable_before_visible () {
    local ev n=$2
    ev=$(cat "$1")
    [[ $ev =~ ^(M*)S([OC]*)(W*)S(U*)(R*)$ ]] || fail "events \"$ev\": not durable before visible"
    local marks=${BASH_REMATCH[1]} objects=${BASH_REMATCH[2]} files=${BASH_REMATCH[3]}
    local unmarks=${BASH_REMATCH[4]} refs=${BASH_REMATCH[5]} commits
    commits=$(printf '%s' "$objects" | tr -cd C)
    [ ${#marks} = "$n" ] && [ ${#commits} = "$n" ] && [ ${#unmarks} = "$n" ] \
        && [ ${#files} = "$n" ] && [ ${#refs} = "$n" ] \
        || fail "events \"$ev\": expected $n commits, markers, ref files and refs"
    # (each commit after objects: a commit is never the first thing in)
    [ "${objects:0:1}" = O ] || fail "events \"$ev\": a commit went in before any object"
}

test_expect_success 'unpack-deb: commit marked partial, syncfs, objects then the commit renamed in, the ref file written, syncfs, marker removed, then the ref renamed; no other fsync' '
    new_repo
    a2o --repo repo unpack-deb --ref old "$SCRATCH/q.deb" > /dev/null 2>&1
    syncs ev "$APT2OSTREE" --repo repo unpack-deb --ref pkg "$SCRATCH/p.deb"
    durable_before_visible ev 1
    assert_streq "$(cat repo/refs/heads/pkg)" "$(ostree --repo=repo rev-parse pkg)"
    assert_streq "$(ls repo/state)" ""
    assert_streq "$(stat -c %a repo/refs/heads/pkg)" 644
    assert_streq "$(ls repo/refs/heads)" "$(printf "old\npkg")"
    ostree --repo=repo fsck > /dev/null 2>&1
'

test_expect_success '--batch: one syncfs before and one after the renames (each commit after its objects) and every ref file, then every ref' '
    new_repo
    printf "a %s\nb/c/d %s\n" "$SCRATCH/p.deb" "$SCRATCH/q.deb" > list
    syncs ev "$APT2OSTREE" --repo repo unpack-deb --batch list
    durable_before_visible ev 2
    assert_streq "$(cat repo/refs/heads/b/c/d)" "$(ostree --repo=repo rev-parse b/c/d)"
    assert_streq "$(ostree --repo=repo refs | sort | tr "\n" " ")" "a b/c/d "
'

test_expect_success 'the full binary (a download, an archive...) commits in the same order as the lean front' '
    new_repo full1
    APT2OSTREE_LEAN=0 syncs ev "$APT2OSTREE" --repo full1 unpack-deb --ref pkg "$SCRATCH/p.deb"
    durable_before_visible ev 1
    new_repo full2
    printf "a %s\nb/c/d %s\n" "$SCRATCH/p.deb" "$SCRATCH/r.deb" > list
    APT2OSTREE_LEAN=0 syncs ev "$APT2OSTREE" --repo full2 unpack-deb --batch list
    durable_before_visible ev 2
    new_repo full3
    ostree --repo=full3 config set core.fsync false
    APT2OSTREE_LEAN=0 syncs ev "$APT2OSTREE" --repo full3 unpack-deb --ref pkg "$SCRATCH/r.deb"
    assert_streq "$(cat ev)" "OCWR"
'

test_expect_success 'a ref that already holds the commit is not written, and nothing is synced for it' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg "$SCRATCH/p.deb" > /dev/null 2>&1
    syncs ev "$APT2OSTREE" --repo repo unpack-deb --ref pkg "$SCRATCH/p.deb"
    assert_streq "$(cat ev)" ""
'

test_expect_success 'tree commands commit the same way (mkdir)' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg "$SCRATCH/p.deb" > /dev/null 2>&1
    syncs ev "$APT2OSTREE" --repo repo mkdir --ref out pkg /new-dir
    durable_before_visible ev 1
'

test_expect_success 'with core.fsync=false nothing is synced (nor marked partial: the commit still goes in last)' '
    new_repo
    ostree --repo=repo config set core.fsync false
    syncs ev "$APT2OSTREE" --repo repo unpack-deb --ref pkg "$SCRATCH/p.deb"
    # (The objects go straight into objects/; OSTree writes the ref.)
    assert_streq "$(cat ev)" "OCWR"
    assert_has_file repo/refs/heads/pkg
'

# staging_reused LEAN: in repo/, one unpack, then a second one under strace
# (its mkdirat and unlinkat calls in st), both with APT2OSTREE_LEAN=LEAN:
# the transaction's own staging directory (tmp/apt2ostree-staging-*) is
# the same, and empty; the lean front (LEAN 1) makes and removes no
# directory at all.  (The commands module also runs a libostree
# transaction, whose own staging directory libostree makes and removes.)
staging_reused () {
    APT2OSTREE_LEAN=$1 a2o --repo repo unpack-deb --ref first "$SCRATCH/q.deb" > /dev/null 2>&1
    ls repo/tmp | grep "^apt2ostree-staging-" > before
    assert_streq "$(wc -l < before)" 1
    APT2OSTREE_LEAN=$1 strace -f -y -o st -e trace=mkdirat,unlinkat "$APT2OSTREE" --repo repo \
        unpack-deb --ref second "$SCRATCH/p.deb" > /dev/null 2>&1
    assert_streq "$(grep -c "apt2ostree-staging-.*AT_REMOVEDIR" st)" 0
    ls repo/tmp | grep "^apt2ostree-staging-" > after
    assert_streq "$(cat after)" "$(cat before)"
    assert_streq "$(find repo/tmp/apt2ostree-staging-* -mindepth 1 | wc -l)" 0
    if [ "$1" = 1 ]; then
        assert_streq "$(grep -c "AT_REMOVEDIR" st)" 0
        assert_streq "$(grep "mkdirat(.*/tmp>" st | grep -c "= 0$")" 0
    fi
    ostree --repo=repo fsck > /dev/null 2>&1
}

test_expect_success 'with core.fsync=false the staging directory is reused as well' '
    new_repo
    ostree --repo=repo config set core.fsync false
    staging_reused 1
    rm -rf repo && new_repo && ostree --repo=repo config set core.fsync false
    staging_reused 0
'

test_expect_success 'with core.per-object-fsync=true OSTree syncs its own way: each object and objects directory' '
    new_repo
    ostree --repo=repo config set core.per-object-fsync true
    syncs ev "$APT2OSTREE" --repo repo unpack-deb --ref pkg "$SCRATCH/p.deb"
    # (OSTree links each object straight into objects/ after its fsync.)
    grep -Eq "^O?f.*D+WFR$" ev || { cat ev; false; }
    ostree --repo=repo fsck > /dev/null 2>&1
'

test_expect_success 'with few file descriptors to spare, objects are synced and linked in by the batch' '
    mkdir -p many/usr/share/many
    for i in $(seq 700); do echo "file $i" > many/usr/share/many/f$i; done
    mv "$(make_deb many many 1.0 amd64)" many.deb
    new_repo
    (ulimit -n 600 && syncs ev "$APT2OSTREE" --repo repo unpack-deb --ref many many.deb)
    grep -Eq "^SOSO(SO)*MSOCWSUR$" ev || { cat ev; false; }
    ostree --repo=repo fsck > /dev/null 2>&1
    assert_streq "$(ostree --repo=repo ls -R many /usr/share/many | grep -c "/f[0-9]")" 700
'

# Deleting files in the repository is not free either: on ext4 without a
# journal every inode allocation steps over the inodes deleted in the last
# minute, one by one.
test_expect_success 'refs beyond what the file limit spares are written by OSTree (a batch of 200 with 300 descriptors)' '
    new_repo
    for i in $(seq 200); do echo "many/r$i $SCRATCH/p.deb"; done > list
    (ulimit -n 300 && syncs ev "$APT2OSTREE" --repo repo unpack-deb --batch list)
    assert_streq "$(find repo/refs/heads/many -type f | wc -l)" 200
    f=$(grep -o F ev | wc -l)
    test "$f" -gt 0 && test "$f" -lt 200 || { cat ev; false; }
    assert_streq "$(grep -o R ev | wc -l)" 200
    assert_streq "$(sort -u repo/refs/heads/many/* | wc -l)" 1
    ostree --repo=repo fsck > /dev/null 2>&1
'

test_expect_success 'a ref that is an alias, or whose place a directory takes, is left to OSTree (which syncs it itself)' '
    new_repo
    a2o --repo repo unpack-deb --ref base "$SCRATCH/q.deb" > /dev/null 2>&1
    ostree --repo=repo refs --create=al --alias base
    syncs ev "$APT2OSTREE" --repo repo unpack-deb --ref al "$SCRATCH/p.deb"
    assert_streq "$(cat ev)" "MSOCSUWFR"
    test -f repo/refs/heads/al
    test ! -L repo/refs/heads/al
    assert_streq "$(cat repo/refs/heads/al)" "$(ostree --repo=repo rev-parse al)"
    mkdir -p repo/refs/heads/dir/sub
    syncs ev "$APT2OSTREE" --repo repo unpack-deb --ref dir "$SCRATCH/p.deb"
    # (OSTree removes the directory and tries again.)
    grep -Eq "^S+(WFR)+$" ev || { cat ev; false; }
    assert_streq "$(cat repo/refs/heads/dir)" "$(cat repo/refs/heads/al)"
'

test_expect_success 'with core.auto-update-summary=true OSTree writes the refs (and the summary)' '
    new_repo
    ostree --repo=repo config set core.auto-update-summary true
    syncs ev "$APT2OSTREE" --repo repo unpack-deb --ref pkg "$SCRATCH/p.deb"
    # (then the summary file, synced: f)
    grep -Eq "^MSOCSUWFRf+$" ev || { cat ev; false; }
    assert_has_file repo/summary
    ostree --repo=repo summary --view | grep -q "pkg"
'

test_expect_success 'a package whose objects the repository holds is unpacked without making any object' '
    new_repo
    a2o --repo repo unpack-deb --ref first "$SCRATCH/r.deb" > /dev/null 2>&1
    strace -f -y -o st -e trace=openat,symlinkat,linkat,unlinkat "$APT2OSTREE" --repo repo \
        unpack-deb --ref second "$SCRATCH/r.deb" > /dev/null 2>&1
    assert_streq "$(grep -c "^[0-9]* *symlinkat" st)" 0
    assert_streq "$(grep "O_TMPFILE" st | grep -vc "/refs/heads>")" 0
    assert_streq "$(grep "unlinkat.*= 0$" st | grep -v "AT_REMOVEDIR" | grep -vc -- "-lock\"")" 0
    assert_streq "$(ostree --repo=repo rev-parse first)" "$(ostree --repo=repo rev-parse second)"
'

test_expect_success 'the next transaction reuses the staging directory of the last one (lean front and commands module)' '
    new_repo
    staging_reused 1
    rm -rf repo && new_repo
    staging_reused 0
'

test_expect_success 'a file a killed transaction left in the staging directory is removed by the next one, which reuses the directory' '
    new_repo
    a2o --repo repo unpack-deb --ref first "$SCRATCH/q.deb" > /dev/null 2>&1
    stage=$(ls -d repo/tmp/apt2ostree-staging-*)
    test -d "$stage"
    echo stray > "$stage/apt2ostree-0123456789abcdef"
    APT2OSTREE_LEAN=0 syncs ev "$APT2OSTREE" --repo repo unpack-deb --ref second "$SCRATCH/p.deb"
    durable_before_visible ev 1
    assert_streq "$(ls -d repo/tmp/apt2ostree-staging-*)" "$stage"
    assert_streq "$(find "$stage" -mindepth 1 | wc -l)" 0
    ostree --repo=repo fsck > /dev/null 2>&1
'

test_expect_success 'a staging directory another transaction holds (locked) is left alone: the next one makes its own' '
    new_repo
    a2o --repo repo unpack-deb --ref first "$SCRATCH/q.deb" > /dev/null 2>&1
    stage=$(ls -d repo/tmp/apt2ostree-staging-*)
    test -d "$stage"
    echo held > "$stage/apt2ostree-held"
    exec 9< "$stage"
    flock -n 9
    rc=0; a2o --repo repo unpack-deb --ref pkg "$SCRATCH/p.deb" > /dev/null 2>&1 || rc=$?
    exec 9<&-
    assert_streq "$rc" 0
    assert_streq "$(cat "$stage/apt2ostree-held")" held
    assert_streq "$(ls -d repo/tmp/apt2ostree-staging-* | wc -l)" 2
    ostree --repo=repo fsck > /dev/null 2>&1
    ostree --repo=repo cat pkg /usr/bin/p > p.out
    assert_streq "$(cat p.out)" tool
'

test_done
