#!/bin/bash
# publish: a build repository's refs copied into an archive repository that
# a plain web server (here on 127.0.0.1) serves, pulled back with nothing
# but ostree's own command; two publishers at once; GPG-signed commits and
# summary, refused by a client that trusts another key.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"

command -v ostree > /dev/null || skip_all "ostree is not installed"

W="$SCRATCH/work"
mkdir -p "$W"
cd "$W"
SRC="$W/src"
a2o init --repo "$SRC" --mode bare-user > /dev/null
mkdir -p t1/usr/share/one t2/usr/share/two
echo one > t1/usr/share/one/file
echo two > t2/usr/share/two/file
a2o --repo "$SRC" import --ref images/one t1 > /dev/null
a2o --repo "$SRC" import --ref images/two t2 > /dev/null
mkdir -p "$W/srv"
repo_serve "$W/srv"
repo_key publisher
repo_key other

test_expect_success 'publish --to writes an archive repository with the refs and a summary; ostree fsck is clean' '
    cd "$W"
    a2o --repo "$SRC" publish --to srv/pub > out
    assert_streq "$(cat out)" "srv/pub: 2 refs published"
    assert_file_has_content srv/pub/config "mode=archive"
    assert_streq "$(ostree --repo=srv/pub refs | sort | tr "\n" " ")" "images/one images/two "
    assert_streq "$(cat srv/pub/refs/heads/images/one)" "$(cat "$SRC/refs/heads/images/one")"
    test -s srv/pub/summary
    ostree --repo=srv/pub fsck > /dev/null
'

test_expect_success 'plain ostree pulls a published ref over HTTP and checks out the same files' '
    cd "$W"
    ostree --repo=client init --mode=bare-user
    ostree --repo=client remote add --no-gpg-verify cache "$HTTPD_URL/pub"
    ostree --repo=client pull cache images/one
    ostree --repo=client checkout -U cache:images/one co-one
    assert_streq "$(cat co-one/usr/share/one/file)" one
    assert_streq "$(ostree --repo=client remote refs cache | sort | tr "\n" " ")" "cache:images/one cache:images/two "
'

test_expect_success 'two publishers writing to one directory at once: both land, summary and fsck clean' '
    cd "$W"
    for n in 1 2 3 4; do
        a2o init --repo "src$n" --mode bare-user > /dev/null
        mkdir -p "t$n/usr/share/p$n" && head -c 200000 /dev/urandom > "t$n/usr/share/p$n/file"
        a2o --repo "src$n" import --ref "par/$n" "t$n" > /dev/null
    done
    for n in 1 2 3 4; do a2o --repo "src$n" publish --to srv/pub > "par$n.out" & done
    wait
    ostree --repo=srv/pub fsck > /dev/null
    ostree --repo=client pull cache par/1 par/2 par/3 par/4
    assert_streq "$(ostree --repo=client remote refs cache | grep -c cache:par/)" 4
'

test_expect_success 'signed: a client that trusts the key pulls; one that trusts another key refuses' '
    cd "$W"
    a2o --repo "$SRC" publish --to srv/signed --gpg-sign "$(cat "$SCRATCH/keys/publisher.fpr")" \
        --gpg-homedir "$SCRATCH/gnupg-publisher" > out
    assert_file_has_content out "2 refs published, signed"
    ostree --repo=client remote add --gpg-import="$SCRATCH/keys/publisher.gpg" signed "$HTTPD_URL/signed"
    ostree --repo=client pull signed images/two
    ostree --repo=client remote add --gpg-import="$SCRATCH/keys/other.gpg" wrongkey "$HTTPD_URL/signed"
    expect_failure err ostree --repo=client pull wrongkey images/one
    cat err
    grep -qi "signature\|gpg" err
'

# Nothing of a publish that fails is visible: not a ref, not an object,
# not a delta, not a summary.
test_expect_success 'a signed publish with a key gpg does not have fails in one line and leaves DIR byte-identical (as built and with --history)' '
    cd "$W"
    a2o --repo "$SRC" publish --to srv/atomic > /dev/null
    a2o --repo "$SRC" publish --to srv/atomic-h --history > /dev/null
    mkdir -p t3/usr/share/three && echo three > t3/usr/share/three/file
    echo changed > t1/usr/share/one/file
    a2o --repo "$SRC" import --ref images/three t3 > /dev/null
    a2o --repo "$SRC" import --ref images/one t1 > /dev/null
    nokey=0123456789ABCDEF0123456789ABCDEF01234567
    for dir in srv/atomic srv/atomic-h; do
        history=
        [ "$dir" = srv/atomic ] || history=--history
        dir_snapshot "$dir" > before
        expect_failure err a2o --repo "$SRC" publish --to "$dir" $history --gpg-sign "$nokey" \
            --gpg-homedir "$SCRATCH/gnupg-publisher"
        dir_snapshot "$dir" > after
        diff -u before after
        assert_one_line err
        assert_file_has_content err "$nokey"
        assert_file_has_content err "nothing was published"
    done
    expect_failure err a2o --repo "$SRC" publish --to srv/atomic-new --gpg-sign "$nokey" \
        --gpg-homedir "$SCRATCH/gnupg-publisher"
    assert_one_line err
    assert_not_has_file srv/atomic-new
'

test_expect_success 'bad input: an unknown ref, a destination that is not an archive repository; nothing written' '
    cd "$W"
    expect_failure err a2o --repo "$SRC" publish --to srv/pub no/such/ref
    assert_file_has_content err "no ref \"no/such/ref\""
    expect_failure err a2o --repo "$SRC" publish --to "$SRC"
    assert_file_has_content err "is not an archive repository"
    expect_failure err a2o --repo "$SRC" publish images/one
    assert_file_has_content err "to DIR is required"
    test ! -e srv/pub/refs/heads/no
'

test_expect_success 'two publishers starting at once on a new directory: every run makes it once and lands' '
    cd "$W"
    for round in 1 2 3 4 5 6 7 8; do
        for n in 1 2 3; do
            a2o --repo "src$n" publish --to "srv/new$round" > "new$round-$n.out" 2>&1 &
        done
        wait
        for n in 1 2 3; do
            assert_streq "$(cat "new$round-$n.out")" "srv/new$round: 1 ref published"
        done
        ostree --repo="srv/new$round" fsck > /dev/null
        assert_streq "$(ostree --repo="srv/new$round" refs | sort | tr "\n" " ")" "par/1 par/2 par/3 "
    done
'

# A directory a publisher writes may be shared: what someone planted there
# must not make the publish write elsewhere.
test_expect_success 'a symlink planted in the destination (refs/heads, an objects directory, the summary) is refused in one line naming it; nothing lands where it points' '
    cd "$W"
    a2o --repo "$SRC" publish --to srv/planted > /dev/null
    mkdir elsewhere
    for what in refs/heads/images objects/ab summary; do
        rm -rf srv/p2 && cp -a srv/planted srv/p2
        rm -rf "srv/p2/$what"
        mkdir -p "$(dirname "srv/p2/$what")"
        ln -s "$W/elsewhere" "srv/p2/$what"
        expect_failure err a2o --repo "$SRC" publish --to srv/p2
        assert_one_line err
        assert_file_has_content err "srv/p2/$what is a symlink"
        assert_streq "$(ls -A elsewhere)" ""
    done
'

test_done
