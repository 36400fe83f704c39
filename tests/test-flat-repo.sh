#!/bin/bash
# Flat repositories ("deb URI ./": InRelease, Release and Packages at the top,
# as NVIDIA's and many vendors' are), signed or marked [trusted=yes], and
# file: URIs, locked and built together with a signed archive served on
# 127.0.0.1.  An unsigned repository without trusted=yes is refused naming
# the source.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2

SRV="$SCRATCH/srv"
base_repo "$SRV/debian"
repo_key archive
repo_key vendor
mkdir -p "$SCRATCH/stage/hello/usr/share/hello"
echo "hello 1.0 (archive)" > "$SCRATCH/stage/hello/usr/share/hello/version"
( cd "$SRV/debian/pool/main" && make_deb "$SCRATCH/stage/hello" hello 1.0 amd64 "Priority: optional" ) > /dev/null
repo_publish "$SRV/debian" bookworm amd64 archive

# flat_deb DIR NAME VERSION [FIELD]...: a package built into DIR, a flat
# repository's top.
flat_deb () {
    local dir=$1 name=$2 version=$3
    shift 3
    local stage="$SCRATCH/stage/$name-$version"
    mkdir -p "$dir" "$stage/usr/share/$name"
    echo "$name $version (flat)" > "$stage/usr/share/$name/version"
    ( cd "$dir" && make_deb "$stage" "$name" "$version" amd64 "Priority: optional" "$@" ) > /dev/null
}

# flat_index DIR [KEY]: Packages{,.gz} and Release at DIR's top (Filenames
# "./NAME.deb", as apt-ftparchive writes them there), signed by KEY if given.
flat_index () {
    local dir=$1 key=${2:-}
    ( cd "$dir"
      apt-ftparchive packages . 2>/dev/null > Packages
      gzip -9n < Packages > Packages.gz
      apt-ftparchive -o APT::FTPArchive::Release::Origin=vendor \
          -o APT::FTPArchive::Md5=false -o APT::FTPArchive::SHA1=false \
          -o APT::FTPArchive::SHA512=false release . > "$SCRATCH/Release.flat"
      mv "$SCRATCH/Release.flat" Release
      rm -f InRelease Release.gpg )
    [ -z "$key" ] || repo_gpg "$key" --clearsign --output "$dir/InRelease" "$dir/Release"
}

# A signed flat repository (one package needs the archive's coreutils and one
# overrides an archive package by version), an unsigned one, and an arm64
# package in the signed one that an amd64 image must ignore.
flat_deb "$SRV/vendor/l4t_deb_packages" vendor-core 32.7.4 "Depends: coreutils"
flat_deb "$SRV/vendor/l4t_deb_packages" hello 2.0
mkdir -p "$SCRATCH/stage/vendor-arm/usr/share/vendor-arm"
( cd "$SRV/vendor/l4t_deb_packages" && make_deb "$SCRATCH/stage/vendor-arm" vendor-core 32.7.4 arm64 \
    "Priority: optional" ) > /dev/null
flat_index "$SRV/vendor/l4t_deb_packages" vendor
flat_deb "$SRV/ci" ci-tool 1.0 "Depends: vendor-core"
flat_index "$SRV/ci"
repo_serve "$SRV"

W="$SCRATCH/work"
mkdir -p "$W"
cd "$W"
printf '%s\n' $BASE_REQUEST vendor-core ci-tool hello > packages.txt

test_expect_success 'a signed flat repository and a trusted=yes one lock with the archive; one warning per trusted source' '
    cd "$W"
    {
        repo_sources_line "$HTTPD_URL/debian" bookworm archive
        echo "deb [signed-by=$SCRATCH/keys/vendor.gpg] $HTTPD_URL/vendor/l4t_deb_packages ./"
        echo "deb [trusted=yes name=ci] $HTTPD_URL/ci ./"
    } > sources.list
    a2o lock packages.txt --sources sources.list --variant custom --merged-usr yes \
        --cache cache -o flat.lock.json > out 2> err
    cat err
    assert_streq "$(grep -c warning err)" 1
    assert_file_has_content err "source \"ci\" is trusted=yes"
    grep "\"name\": \"l4t_deb_packages\", \"suite\": \"./\"" flat.lock.json
    grep "\"name\": \"ci\", .*\"fingerprint\": null, .*\"trusted\": true" flat.lock.json
    grep "\"name\": \"vendor-core\", \"version\": \"32.7.4\", \"architecture\": \"amd64\", \"source\": \"l4t_deb_packages\", .*\"filename\": \"vendor-core_32.7.4_amd64.deb\"" flat.lock.json
    grep "\"name\": \"hello\", \"version\": \"2.0\", \"architecture\": \"amd64\", \"source\": \"l4t_deb_packages\"" flat.lock.json
    assert_not_file_has_content flat.lock.json "$HTTPD_URL"
    assert_not_file_has_content flat.lock.json "127.0.0.1"
'

test_expect_success 'the lockfile reads back: lock --update with nothing changed leaves it byte for byte' '
    cd "$W"
    cp flat.lock.json before.json
    a2o lock --update flat.lock.json --cache cache > /dev/null 2> err
    cmp before.json flat.lock.json
'

test_expect_success 'the image builds from the flat repositories: every package ii, the override installed' '
    cd "$W"
    a2o build flat.lock.json --ref flat > build.out
    a2o --repo build/ostree export flat --dir img
    dpkg-query --admindir=img/var/lib/dpkg -W -f "\${Package} \${Version} \${db:Status-Abbrev}\n" \
        vendor-core ci-tool hello > st
    cat st
    assert_streq "$(cat st)" "ci-tool 1.0 ii 
hello 2.0 ii 
vendor-core 32.7.4 ii "
    assert_streq "$(cat img/usr/share/ci-tool/version)" "ci-tool 1.0 (flat)"
'

test_expect_success 'build --apt-sources writes the three sources, their keys and trusted=yes into the image'"'"'s /etc/apt' '
    cd "$W"
    a2o build flat.lock.json --ref flat-apt --apt-sources > /dev/null
    a2o --repo build/ostree export flat-apt --dir aptimg
    S=aptimg/etc/apt/sources.list.d/apt2ostree.sources
    cat $S
    assert_streq "$(grep -c "^Types: deb\$" $S)" 3
    assert_file_has_content $S "^URIs: $HTTPD_URL/vendor/l4t_deb_packages\$"
    assert_file_has_content $S "^Signed-By: /etc/apt/keyrings/l4t_deb_packages.gpg\$"
    cmp aptimg/etc/apt/keyrings/l4t_deb_packages.gpg "$SCRATCH/keys/vendor.gpg"
    grep -A6 "^X-Name: ci\$" $S | grep -q "^Trusted: yes\$"
    grep -A6 "^X-Name: ci\$" $S > ci.stanza
    assert_not_file_has_content ci.stanza "^Components:"
    assert_has_file img/usr/share/ci-tool/version
'

test_expect_success 'an unsigned flat repository without trusted=yes is refused, naming the source; no lockfile' '
    cd "$W"
    echo "deb [name=ci signed-by=$SCRATCH/keys/vendor.gpg] $HTTPD_URL/ci ./" > unsigned.list
    repo_sources_line "$HTTPD_URL/debian" bookworm archive >> unsigned.list
    expect_failure err a2o lock packages.txt --sources unsigned.list --variant custom --cache cache \
        -o unsigned.lock.json
    assert_streq "$(wc -l < err)" 1
    assert_file_has_content err "source \"ci\""
    assert_file_has_content err "trusted=yes"
    test ! -e unsigned.lock.json
'

test_expect_success 'a flat repository signed by another key than Signed-By names is refused' '
    cd "$W"
    echo "deb [signed-by=$SCRATCH/keys/archive.gpg name=vendor] $HTTPD_URL/vendor/l4t_deb_packages ./" > wrongkey.list
    expect_failure err a2o lock packages.txt --sources wrongkey.list --variant custom --cache cache \
        -o wrongkey.lock.json
    assert_file_has_content err "source \"vendor\""
    test ! -e wrongkey.lock.json
'

test_expect_success 'trusted=yes reads a clearsigned InRelease without checking its signature' '
    cd "$W"
    {
        repo_sources_line "$HTTPD_URL/debian" bookworm archive
        echo "deb [signed-by=$SCRATCH/keys/archive.gpg trusted=yes] $HTTPD_URL/vendor/l4t_deb_packages ./"
        echo "deb [trusted=yes name=ci] $HTTPD_URL/ci ./"
    } > trusted.list
    a2o lock packages.txt --sources trusted.list --variant custom --merged-usr yes \
        --cache cache -o trusted.lock.json > /dev/null 2> err
    assert_streq "$(grep -c warning err)" 2
    diff <(grep "\"sha256\": " flat.lock.json) <(grep "\"sha256\": " trusted.lock.json)
'

test_expect_success 'a file: URI to a flat directory locks like the served one; a flat suite with components is an error' '
    cd "$W"
    {
        repo_sources_line "$HTTPD_URL/debian" bookworm archive
        echo "deb [signed-by=$SCRATCH/keys/vendor.gpg] file://$SRV/vendor/l4t_deb_packages ./"
        echo "deb [trusted=yes name=ci] file://$SRV/ci ./"
    } > file.list
    a2o lock packages.txt --sources file.list --variant custom --merged-usr yes \
        --cache cache -o file.lock.json > /dev/null 2> err
    diff <(grep "\"sha256\": " flat.lock.json) <(grep "\"sha256\": " file.lock.json)
    echo "deb [trusted=yes] $HTTPD_URL/ci ./ main" > bad.list
    expect_failure err a2o lock packages.txt --sources bad.list --cache cache -o bad.lock.json
    assert_file_has_content err "bad.list:1: suite \"./\" is a flat repository"
'

test_expect_success 'a flat "./" source at a URI with no path needs a name, and the error says how' '
    cd "$W"
    echo "deb [trusted=yes] $HTTPD_URL/ ./" > noname.list
    expect_failure err a2o lock packages.txt --sources noname.list --cache cache -o noname.lock.json
    assert_file_has_content err "noname.list:1: the source name \"\" "
    assert_file_has_content err "\[name=NAME\]"
'

test_done
