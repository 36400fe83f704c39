#!/bin/bash
# lock --path-exclude / --path-include: slim images as dpkg's path filters
# make them.  The rules are recorded in the lockfile's request; stage 1
# leaves out what dpkg would not unpack with them (the dpkg database stays
# as dpkg writes it: every path in the .list files, md5sums as shipped),
# and the image carries the rules in /etc/dpkg/dpkg.cfg.d for its own dpkg.
# Every claim about dpkg is checked against dpkg itself: the same .debs
# unpacked by dpkg --root with the same rules.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2
command -v jq > /dev/null || skip_all "jq is not installed (tools/setup installs it)"

base_archive

# docs: documentation, a man page, a translation, a symlink in its doc
# directory and a conffile; docs-extra shares its doc directory layout.
stage_docs () {
    local s=$1 name=$2
    mkdir -p "$s/usr/bin" "$s/usr/share/doc/$name" "$s/usr/share/man/man1" \
        "$s/usr/share/locale/de/LC_MESSAGES" "$s/etc"
    echo "$name" > "$s/usr/bin/$name" && chmod 755 "$s/usr/bin/$name"
    echo "readme of $name" > "$s/usr/share/doc/$name/README"
    echo "copyright of $name" > "$s/usr/share/doc/$name/copyright"
    ln -s README "$s/usr/share/doc/$name/README.link"
    echo "man page of $name" | gzip -n > "$s/usr/share/man/man1/$name.1.gz"
    echo "translation of $name" > "$s/usr/share/locale/de/LC_MESSAGES/$name.mo"
    echo "setting=1" > "$s/etc/$name.conf"
    mkdir -p "$s/DEBIAN" && echo "/etc/$name.conf" > "$s/DEBIAN/conffiles"
}
stage_docs "$SCRATCH/stage/docs" docs
stage_docs "$SCRATCH/stage/docs-extra" docs-extra
( cd "$D/pool/main" \
  && make_deb "$SCRATCH/stage/docs" docs 1.0 amd64 "Priority: optional" \
  && make_deb "$SCRATCH/stage/docs-extra" docs-extra 1.0 amd64 "Priority: optional" ) > /dev/null
repo_publish "$D" bookworm amd64 archive

serve_work_dir "$SRV"
printf '%s\n' $BASE_REQUEST docs docs-extra > slim.txt
FILTERS=(--path-exclude='/usr/share/doc/*' --path-include='/usr/share/doc/*/copyright'
         --path-exclude '/usr/share/man/*' --path-exclude='/usr/share/locale/*')
RULES='path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/locale/*'
a2o lock slim.txt --sources sources.list --variant custom --merged-usr yes --cache cache \
    "${FILTERS[@]}" -o slim.lock.json > /dev/null
a2o build slim.lock.json > slim.build.out 2>&1 || { cat slim.build.out; exit 1; }
REPO="$W/build/ostree"
a2o --repo "$REPO" export slim --dir img

# dpkg's own unpack of the fixture packages with the same rules.
dpkg_reference () {
    local root=$1; shift
    mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
    touch "$root/var/lib/dpkg/status"
    dpkg --root="$root" --log=/dev/null --force-script-chrootless --force-not-root \
        "${FILTERS[@]}" --unpack "$@" > /dev/null
}

test_expect_success 'lock records --path-exclude and --path-include in the request, in the order given' '
    cd "$W"
    jq -r ".request.\"path-filters\"[]" slim.lock.json > recorded
    assert_streq "$(cat recorded)" "$RULES"
'

test_expect_success 'the image leaves out the excluded paths and keeps the re-included copyright files' '
    cd "$W"
    for p in docs docs-extra; do
        assert_has_file img/usr/bin/$p
        assert_has_file img/usr/share/doc/$p/copyright
        assert_not_has_file img/usr/share/doc/$p/README
        assert_not_has_file img/usr/share/man/man1/$p.1.gz
        assert_not_has_file img/usr/share/locale/de
    done
    assert_has_file img/usr/share/doc/dpkg/copyright
    assert_not_has_file img/usr/share/doc/dpkg/changelog.Debian.gz
    [ -z "$(find img/usr/share/man -type f)" ]
    [ -z "$(find img/usr/share/doc -type f ! -name copyright)" ]
'

test_expect_success 'what stays and the dpkg database are exactly what dpkg --unpack makes with the same rules' '
    cd "$W"
    rm -rf ref && dpkg_reference "$W/ref" "$D"/pool/main/docs_1.0_amd64.deb "$D"/pool/main/docs-extra_1.0_amd64.deb
    for p in docs docs-extra; do
        cmp ref/var/lib/dpkg/info/$p.list img/var/lib/dpkg/info/$p.list
        cmp ref/var/lib/dpkg/info/$p.md5sums img/var/lib/dpkg/info/$p.md5sums
        while read -r path; do
            [ "$path" = /. ] && continue
            if [ -e "ref$path" ] || [ -L "ref$path" ] || [ -e "ref$path.dpkg-new" ]; then
                echo "kept $path"
            else
                echo "left out $path"
            fi
        done < ref/var/lib/dpkg/info/$p.list > ref.$p
        while read -r path; do
            [ "$path" = /. ] && continue
            if [ -e "img$path" ] || [ -L "img$path" ]; then echo "kept $path"; else echo "left out $path"; fi
        done < img/var/lib/dpkg/info/$p.list > img.$p
        diff -u ref.$p img.$p
    done
    # dpkg keeps the doc directory and the symlink in it (an include rule
    # names something below /usr/share/doc), not the man or locale ones.
    assert_file_has_content img.docs "^kept /usr/share/doc/docs/README.link\$"
    assert_file_has_content img.docs "^left out /usr/share/locale/de\$"
'

test_expect_success 'dpkg --verify inside reports the left-out paths as missing, as it does over dpkg'"'"'s own unpack, and nothing else' '
    cd "$W"
    chroot img dpkg --verify > verify.out
    [ -s verify.out ]
    awk "\$1 != \"missing\" || NF != 2" verify.out > other
    [ ! -s other ] || { cat other; false; }
    # Each missing path is one the rules leave out, and dpkg says the same
    # of its own unpack for the fixture packages.
    awk "{ print \$2 }" verify.out > missing
    while read -r path; do
        case "$path" in
            /usr/share/doc/*/copyright) echo "re-included path reported: $path"; false ;;
            /usr/share/doc/*|/usr/share/man/*|/usr/share/locale/*) ;;
            *) echo "not filtered: $path"; false ;;
        esac
    done < missing
    dpkg --root="$W/ref" --verify docs docs-extra | grep -v "/etc/docs" > ref.verify || true
    chroot img dpkg --verify docs docs-extra > img.verify
    diff -u ref.verify img.verify
    assert_streq "$(dpkg --root="$W/img" -l | awk "NR > 5 { print \$1 }" | sort -u)" ii
'

test_expect_success 'the image holds the rules in /etc/dpkg/dpkg.cfg.d, and its dpkg honours them for a later install' '
    cd "$W"
    assert_streq "$(grep -v "^#" img/etc/dpkg/dpkg.cfg.d/apt2ostree-path-filters)" "$RULES"
    mkdir -p "$SCRATCH/stage/later/usr/share/doc/later" "$SCRATCH/stage/later/usr/share/man/man1"
    echo r > "$SCRATCH/stage/later/usr/share/doc/later/README"
    echo c > "$SCRATCH/stage/later/usr/share/doc/later/copyright"
    echo m > "$SCRATCH/stage/later/usr/share/man/man1/later.1"
    (cd img/tmp && make_deb "$SCRATCH/stage/later" later 1.0 amd64 > /dev/null)
    chroot img dpkg -i /tmp/later_1.0_amd64.deb > install.out
    assert_has_file img/usr/share/doc/later/copyright
    assert_not_has_file img/usr/share/doc/later/README
    assert_not_has_file img/usr/share/man/man1/later.1
    chroot img dpkg --verify later > later.verify
    assert_streq "$(cat later.verify)" "missing     /usr/share/doc/later/README
missing     /usr/share/man/man1
missing     /usr/share/man/man1/later.1"
'

test_expect_success 'without path filters the lockfile has no path-filters member and nothing is left out' '
    cd "$W"
    printf "%s\n" $BASE_REQUEST docs > full.txt
    a2o lock full.txt --sources sources.list --variant custom --merged-usr yes --cache cache \
        -o full.lock.json > /dev/null
    assert_not_file_has_content full.lock.json path-filters
    a2o build full.lock.json > full.build.out 2>&1 || { cat full.build.out; false; }
    a2o --repo "$REPO" export full --dir full
    assert_has_file full/usr/share/doc/docs/README
    assert_has_file full/usr/share/man/man1/docs.1.gz
    assert_not_has_file full/etc/dpkg/dpkg.cfg.d/apt2ostree-path-filters
    dpkg --root="$W/full" --verify > full.verify
    [ ! -s full.verify ]
'

test_expect_success 'lock --update keeps the path filters; the same lockfile builds the same commit' '
    cd "$W"
    cp slim.lock.json before.json
    a2o lock --update slim.lock.json --sources sources.list --cache cache > update.out
    cmp before.json slim.lock.json
    expect_failure err a2o lock --update slim.lock.json --path-exclude="/usr/*"
    assert_file_has_content err "only -o, --sources"
    a2o build slim.lock.json --builddir again > again.out 2>&1 || { cat again.out; false; }
    assert_streq "$(ref_commit again/ostree slim)" "$(ref_commit "$REPO" slim)"
'

test_expect_success 'bad globs are refused: empty, a newline, not starting with /, in a lockfile too' '
    cd "$W"
    expect_failure err a2o lock slim.txt --sources sources.list --path-exclude=
    assert_file_has_content err "path-exclude \"\" is empty"
    expect_failure err a2o lock slim.txt --sources sources.list --path-include "usr/share/doc/*"
    assert_file_has_content err "path-include \"usr/share/doc/\*\" does not start with \"/\""
    expect_failure err a2o lock slim.txt --sources sources.list --path-exclude "/usr/share/doc/*
path-include=/"
    assert_file_has_content err "path-exclude .*control character"
    sed "s|\"path-exclude=/usr/share/man/\*\"|\"path-exclude=usr/share/man\"|" slim.lock.json > bad.lock.json
    expect_failure err a2o build bad.lock.json --builddir bad
    assert_file_has_content err "bad.lock.json.*path-filters.*does not start with \"/\""
    sed "s|\"path-exclude=/usr/share/man/\*\"|\"exclude=/usr/share/man\"|" slim.lock.json > bad2.lock.json
    expect_failure err a2o build bad2.lock.json --builddir bad
    assert_file_has_content err "path-filters.*is not \"path-exclude=GLOB\" or \"path-include=GLOB\""
'

test_expect_success 'an excluded directory that still holds a kept file is an error naming both, as dpkg fails there' '
    cd "$W"
    docs_ref=$(cd "$REPO/refs/heads" && ls -d deb/docs/*/*/*)
    expect_failure err a2o --repo "$REPO" stage1 --ref try/stage1 --arch amd64 \
        --path-filter "path-exclude=/usr/share/man/man1" "$docs_ref"
    assert_file_has_content err "/usr/share/man/man1 is excluded but /usr/share/man/man1/docs.1.gz (package docs) is not"
    assert_not_has_file "$REPO/refs/heads/try"
    mkdir -p ref2/var/lib/dpkg/info ref2/var/lib/dpkg/updates && touch ref2/var/lib/dpkg/status
    ! dpkg --root="$W/ref2" --log=/dev/null --force-script-chrootless --force-not-root \
        --path-exclude=/usr/share/man/man1 --unpack "$D"/pool/main/docs_1.0_amd64.deb > dpkg.out 2>&1 \
        || fail "dpkg unpacked it"
    assert_file_has_content dpkg.out "man1/docs.1.gz"
'

test_expect_success 'stage1 decides on the path a package ships (/bin/x under merged /usr), and sets no excluded file aside' '
    cd "$W"
    rm -rf alpha beta && mkdir -p alpha/bin alpha/usr/share/man/man1 beta/usr/share/man/man1
    echo tool > alpha/bin/alpha-tool && chmod 755 alpha/bin/alpha-tool
    echo one > alpha/usr/share/man/man1/same.1
    echo two > beta/usr/share/man/man1/same.1
    a2o --repo "$REPO" unpack-deb --merged-usr --ref try/alpha "$(make_deb alpha alpha 1.0 amd64)" > /dev/null
    a2o --repo "$REPO" unpack-deb --merged-usr --ref try/beta "$(make_deb beta beta 1.0 amd64)" > /dev/null
    a2o --repo "$REPO" stage1 --ref try/plain --arch amd64 try/alpha try/beta > /dev/null
    ls_tree "$REPO" try/plain > plain.list
    assert_file_has_content plain.list " /var/lib/apt2ostree/set-aside/beta/usr/share/man/man1/same.1\$"
    a2o --repo "$REPO" stage1 --ref try/slim --arch amd64 --path-filter "path-exclude=/bin/alpha-*" \
        --path-filter "path-exclude=/usr/share/man/*" try/alpha try/beta > /dev/null
    ls_tree "$REPO" try/slim > slim.list
    assert_not_file_has_content slim.list " /usr/bin/alpha-tool\$"
    assert_not_file_has_content slim.list "same.1"
    assert_not_file_has_content slim.list "/var/lib/apt2ostree"
    ostree --repo="$REPO" cat "$(rev_commit "$REPO" try/slim)" /var/lib/dpkg/info/alpha.list > alpha.list
    assert_file_has_content alpha.list "^/bin/alpha-tool\$"
    a2o --repo "$REPO" stage1 --ref try/usr --arch amd64 --path-filter "path-exclude=/usr/bin/*" \
        try/alpha > /dev/null
    ls_tree "$REPO" try/usr > usr.list
    assert_file_has_content usr.list " /usr/bin/alpha-tool\$"
    expect_failure err a2o --repo "$REPO" stage1 --ref try/bad --arch amd64 --path-filter "exclude=/x" try/alpha
    assert_file_has_content err "path-filter \"exclude=/x\" is not \"path-exclude=GLOB\" or \"path-include=GLOB\""
'

test_done
