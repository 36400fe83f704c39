#!/bin/bash
# sbom: the bill of materials of a built image (a ref) and of its lockfile,
# as SPDX 2.3 and CycloneDX 1.5 JSON: every locked package with its version,
# architecture, source package, purl and .deb SHA256, and the licenses of
# its machine-readable copyright file.  The CycloneDX document is checked by
# CycloneDX's own validator and its license expressions by an SPDX
# expression parser (pinned npm packages, installed into a cache).
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2
command -v jq > /dev/null || skip_all "jq is not installed (tools/setup installs it)"

base_archive

# A package with a machine-readable copyright (two licenses, one SPDX does
# not know, with its text in a stand-alone stanza), built from a source
# package of another name and version; one without a copyright file.
S="$SCRATCH/stage/licensed"
mkdir -p "$S/usr/share/doc/licensed"
echo licensed > "$S/usr/share/doc/licensed/README"
cat > "$S/usr/share/doc/licensed/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: licensed

Files: *
Copyright: 2020 Somebody
License: GPL-2+ or Artistic

Files: debian/*
Copyright: 2021 Someone Else
License: Expat

Files: contrib/*
Copyright: 2022 A Vendor
License: Vendor-Special

License: Vendor-Special
 You may use this software on Tuesdays.
EOF
( cd "$D/pool/main" && mv "$(make_deb "$S" licensed 1:2.0+dfsg-1 amd64 "Priority: optional" \
    "Source: licensed-src (1:2.0+dfsg-0.1)")" licensed_2.0+dfsg-1_amd64.deb )  # no epoch, as in Debian's pool
mkdir -p "$SCRATCH/stage/plain/usr/share/plain"
echo plain > "$SCRATCH/stage/plain/usr/share/plain/file"
( cd "$D/pool/main" && make_deb "$SCRATCH/stage/plain" plain 1.0 amd64 "Priority: optional" ) > /dev/null
repo_publish "$D" bookworm amd64 archive
repo_serve "$SRV"

W="$SCRATCH/work"
mkdir -p "$W/debs" "$SCRATCH/stage/mine/usr/share/mine"
cd "$W"
# A local .deb (a line of the package list names it), which depends on an archive's package.
echo mine > "$SCRATCH/stage/mine/usr/share/mine/file"
( cd debs && mv "$(make_deb "$SCRATCH/stage/mine" mine 1.0 amd64 "Priority: optional" "Depends: plain")" \
    mine_1.0_amd64.deb )
repo_sources_line "$HTTPD_URL/debian" bookworm archive > sources.list
base_image image licensed plain ./debs/mine_1.0_amd64.deb
REPO="$W/build/ostree"

# The locked packages as "NAME ARCH VERSION SHA256" lines.
sed -n 's/.*{"name": "\([^"]*\)", "version": "\([^"]*\)", "architecture": "\([^"]*\)",.*"sha256": "\([0-9a-f]*\)".*/\1 \3 \2 \4/p' \
    image.lock.json | sort > locked

test_expect_success 'sbom REF (SPDX): the image commit is the artifact described, every locked package with its SHA256' '
    cd "$W"
    a2o --repo "$REPO" sbom image --lockfile image.lock.json -o image.spdx.json
    commit=$(cat "$REPO/refs/heads/image")
    assert_streq "$(jq -r .spdxVersion image.spdx.json)" SPDX-2.3
    assert_streq "$(jq -r ".packages[0].versionInfo" image.spdx.json)" "$commit"
    assert_streq "$(jq -r ".packages[0].checksums[0].checksumValue" image.spdx.json)" "$commit"
    assert_streq "$(jq -r ".relationships[0].relationshipType" image.spdx.json)" DESCRIBES
    jq -r ".packages[1:][] | [.name, (.externalRefs[0].referenceLocator | capture(\"arch=(?<a>.*)\").a), .versionInfo, .checksums[0].checksumValue] | join(\" \")" \
        image.spdx.json | sort > listed
    diff locked listed
    assert_streq "$(jq "[.relationships[] | select(.relationshipType != \"DEPENDS_ON\")] | length" image.spdx.json)" \
        "$(( $(wc -l < locked) + 1 ))"
'

# spdx_id NAME: the SPDX id of package NAME in image.spdx.json.
spdx_id () { jq -r ".packages[] | select(.name == \"$1\") | .SPDXID" image.spdx.json; }

test_expect_success 'a local .deb has no Debian purl and no download location; each package names its file and source, never a host; Depends become relationships' '
    cd "$W"
    jq -c ".packages[] | select(.name == \"mine\") | [.externalRefs[0].referenceLocator, .downloadLocation, .packageFileName]" \
        image.spdx.json > mine.json
    assert_streq "$(cat mine.json)" "[\"pkg:generic/mine@1.0?arch=amd64\",\"NONE\",\"debs/mine_1.0_amd64.deb\"]"
    jq -c ".packages[] | select(.name == \"plain\") | [.externalRefs[0].referenceLocator, .downloadLocation, .packageFileName, .comment]" \
        image.spdx.json > plain.json
    assert_streq "$(cat plain.json)" "[\"pkg:deb/debian/plain@1.0?arch=amd64\",\"NOASSERTION\",\"pool/main/plain_1.0_amd64.deb\",\"pool/main/plain_1.0_amd64.deb of the apt source \\\"bookworm\\\" named in the lockfile\"]"
    ! grep -q "127\.0\.0\.1\|http" <(jq ".packages" image.spdx.json) || fail "a host or URL in the packages"
    jq -r ".relationships[] | select(.relationshipType == \"DEPENDS_ON\") | .spdxElementId + \" \" + .relatedSpdxElement" \
        image.spdx.json > depends
    grep -qx "$(spdx_id mine) $(spdx_id plain)" depends
    grep -qx "$(spdx_id coreutils) $(spdx_id libc6)" depends     # Pre-Depends
    grep -qx "$(spdx_id diffutils) $(spdx_id libc6)" depends
    ! grep -q "^$(spdx_id plain) " depends || fail "plain depends on nothing"
    a2o --repo "$REPO" sbom image --lockfile image.lock.json --format cyclonedx -o deps.cdx.json
    assert_streq "$(jq -r ".dependencies[] | select(.ref == \"pkg:generic/mine@1.0?arch=amd64\") | .dependsOn | join(\" \")" deps.cdx.json)" \
        "pkg:deb/debian/plain@1.0?arch=amd64"
    assert_streq "$(jq -r ".components[] | select(.name == \"mine\") | .properties[] | select(.name == \"apt2ostree:local-deb\") | .value" deps.cdx.json)" true
'

test_expect_success 'the source package, the purl (percent-encoded epoch and +) and the licenses as SPDX expressions' '
    cd "$W"
    jq -c ".packages[] | select(.name == \"licensed\") | [.sourceInfo, .externalRefs[0].referenceLocator, .licenseDeclared]" \
        image.spdx.json > licensed.json
    cat licensed.json
    assert_streq "$(cat licensed.json)" "[\"built from the source package licensed-src 1:2.0+dfsg-0.1\",\"pkg:deb/debian/licensed@1%3A2.0%2Bdfsg-1?arch=amd64\",\"(GPL-2.0-or-later OR Artistic-1.0-Perl) AND LicenseRef-Vendor-Special AND MIT\"]"
    assert_streq "$(jq -r ".packages[] | select(.name == \"plain\") | .licenseDeclared" image.spdx.json)" NOASSERTION
    assert_streq "$(jq -r ".hasExtractedLicensingInfos[] | select(.licenseId == \"LicenseRef-Vendor-Special\") | .extractedText" image.spdx.json)" \
        "You may use this software on Tuesdays."
'

test_expect_success 'deterministic: the same ref gives the same bytes, dated by the commit, not the clock' '
    cd "$W"
    a2o --repo "$REPO" sbom image --lockfile image.lock.json > again.spdx.json
    cmp image.spdx.json again.spdx.json
    ts=$(ostree --repo="$REPO" show image | sed -n "s/^Date: *//p")
    assert_streq "$(jq -r .creationInfo.created image.spdx.json)" "$(date -u -d "$ts" +%Y-%m-%dT%H:%M:%SZ)"
'

test_expect_success 'sbom LOCKFILE (CycloneDX) lists the same packages, hashes and licenses as the image' '
    cd "$W"
    a2o --repo "$REPO" sbom image.lock.json --format cyclonedx -o lock.cdx.json
    assert_streq "$(jq -r .specVersion lock.cdx.json)" 1.5
    jq -r ".components[] | [.name, (.properties[] | select(.name == \"apt2ostree:architecture\") | .value), .version, .hashes[0].content] | join(\" \")" \
        lock.cdx.json | sort > listed-cdx
    diff locked listed-cdx
    a2o --repo "$REPO" sbom image --lockfile image.lock.json --format cyclonedx -o image.cdx.json
    diff <(jq ".components" lock.cdx.json) <(jq ".components" image.cdx.json)
    assert_streq "$(jq -r ".metadata.component.hashes[0].content" image.cdx.json)" "$(cat "$REPO/refs/heads/image")"
    assert_streq "$(jq -r ".metadata.component.hashes[0].content" lock.cdx.json)" "$(sha256sum < image.lock.json | cut -d" " -f1)"
'

test_expect_success 'build --sbom FILE writes the image'"'"'s SPDX document with the image, and keeps it current' '
    cd "$W"
    a2o build image.lock.json --sbom built.spdx.json > /dev/null
    cmp built.spdx.json image.spdx.json
    a2o build image.lock.json --sbom built.spdx.json > again.out
    assert_file_has_content again.out "no work to do"
    expect_failure err a2o build image.lock.json image.lock.json=other --sbom two.json
    assert_file_has_content err "sbom FILE goes with one lockfile"
'

test_expect_success 'build --sbom DIR/ writes one document per image, DIR/IMAGE.spdx.json' '
    cd "$W"
    a2o build image.lock.json image.lock.json=more/other --sbom boms/ > several.out
    cmp boms/image.spdx.json image.spdx.json
    a2o --repo "$REPO" sbom more/other --lockfile image.lock.json -o other.spdx.json
    cmp boms/more/other.spdx.json other.spdx.json
    assert_file_has_content boms/more/other.spdx.json "$(cat "$REPO/refs/heads/more/other")"
    a2o build image.lock.json image.lock.json=more/other --sbom boms/ > several-again.out
    assert_file_has_content several-again.out "no work to do"
'

NPM_CACHE=/var/cache/apt2ostree-tests/npm
mkdir -p "$NPM_CACHE" 2>/dev/null && [ -w "$NPM_CACHE" ] || NPM_CACHE="${TMPDIR:-/tmp}/apt2ostree-tests/npm"
# validator_ready: the validator is installed, or npm_problem says why not
# (npm's own error code, such as a certificate the machine does not trust).
npm_problem="npm is not installed"
validator_ready () {
    [ -d "$NPM_CACHE/node_modules/@cyclonedx/cyclonedx-library" ] && return 0
    command -v npm > /dev/null || return 1
    mkdir -p "$NPM_CACHE"
    (cd "$NPM_CACHE" && npm install --no-audit --no-fund --loglevel=error @cyclonedx/cyclonedx-library@10.3.0 \
        ajv@8.17.1 ajv-formats@3.0.1 ajv-formats-draft2019@1.6.1 spdx-expression-parse@4.0.0) \
        > "$SCRATCH/npm.log" 2>&1 && return 0
    cat "$SCRATCH/npm.log" >&2
    npm_problem="npm cannot install it: $(grep -m 1 -E '^npm (ERR!|error) code' "$SCRATCH/npm.log" \
        | sed 's/^npm [^ ]* //')"
    return 1
}
if validator_ready; then
    test_expect_success 'CycloneDX'"'"'s own validator accepts both documents, license expressions included' '
        cd "$W"
        NODE_PATH="$NPM_CACHE/node_modules" node "$TOP_SRCDIR/tests/validate-cyclonedx.js" lock.cdx.json
        NODE_PATH="$NPM_CACHE/node_modules" node "$TOP_SRCDIR/tests/validate-cyclonedx.js" image.cdx.json
    '
else
    test_skip 'CycloneDX'"'"'s own validator accepts both documents' "$npm_problem"
fi

test_expect_success 'bad input: an unknown ref, a lockfile not built, a wrong --format; -o is left untouched' '
    cd "$W"
    echo keep > out.json
    expect_failure err a2o --repo "$REPO" sbom no-such-ref -o out.json
    assert_file_has_content err "no-such-ref"
    python3 - image.lock.json other.lock.json <<PY
import re, sys
s = open(sys.argv[1]).read()
s = re.sub(r"(\{\"name\": \"plain\".*?\"sha256\": \")[0-9a-f]{64}", lambda m: m.group(1) + "0" * 64, s)
open(sys.argv[2], "w").write(s)
PY
    expect_failure err a2o --repo "$REPO" sbom other.lock.json -o out.json
    assert_file_has_content err "package \"plain\" 1.0 has no tree"
    assert_file_has_content err "build the lockfile first"
    expect_failure err a2o --repo "$REPO" sbom image --format xml -o out.json
    assert_file_has_content err "format must be"
    assert_streq "$(cat out.json)" keep
'

test_done
