#!/bin/bash
# cache-pull into a bare or bare-user repository fetches a published
# archive repository's objects itself (src/store/cachefetch.c): the same
# commit, files and detached metadata as libostree's pull gives, over HTTP
# and from file:///; objects the repository has are not fetched; a missing
# ref is one request; a damaged object is refused and nothing is kept; a
# server dying mid-fetch leaves the repository fsck-clean; large files
# side by side are not all read into memory at once; with --cache-key the
# commit's GPG signature is checked before its tree is fetched.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"

command -v ostree > /dev/null || skip_all "ostree is not installed"

W="$SCRATCH/work"
mkdir -p "$W"
cd "$W"
SRC="$W/src"
a2o init --repo "$SRC" --mode bare-user > /dev/null
mkdir -p t1/usr/bin t1/usr/share/doc/one t1/etc/empty.d t1/var/lib
echo one > t1/usr/share/doc/one/file
: > t1/usr/share/doc/one/empty
head -c 3000000 /dev/urandom > t1/usr/bin/big
printf '#!/bin/sh\necho hi\n' > t1/usr/bin/hi
chmod 4755 t1/usr/bin/hi
chmod 0700 t1/var/lib
ln -s ../share/doc/one/file t1/usr/bin/link
ln t1/usr/share/doc/one/file t1/usr/share/doc/one/hardlink
seq 1 20000 > t1/usr/share/doc/one/numbers
cp -a t1 t2
echo two > t2/usr/share/doc/one/file2
a2o --repo "$SRC" import --ref images/one t1 > /dev/null
a2o --repo "$SRC" import --ref images/two t2 > /dev/null
repo_key publisher
repo_key other
a2o --repo "$SRC" publish --to "$W/srv/pub" > /dev/null
a2o --repo "$SRC" publish --to "$W/srv/signed" --gpg-sign "$(cat "$SCRATCH/keys/publisher.fpr")" \
    --gpg-homedir "$SCRATCH/gnupg-publisher" images/one > /dev/null
repo_serve "$W/srv"
URL=$HTTPD_URL
LOG=$HTTPD_LOG
repo_serve "$W/srv"
DYING=$HTTPD_URL

# same_as_ostree_pull MODE CACHE-URL REF: cache-pull REF into a new MODE
# repository, ostree pull into another (OWN and THEIRS, named after the
# arguments); the same commit, the same listing with xattrs, both
# fsck-clean.
same_as_ostree_pull () {
    local tag
    tag=$(echo "$*" | sha256sum | cut -c 1-12)
    local own="own-$tag" theirs="theirs-$tag"
    a2o init --repo "$own" --mode "$1" > /dev/null
    a2o --repo "$own" cache-pull --cache-url "$2" "$3" > out 2> err
    [ ! -s err ] || { cat err; return 1; }
    ostree --repo="$theirs" init --mode="$1"
    ostree --repo="$theirs" remote add --no-gpg-verify cache "$2"
    ostree --repo="$theirs" pull cache "$3" > /dev/null
    assert_streq "$(cat out)" "$3 $(cat "$theirs/refs/remotes/cache/$3")"
    assert_streq "$(cat "$own/refs/heads/$3")" "$(cat "$theirs/refs/remotes/cache/$3")"
    ostree --repo="$own" ls -R -X "$3" > own.ls
    ostree --repo="$theirs" ls -R -X "cache:$3" > theirs.ls
    cmp own.ls theirs.ls
    ostree --repo="$own" fsck > /dev/null
    ostree --repo="$theirs" fsck > /dev/null
    assert_not_file_has_content "$own/config" "remote"
    OWN=$own THEIRS=$theirs
}

test_expect_success 'cache-pull into a bare-user repository gives the commit, files and xattrs ostree pull gives' '
    cd "$W"
    same_as_ostree_pull bare-user "$URL/pub" images/one
'

if [ "$(id -u)" = 0 ]; then
test_expect_success 'cache-pull into a bare repository (as root) gives what ostree pull gives, owners and setuid bit included' '
    cd "$W"
    same_as_ostree_pull bare "$URL/pub" images/two
    ostree --repo="$OWN" ls images/two /usr/bin/hi | grep -q "^-04755"
'
else
test_skip 'cache-pull into a bare repository (as root) gives what ostree pull gives' "needs root"
fi

test_expect_success 'a file:/// cache gives the same as well' '
    cd "$W"
    same_as_ostree_pull bare-user "file://$W/srv/pub" images/two
'

test_expect_success 'objects the repository has are not fetched again: a second image fetches only what it adds' '
    cd "$W"
    a2o init --repo shared --mode bare-user > /dev/null
    a2o --repo shared cache-pull --cache-url "$URL/pub" images/one > /dev/null
    : > "$LOG"
    a2o --repo shared cache-pull --cache-url "$URL/pub" images/two > /dev/null
    assert_streq "$(grep -c "\.filez\$" "$LOG")" 1
    ostree --repo=shared fsck > /dev/null
    assert_streq "$(cat shared/refs/heads/images/two)" "$(cat "$SRC/refs/heads/images/two")"
'

# fetched_whole NAME [NOFILE]: the tree ./NAME imported as images/NAME,
# published into srv/NAME and cache-pulled from there into a new
# bare-user repository own-NAME (under "ulimit -n NOFILE" when given; from
# the cache's URL with $VIA between the server and srv/NAME when set):
# nothing on standard error, the same commit, fsck-clean.
fetched_whole () {
    a2o --repo "$SRC" import --ref "images/$1" "$1" > /dev/null
    rm -rf "srv/$1" && a2o --repo "$SRC" publish --to "srv/$1" "images/$1" > /dev/null
    rm -rf "own-$1" && a2o init --repo "own-$1" --mode bare-user > /dev/null
    (if [ -n "${2:-}" ]; then ulimit -n "$2"; fi
     a2o --repo "own-$1" cache-pull --cache-url "$URL${VIA:+/$VIA}/$1" "images/$1") > out 2> err
    [ ! -s err ] || { cat err; return 1; }
    assert_streq "$(cat "own-$1/refs/heads/images/$1")" "$(cat "$SRC/refs/heads/images/$1")"
    ostree --repo="own-$1" fsck > /dev/null
}

test_expect_success 'a tree of more files than the process may open at once is fetched whole (ulimit -n 700)' '
    cd "$W"
    mkdir -p many/usr/share/many
    for i in $(seq 1 3000); do echo "$i" > many/usr/share/many/$i; done
    fetched_whole many 700
'

test_expect_success 'a file larger than the fetched bytes kept waiting for the decoders at once (64 MB) is fetched, with the files around it' '
    cd "$W"
    mkdir -p huge/usr/lib
    head -c 70000000 /dev/urandom > huge/usr/lib/libhuge.so
    for i in 1 2 3; do head -c 1000000 /dev/urandom > huge/usr/lib/libsmall$i.so; done
    fetched_whole huge
    rm -rf huge srv/huge own-huge
'

test_expect_success 'large files side by side are not all read at once: of 8 files of 20 MB, the 8 never get past 16 MB together; from file:/// too' '
    cd "$W"
    mkdir -p large/usr/lib
    for i in $(seq 1 8); do head -c 20000000 /dev/urandom > large/usr/lib/lib$i.so; done
    : > "$LOG"
    VIA=fault/gate-8 fetched_whole large
    grep -x "gate: timed out" "$LOG"
    rm -rf own-file && a2o init --repo own-file --mode bare-user > /dev/null
    a2o --repo own-file cache-pull --cache-url "file://$W/srv/large" images/large > /dev/null
    assert_streq "$(cat own-file/refs/heads/images/large)" "$(cat "$SRC/refs/heads/images/large")"
    ostree --repo=own-file fsck > /dev/null
    rm -rf large srv/large own-large own-file
'

test_expect_success 'a ref the cache lacks is a miss at once: one request, one line, nothing written' '
    cd "$W"
    a2o init --repo miss --mode bare-user > /dev/null
    : > "$LOG"
    a2o --repo miss cache-pull --cache-url "$URL/pub" images/none > out 2> err
    assert_streq "$(cat "$LOG")" "/pub/refs/heads/images/none"
    assert_one_line err
    assert_file_has_content err "^apt2ostree: images/none: not from the cache $URL/pub ($URL/pub/refs/heads/images/none: no such ref); building it\$"
    test ! -s out
    assert_streq "$(find miss/objects -type f | wc -l)" 0
'

test_expect_success 'an unreachable cache is a miss at once' '
    cd "$W"
    a2o --repo miss cache-pull --cache-url http://127.0.0.1:1/pub images/one > out 2> err
    assert_one_line err
    assert_file_has_content err "^apt2ostree: images/one: not from the cache http://127.0.0.1:1/pub (http://127.0.0.1:1/pub/refs/heads/images/one: .*); building it\$"
    test ! -s out
'

# refused URL PATTERN [CONFIG [WRAPPER]]: cache-pull images/one from URL
# into a new repository ./bad (first given "ostree config set CONFIG" when
# CONFIG is not empty; run under the command WRAPPER, e.g. "timeout 60",
# when given) fails with one line matching PATTERN; no ref, no object is
# left, the repository is fsck-clean.
refused () {
    rm -rf bad && a2o init --repo bad --mode bare-user > /dev/null
    [ -z "${3:-}" ] || ostree --repo=bad config set $3
    ${4:-} "$APT2OSTREE" --repo bad cache-pull --cache-url "$1" images/one > out 2> err
    assert_one_line err
    assert_file_has_content err "$2"
    test ! -s out
    assert_not_has_file bad/refs/heads/images/one
    assert_streq "$(find bad/objects -type f | wc -l)" 0
    ostree --repo=bad fsck > /dev/null
}

# flip FILE: one byte in the middle of FILE changed.
flip () {
    local size
    size=$(stat -c %s "$1")
    printf "\\x5a" | dd of="$1" bs=1 seek=$((size / 2)) conv=notrunc 2> /dev/null
}

test_expect_success 'a flipped byte in a content object is refused, over HTTP and from file:///; nothing is kept' '
    cd "$W"
    cp -a srv/pub srv/bad
    obj=$(ostree --repo=srv/bad ls -RC images/one /usr/bin/big | awk "{ print \$5 }")
    flip "srv/bad/objects/${obj:0:2}/${obj:2}.filez"
    for url in "$URL/bad" "file://$W/srv/bad"; do
        refused "$url" "^apt2ostree: images/one: not from the cache $url ($url/objects/${obj:0:2}/${obj:2}.filez: refused: .*); building it\$"
    done
'

test_expect_success 'a content object with bytes after its compressed stream, or cut short, is refused; nothing is kept' '
    cd "$W"
    obj=$(ostree --repo=srv/pub ls -RC images/one /usr/share/doc/one/numbers | awk "{ print \$5 }")
    f="objects/${obj:0:2}/${obj:2}.filez"
    rm -rf srv/long srv/short && cp -a srv/pub srv/long && cp -a srv/pub srv/short
    printf "more" >> "srv/long/$f"
    truncate -s -8 "srv/short/$f"
    for c in long short; do
        refused "$URL/$c" "($URL/$c/$f: refused: its compressed content is damaged); building it\$"
    done
'

test_expect_success 'the repository'"'"'s min-free-space setting holds: a fetch that would pass it fails in one line, nothing kept' '
    cd "$W"
    refused "$URL/pub" "min-free-space" "core.min-free-space-size 1000000TB"
'

test_expect_success 'a flipped byte in a dirtree object is refused as well' '
    cd "$W"
    rm -rf srv/bad2 && cp -a srv/pub srv/bad2
    tree=$(ostree --repo=srv/bad2 ls -dC images/one /usr/share/doc/one | awk "{ print \$5 }")
    d="srv/bad2/objects/${tree:0:2}/${tree:2}.dirtree"
    flip "$d"
    refused "$URL/bad2" "\.dirtree: damaged (its checksum is not [0-9a-f]\{64\})); building it\$"
'

# (Each pull below runs under "timeout 60": a fetch without its deadline
# would run on for days against a trickling server.)
test_expect_success 'a server that sends a ref 2 bytes a second is given up after the per-object deadline, in one line naming the ref' '
    cd "$W"
    APT2OSTREE_CACHE_OBJECT_TIMEOUT=3 refused "$URL/fault/trickle-0/pub" \
        "($URL/fault/trickle-0/pub/refs/heads/images/one: not fetched within 3 s (\$APT2OSTREE_CACHE_OBJECT_TIMEOUT)); building it\$" \
        "" "timeout 60"
'

test_expect_success 'a content object sent 2 bytes a second is given up after the per-object deadline, and the whole fetch after its own' '
    cd "$W"
    obj=$(ostree --repo=srv/pub ls -RC images/one /usr/bin/big | awk "{ print \$5 }")
    u="$URL/fault/trickle-100000/pub"
    APT2OSTREE_CACHE_OBJECT_TIMEOUT=3 refused "$u" \
        "($u/objects/${obj:0:2}/${obj:2}.filez: not fetched within 3 s (\$APT2OSTREE_CACHE_OBJECT_TIMEOUT)); building it\$" \
        "" "timeout 60"
    APT2OSTREE_CACHE_TIMEOUT=3 refused "$u" \
        "($u: the fetch did not end within 3 s (\$APT2OSTREE_CACHE_TIMEOUT)); building it\$" \
        "" "timeout 60"
'

test_expect_success 'a cache that ran past a deadline is not asked again for $APT2OSTREE_CACHE_TIMEOUT s by the trees after it (one line each, no request); another cache still is' '
    cd "$W"
    rm -rf slow && a2o init --repo slow --mode bare-user > /dev/null
    u="$URL/fault/trickle-0/pub"
    : > "$LOG"
    APT2OSTREE_CACHE_OBJECT_TIMEOUT=3 timeout 60 "$APT2OSTREE" --repo slow cache-pull --cache-url "$u" \
        images/one images/two > out 2> err
    cat err
    assert_streq "$(wc -l < err)" 2
    assert_file_has_content err "^apt2ostree: images/one: not from the cache $u ($u/refs/heads/images/one: not fetched within 3 s"
    assert_file_has_content err "^apt2ostree: images/two: not from the cache $u (it ran past a deadline [0-9]* s ago and is not asked again for 3600 s; remove tmp/apt2ostree-cache-timed-out-[0-9a-f]\{16\} in the repository to ask it now); building it\$"
    assert_not_file_has_content "$LOG" images/two
    assert_file_has_content slow/tmp/apt2ostree-cache-timed-out-* "not fetched within 3 s"
    a2o --repo slow cache-pull --cache-url "$URL/pub" images/two > out 2> err
    test ! -s err
    rm slow/tmp/apt2ostree-cache-timed-out-*
    : > "$LOG"
    APT2OSTREE_CACHE_OBJECT_TIMEOUT=3 timeout 60 "$APT2OSTREE" --repo slow cache-pull --cache-url "$u" \
        images/one > out 2> err
    assert_file_has_content err "not fetched within 3 s"
    assert_file_has_content "$LOG" images/one
'

test_expect_success 'a ref file longer than a checksum line (a valid line, then 8 MB) is refused before its body is read' '
    cd "$W"
    rm -rf srv/longref && cp -a srv/pub srv/longref
    head -c 8000000 /dev/zero | tr "\\0" " " >> srv/longref/refs/heads/images/one
    : > "$LOG"
    refused "$URL/longref" "($URL/longref/refs/heads/images/one: refused: longer than 66 bytes, the most it may be); building it\$"
    assert_streq "$(cat "$LOG")" "/longref/refs/heads/images/one"
    refused "file://$W/srv/longref" "refs/heads/images/one: refused: longer than 66 bytes, the most it may be); building it\$"
'

test_expect_success 'a dirtree object of more than 16 MiB is refused without being read whole' '
    cd "$W"
    rm -rf srv/hugetree && cp -a srv/pub srv/hugetree
    tree=$(ostree --repo=srv/hugetree ls -dC images/one /usr/share/doc/one | awk "{ print \$5 }")
    head -c 20000000 /dev/zero > "srv/hugetree/objects/${tree:0:2}/${tree:2}.dirtree"
    refused "$URL/hugetree" "\.dirtree: refused: longer than 16777216 bytes, the most it may be); building it\$"
'

# bomb FILE CLAIMED REAL: the .filez FILE's content replaced by REAL MiB of
# zeros, compressed, its header saying CLAIMED MiB.
bomb () {
    python3 - "$@" <<EOF
import sys, zlib
path, claimed, real = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read()
hlen = int.from_bytes(data[:4], "big")
z = zlib.compressobj(9, zlib.DEFLATED, -15)
body = b"".join(z.compress(bytes(1 << 20)) for _ in range(real)) + z.flush()
header = (claimed << 20).to_bytes(8, "big") + data[16 : 8 + hlen]
open(path, "wb").write(data[:8] + header + body)
EOF
}

test_expect_success 'a deflate bomb is refused with memory kept small: 300 MiB of zeros its header claims, or 200 MiB past the 20 MiB it claims' '
    cd "$W"
    obj=$(ostree --repo=srv/pub ls -RC images/one /usr/bin/big | awk "{ print \$5 }")
    f="objects/${obj:0:2}/${obj:2}.filez"
    rm -rf srv/bomb srv/bomb2 && cp -a srv/pub srv/bomb && cp -a srv/pub srv/bomb2
    bomb "srv/bomb/$f" 300 300
    refused "$URL/bomb" "($URL/bomb/$f: refused: its content has checksum [0-9a-f]\{64\}); building it\$" \
        "" "/usr/bin/time -f %M -o $W/rss"
    say "max RSS $(cat rss) KiB"
    [ "$(cat rss)" -lt 150000 ]
    bomb "srv/bomb2/$f" 20 200
    refused "$URL/bomb2" "($URL/bomb2/$f: refused: longer than its header says (20971520 bytes)); building it\$"
'

# hostile NAME OLD NEW: a cache srv/NAME whose images/one is the tree
# ./odd with the entry OLD of its directory /h renamed NEW (see
# hostile-dirtree.py).
hostile () {
    rm -rf "srv/$1" && a2o --repo odd-src publish --to "srv/$1" images/one > /dev/null
    local h root
    h=$(ostree --repo="srv/$1" ls -dC images/one /h | awk "{ print \$5 }")
    root=$(ostree --repo="srv/$1" ls -dC images/one / | awk "{ print \$5 }")
    python3 "$TOP_SRCDIR/tests/hostile-dirtree.py" "srv/$1" images/one "$2" "$3" "$h" "$root"
}

test_expect_success 'a dirtree whose entries are out of order, or that names a file and a directory alike, is refused as ostree fsck refuses it' '
    cd "$W"
    mkdir -p odd/h/dd odd/h/ee
    for n in aa bb cc dd/x ee/x; do echo "$n" > "odd/h/$n"; done
    a2o init --repo odd-src --mode bare-user > /dev/null
    a2o --repo odd-src import --ref images/one odd > /dev/null
    hostile unsorted aa dz
    refused "$URL/unsorted" "\.dirtree: refused: its entries are not sorted by name (\"bb\" after \"dz\")); building it\$"
    hostile clash dd bb
    refused "$URL/clash" "\.dirtree: refused: \"bb\" is both a file and a directory); building it\$"
'

test_expect_success 'a server that dies mid-fetch leaves the repository fsck-clean; the next pull completes' '
    cd "$W"
    a2o init --repo dying --mode bare-user > /dev/null
    a2o --repo dying cache-pull --cache-url "$DYING/fault/die-8/pub" images/one > out 2> err
    assert_one_line err
    assert_file_has_content err "not from the cache $DYING/fault/die-8/pub"
    assert_not_has_file dying/refs/heads/images/one
    ostree --repo=dying fsck > /dev/null
    a2o --repo dying cache-pull --cache-url "$URL/pub" images/one > out
    assert_streq "$(cat dying/refs/heads/images/one)" "$(cat "$SRC/refs/heads/images/one")"
    ostree --repo=dying fsck > /dev/null
'

test_expect_success 'a signed commit fetched without --cache-key keeps its detached metadata, as ostree pull keeps it' '
    cd "$W"
    same_as_ostree_pull bare-user "$URL/signed" images/one
    c=$(cat "$OWN/refs/heads/images/one")
    cmp "$OWN/objects/${c:0:2}/${c:2}.commitmeta" "$THEIRS/objects/${c:0:2}/${c:2}.commitmeta"
'

test_expect_success 'with --cache-key the fetch stays this program'"'"'s: the commit'"'"'s signature checked, the same result as ostree pull' '
    cd "$W"
    a2o init --repo keyed --mode bare-user > /dev/null
    : > "$LOG"
    a2o --repo keyed cache-pull --cache-url "$URL/signed" --cache-key "$SCRATCH/keys/publisher.asc" \
        images/one > out 2> err
    [ ! -s err ] || { cat err; false; }
    assert_not_file_has_content "$LOG" "summary\|/config\$"
    assert_streq "$(cat keyed/refs/heads/images/one)" "$(cat "$SRC/refs/heads/images/one")"
    c=$(cat keyed/refs/heads/images/one)
    cmp "keyed/objects/${c:0:2}/${c:2}.commitmeta" "srv/signed/objects/${c:0:2}/${c:2}.commitmeta"
    ostree --repo=keyed fsck > /dev/null
'

test_expect_success 'with --cache-key a commit signed by another key, or not signed, is refused before its tree is fetched' '
    cd "$W"
    for c in "signed other" "pub publisher"; do
        set -- $c
        rm -rf refused && a2o init --repo refused --mode bare-user > /dev/null
        : > "$LOG"
        a2o --repo refused cache-pull --cache-url "$URL/$1" --cache-key "$SCRATCH/keys/$2.asc" \
            images/one > out 2> err
        assert_one_line err
        test ! -s out
        assert_not_has_file refused/refs/heads/images/one
        assert_not_file_has_content "$LOG" "\.dirtree\$\|\.filez\$"
        assert_streq "$(find refused/objects -type f | wc -l)" 0
    done
    assert_file_has_content err "images/one: not from the cache $URL/pub ($URL/pub/objects/.*\.commit: the commit has no GPG signature); building it, and every other tree this cache is asked for"
'

test_expect_success 'an archive-mode repository is still served by libostree'"'"'s pull, and keeps no ref of the cache'"'"'s remote' '
    cd "$W"
    a2o init --repo arch --mode archive > /dev/null
    a2o --repo arch cache-pull --cache-url "$URL/pub" images/one > out
    assert_streq "$(cat arch/refs/heads/images/one)" "$(cat "$SRC/refs/heads/images/one")"
    assert_streq "$(ostree --repo=arch refs | tr "\n" " ")" "images/one "
    ostree --repo=arch fsck > /dev/null
'

# Each metadata object the fetch took was referenced once too often and
# never freed (a GVariant per directory and per commit).
if command -v valgrind > /dev/null; then
test_expect_success 'cache-pull frees what it fetched: valgrind finds no definite leak' '
    cd "$W"
    a2o init --repo leak --mode bare-user > /dev/null
    valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9 \
        "$APT2OSTREE" --repo leak cache-pull --cache-url "$URL/pub" images/one > out 2> vg \
        || { grep -A12 "definitely lost in" vg; false; }
    assert_streq "$(cat leak/refs/heads/images/one)" "$(cat "$SRC/refs/heads/images/one")"
'
else
test_skip 'cache-pull frees what it fetched' "valgrind is not installed (tools/setup installs it)"
fi

test_done
