#!/bin/bash
# build --incremental purges any number of packages (issue #36): the names
# of the packages that left reach the sandboxed script in a file, not as
# one argument (Linux refuses one argument over 128 KiB: about 6,000
# packages of Debian's usual name lengths).  Hermetic: the real Debian
# bookworm base plus 1,000 tiny packages made here, each named with 140
# characters (Debian sets no limit on a name's length; apt2ostree takes up
# to 255 bytes), so that their names together pass 128 KiB.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2

N=1000
# 134 characters, then make_tiny_debs' "-NNNNN": 140.
PREFIX=long$(printf 'x%.0s' $(seq 1 130))
base_archive
make_tiny_debs "$D/pool/main" "$PREFIX" "$N" amd64
repo_dists "$D" bookworm amd64
repo_sign "$D" bookworm archive
serve_work_dir "$SRV"
R=build/ostree

test_expect_success 'the names of the packages to purge together pass 128 KiB' '
    cd "$W"
    assert_streq "$(printf %s "$PREFIX-00001" | wc -c)" 140
    base_lock long $(seq -f "$PREFIX-%05g" 1 "$N")
    base_lock base
    grep -o "\"name\": \"$PREFIX-[0-9]*\"" long.lock.json | cut -d\" -f4 > names
    assert_streq "$(wc -l < names)" "$N"
    [ "$(tr "\n" " " < names | wc -c)" -gt 131072 ]
'

test_expect_success 'an incremental build over the image of 1,000 long-named packages purges them all' '
    cd "$W"
    a2o build long.lock.json=img > long.out 2>&1 || { tail -n 20 long.out; false; }
    prev=$(ref_commit $R img)
    a2o build base.lock.json=img --incremental > base.out 2>&1 || { tail -n 20 base.out; false; }
    ostree --repo=$R show --print-metadata-key=apt2ostree.incremental img | tr -d "'\''" > from
    assert_streq "$(cat from)" "$prev"
    a2o --repo $R export img --dir ex > /dev/null
    dpkg-query --admindir=ex/var/lib/dpkg -W -f "\${db:Status-Abbrev}\${Package}\n" > states
    assert_not_file_has_content states "$PREFIX"
    assert_streq "$(grep -c "^ii " states)" "$(wc -l < states)"
    assert_not_has_file "ex/usr/share/$PREFIX"
    assert_streq "$(find $R/tmp -maxdepth 1 -name "stage2-*" | wc -l)" 0
'

test_done
