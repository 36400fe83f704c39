#!/bin/bash
# Untrusted input is data, never code: lockfiles (they arrive in pull
# requests), sources files, package lists and options.  Each hostile value is
# a non-zero exit and one line naming the file, the field and the package; no
# command it carries runs; nothing is written.
. "$TOP_SRCDIR/tests/libtest.sh"

# Where an injected command would leave its mark (under /tmp as a rule).
MARK=$SCRATCH/pwned

# write_lock FILE [KEY.PATH=JSON]...: a valid lockfile of one package from
# the source "main", with each KEY.PATH (e.g. packages.0.version) set to
# JSON; "MARK" in JSON stands for $MARK.
write_lock () {
    python3 - "$MARK" "$@" <<'PY'
import json, sys
mark, out = sys.argv[1], sys.argv[2]
lock = {
  "format": 1,
  "request": {"packages": ["hello"], "variant": None, "architecture": "amd64",
              "recommends": False, "sources": ["main"], "sources-file": "sources.list",
              "merged-usr": "auto"},
  "merged-usr": True,
  "sources": [{"name": "main", "suite": "bookworm", "codename": "bookworm", "origin": "Debian",
               "version": "12.5", "components": ["main"], "architectures": ["amd64"],
               "pin-priority": 500, "fingerprint": "4D64FEC119C2029067D6E791F8D2585B8783D481",
               "inrelease-sha256": "0" * 64, "date": "Sat, 10 Feb 2024 10:00:00 UTC"}],
  "packages": [{"name": "hello", "version": "2.10-3", "architecture": "amd64", "source": "main",
                "essential": False, "priority": "optional", "multi-arch": None, "size": 1000,
                "sha256": "0" * 64, "filename": "pool/main/h/hello/hello_2.10-3_amd64.deb"}],
  "install-order": ["hello"],
}
for arg in sys.argv[3:]:
    path, value = arg.split("=", 1)
    keys = path.split(".")
    node = lock
    for k in keys[:-1]:
        node = node[int(k)] if isinstance(node, list) else node[k]
    node[keys[-1]] = json.loads(value.replace("MARK", mark))
with open(out, "w") as f:
    json.dump(lock, f, indent=1)
PY
}

# A sources file naming "main" (nothing listens there: nothing is fetched).
write_sources () {
    echo "deb [name=main] http://127.0.0.1:9/debian bookworm main" > sources.list
}

# refuse FRAGMENT CMD...: CMD fails with one line holding FRAGMENT, runs no
# injected command, and leaves the directory (repository, refs, build
# directory, Ninja files) as it was.
refuse () {
    local fragment=$1; shift
    find . -path ./err -prune -o -print | sort > ../before
    (cd repo && find . -type f -exec sha256sum {} + | sort) > ../repo-before
    expect_failure err "$@"
    assert_one_line err
    assert_file_has_content err "$fragment"
    assert_not_has_file "$MARK"
    find . -path ./err -prune -o -print | sort | diff ../before -
    (cd repo && find . -type f -exec sha256sum {} + | sort) | diff ../repo-before -
}

# A repository with a ref in it, which no refused command may touch.
setup () {
    write_sources
    mkdir tree && echo data > tree/file
    new_repo repo && commit_dir repo keep tree && rm -r tree
}

test_expect_success 'a newline in a locked version cannot add a command to the Ninja file: build refuses the lockfile and runs nothing' '
    setup
    write_lock img.lock.json "packages.0.version=\"3.23+nmu1\\n  command = touch MARK #\""
    refuse "lockfile img.lock.json: package \"hello\": \"version\"" \
        a2o --repo repo build img.lock.json --builddir b
    assert_not_has_file b
'

# FIELD<TAB>JSON<TAB>what the error says (after the lockfile's name).
LOCK_ROWS='packages.0.name	"a/b"	package 1: "name" ("a/b")
packages.0.name	"hello\n  command = touch MARK #"	package 1: "name"
packages.0.version	"1.0 $(touch MARK)"	package "hello": "version" .* contains a space
packages.0.version	"1.0;touch${IFS}MARK"	package "hello": "version"
packages.0.architecture	"amd64/../x"	package "hello": "architecture"
packages.0.source	"main\nx"	package "hello": "source"
packages.0.filename	"../../etc/shadow"	package "hello": "filename" .* ".." path component
packages.0.filename	"/etc/shadow"	package "hello": "filename" .* starts with "/"
packages.0.filename	"pool//hello.deb"	package "hello": "filename" .* empty or "."
packages.0.filename	"pool/./hello.deb"	package "hello": "filename" .* empty or "."
packages.0.filename	"pool/he llo.deb"	package "hello": "filename"
packages.0.filename	"pool/hello.deb\n  command = touch MARK #"	package "hello": "filename" .* control character
packages.0.filename	"pool/$(touch MARK).deb"	package "hello": "filename"
packages.0.sha256	"00"	package "hello": "sha256"
packages.0.sha256	"ABCDEF0000000000000000000000000000000000000000000000000000000000"	package "hello": "sha256"
packages.0.size	-5	package "hello": "size" ("-5") is not a number of bytes
packages.0.size	"1000"	package "hello": "size"
packages.0.multi-arch	"sometimes"	package "hello": "multi-arch"
packages.0.priority	"a b"	package "hello": "priority"
install-order	["hello", "hello"]	install-order names "hello" twice
install-order	["hello\n  command = touch MARK"]	install-order names "hello\\n  command
install-order	[""]	install-order names "", which is not among its packages
request.packages	["hello$(touch MARK)"]	request: "packages"
request.architecture	"AMD64"	request: "architecture"
request.variant	"min base"	request: "variant"
request.sources	["main\n"]	request: "sources"
request.sources-file	"x\ny"	request: "sources-file"
request.merged-usr	"maybe"	request: "merged-usr"
request.suite	"trixie\n  command = touch MARK"	request: "suite"
request.suite	"../../x"	request: "suite"
sources.0.name	"ma in"	source 1: "name"
sources.0.suite	"../../x"	source 1: "suite"
sources.0.codename	"a\nb"	source 1: "codename"
sources.0.components	["main/../.."]	source 1: "components"
sources.0.architectures	["amd64 i386"]	source 1: "architectures"
sources.0.fingerprint	"XYZ"	source 1: "fingerprint"
sources.0.inrelease-sha256	"00"	source 1: "inrelease-sha256"
sources.0.date	"Sat\n  command = touch MARK #"	source 1: "date"
sources.0.origin	"Debian\n"	source 1: "origin"
sources.0.pin-priority	99999999999	source 1: "pin-priority" ("99999999999") is not from -10000 to 10000
sources.0.uri	"ftp://127.0.0.1/debian"	source 1: "uri" .* "ftp:"'

test_expect_success 'every lockfile field holds only what it may: one row per hostile value, a one-line error naming the field and the package, nothing run or written' '
    setup
    write_lock good.lock.json
    a2o --repo repo ninja good.lock.json -o good.ninja --builddir b > /dev/null
    rm good.ninja
    while IFS="	" read -r field value fragment; do
        echo "# $field = $value"
        write_lock bad.lock.json "$field=$value"
        refuse "lockfile bad.lock.json: $fragment" a2o --repo repo build bad.lock.json --builddir b
        refuse "lockfile bad.lock.json: $fragment" a2o --repo repo ninja bad.lock.json -o x.ninja
    done <<< "$LOCK_ROWS"
'

test_expect_success 'values special to Ninja and the shell reach each command as the very words given: a builddir with " $:`'"'"'" and a version with ":~+"' '
    write_sources
    write_lock img.lock.json "packages.0.version=\"1:2.0~rc1+b1-1\"" \
        "packages.0.filename=\"pool/main/h/hello/hello_2.0~rc1+b1-1_amd64.deb\""
    bd="b \$x d:e'"'"'q\`touch $MARK\`"
    a2o ninja img.lock.json -o img.ninja --builddir "$bd" --configure-hook "echo \"\$HOME\" > /dev/null"
    # Each command as ninja would run it, with apt2ostree replaced by a
    # program that writes down the words it gets.
    printf "#!/bin/sh\nfor a in \"\$@\"; do printf \"%%s\\\\n\" \"\$a\"; done >> %s\n" "$PWD/words" > printwords
    chmod +x printwords
    self=$(sed -n "s/^a2o = //p" img.ninja)
    ninja -f img.ninja -t commands img > commands
    [ "$(wc -l < commands)" -ge 4 ]
    while read -r line; do
        bash -c "${line//"$self"/$PWD/printwords}"
    done < commands
    assert_not_has_file "$MARK"
    grep -qxF -- "$bd/ostree" words
    grep -qxF -- "$bd/cache/debs" words
    grep -qxF -- "$bd/ostree/stage1-img.packages" words
    grep -qxF -- "http://127.0.0.1:9/debian/pool/main/h/hello/hello_2.0~rc1+b1-1_amd64.deb" words
    grep -qxF -- "echo \"\$HOME\" > /dev/null" words
'

# Sources files: one-line and deb822, each line a hostile value.
SOURCES_ROWS='bad.list	deb [name=ma$in] http://127.0.0.1:9/debian bookworm main	bad.list:1: name "ma$in"
bad.list	deb http://127.0.0.1:9/debian ../../etc main	bad.list:1: suite "../../etc"
bad.list	deb http://127.0.0.1:9/debian bookworm main/../..	bad.list:1: component "main/../.."
bad.list	deb [arch=AMD64] http://127.0.0.1:9/debian bookworm main	bad.list:1: architecture "AMD64"
bad.list	deb [name=main] ftp://127.0.0.1/debian bookworm main	source "main": URI "ftp://127.0.0.1/debian" has the scheme "ftp:".* http://, https:// and file://
bad.list	deb [name=main] gopher://127.0.0.1/debian bookworm main	"gopher:"
bad.list	deb http://127.0.0.1:9/debian book~worm main	the source name "book~worm"
bad.sources	Types: deb\nURIs: http://127.0.0.1:9/debian\nSuites: bookworm\nComponents: main\nX-Name: a b	bad.sources:1: name "a b"
bad.sources	Types: deb\nURIs: http://127.0.0.1:9/debian\nSuites: bookworm\nComponents: main\nSigned-By: /k.gpg\n /etc/x	bad.sources:1: Signed-By "/k.gpg\\n/etc/x"'

test_expect_success 'sources files: names, URIs and their schemes, suites, components, architectures and Signed-By paths are checked, each a one-line error naming the file' '
    setup
    echo hello > packages.txt
    while IFS="	" read -r file text fragment; do
        echo "# $file: $text"
        printf "%b\n" "$text" > "$file"
        refuse "$fragment" a2o lock packages.txt --arch amd64 --sources "$file" --cache cache -o out.lock.json
        rm "$file"
    done <<< "$SOURCES_ROWS"
'

test_expect_success 'package lists: each entry is NAME, NAME=VERSION or NAME:ARCH by Debian grammar, and comments are comments' '
    setup
    for entry in "hello\$(touch\${IFS}$MARK)" "hello=1.0;id" "hello:AMD64" "../hello" "hello=" "-rf"; do
        printf "# a comment\n%s # another\n" "$entry" > packages.txt
        refuse "package list packages.txt:2: " a2o lock packages.txt --arch amd64 --sources sources.list --cache cache
    done
'

# A stage-1 list of package trees (stage1 --packages-from, what the Ninja
# file's response file holds), as printf %b text<TAB>what the error says.
LIST_ROWS='keep\n../etc/shadow\n	list:2: "../etc/shadow" is not a valid ref name
keep deb/x/../../../etc	list:1: "deb/x/../../../etc" is not a valid ref name
\x01\x1b[2J\xffgarbage	list:1: "\\x01\\x1b\[2J\\xffgarbage" is not a valid ref name
keep\nkeep$(touch${IFS}MARK)	list:2: "keep$(touch${IFS}
keep\n\nkeep\r\n	list:3: "keep\\x0d" is not a valid ref name
keep\0keep	list:1: a NUL byte, which no ref name holds
 \n\t\n	list: lists no ref names'

test_expect_success 'stage-1 package-tree lists (stage1 --packages-from): each entry a ref name, else one line naming the file and the line; an empty list is refused' '
    setup
    : > list
    refuse ": list: lists no ref names\$" a2o --repo repo stage1 --ref img/stage1 --arch amd64 --packages-from list
    while IFS="	" read -r text fragment; do
        echo "# $text"
        printf "%b" "${text//MARK/$MARK}" > list
        refuse "$fragment" a2o --repo repo stage1 --ref img/stage1 --arch amd64 --packages-from list
    done <<< "$LIST_ROWS"
'

test_expect_success 'options: --mirror must name a source and a supported scheme, sizes and job counts are not negative, hooks are one line, trees a directory or a ref' '
    setup
    write_lock img.lock.json
    echo hello > packages.txt
    refuse "no source named \"nosuch\" in the lockfile img.lock.json, whose sources are \"main\"" \
        a2o --repo repo build img.lock.json --builddir b --mirror nosuch=http://127.0.0.1:9/x
    refuse "no source named \"nosuch\" in the sources being locked, whose sources are \"main\"" \
        a2o lock packages.txt --arch amd64 --sources sources.list --cache cache --mirror nosuch=http://127.0.0.1:9/x
    for uri in ftp://127.0.0.1/debian gopher://127.0.0.1/ file:/srv/mirror; do
        scheme=${uri%%:*}
        refuse "the URI has the scheme \"$scheme:\".* http://, https:// and file://" \
            a2o --repo repo build img.lock.json --builddir b --mirror "main=$uri"
        refuse "the URI has the scheme \"$scheme:\"" \
            a2o lock packages.txt --arch amd64 --sources sources.list --cache cache --mirror "main=$uri"
    done
    refuse "ftp://127.0.0.1/x.deb: the URL has the scheme \"ftp:\"" \
        a2o --repo repo unpack-deb --ref x ftp://127.0.0.1/x.deb
    refuse "--size -5 is not a number of bytes" a2o --repo repo unpack-deb --ref x --size -5 x.deb
    refuse "--size -1 is not a number of bytes" a2o --repo repo unpack-deb --ref x --size -1 x.deb
    refuse "--size" a2o --repo repo unpack-deb --ref x --size five x.deb
    refuse "--jobs -1" a2o --repo repo build img.lock.json --builddir b -j -1
    refuse "--download-jobs 0" a2o --repo repo build img.lock.json --builddir b --download-jobs 0
    refuse "--configure-hook \"echo a\\\\necho b\" contains a newline" \
        a2o --repo repo build img.lock.json --builddir b --configure-hook "$(printf "echo a\necho b")"
    refuse "--before-configure \"no such|dir\" is neither a directory nor a ref name" \
        a2o --repo repo build img.lock.json --builddir b --before-configure "no such|dir"
    refuse "--builddir \"b\\\\nc\" contains a control character" \
        a2o --repo repo build img.lock.json --builddir "$(printf "b\nc")"
    refuse "img.lock.json: \"b|c\" contains \"|\", which a path in a Ninja file cannot hold" \
        a2o --repo repo ninja img.lock.json -o x.ninja --builddir "b|c"
    refuse "--arch \"AMD64\"" a2o lock packages.txt --arch AMD64 --sources sources.list --cache cache
'

# An archive signed by a trusted key may still be hostile (a third party's,
# or a compromised one): what its index says reaches the lockfile.
. "$TOP_SRCDIR/tests/librepo.sh"
SRV="$SCRATCH/srv"
mkdir -p "$SRV"
repo_key archive
repo_serve "$SRV"

# hostile_repo NAME SED: a signed repository $SRV/NAME whose Packages index
# is edited by SED after it was made.
hostile_repo () {
    local root="$SRV/$1" bin="$SRV/$1/dists/bookworm/main/binary-amd64"
    repo_deb "$root" hello 1.0 amd64
    repo_dists "$root" bookworm amd64
    sed -i "$2" "$bin/Packages"
    gzip -9n < "$bin/Packages" > "$bin/Packages.gz"
    xz -9 < "$bin/Packages" > "$bin/Packages.xz"
    ( cd "$root" && apt-ftparchive -o APT::FTPArchive::Release::Suite=bookworm \
          -o APT::FTPArchive::Release::Codename=bookworm \
          -o APT::FTPArchive::Release::Architectures=amd64 \
          -o APT::FTPArchive::Release::Components=main -o APT::FTPArchive::Md5=false \
          -o APT::FTPArchive::SHA1=false -o APT::FTPArchive::SHA512=false \
          release dists/bookworm > "$SCRATCH/Release.$1" )
    mv "$SCRATCH/Release.$1" "$root/dists/bookworm/Release"
    repo_sign "$root" bookworm archive
}

test_expect_success 'lock writes no lockfile that build would refuse: a signed index whose Filename climbs out of the archive is a one-line error naming the package' '
    hostile_repo climb "s|^Filename: .*|Filename: pool/../../../../tmp/x.deb|"
    repo_sources_line "$HTTPD_URL/climb" bookworm archive > sources.list
    echo hello > packages.txt
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache -o out.lock.json
    assert_one_line err
    assert_file_has_content err "lockfile out.lock.json: package \"hello\": \"filename\" (\"pool/../../../../tmp/x.deb\") has a \"..\" path component; an archive"
    assert_not_has_file out.lock.json
'

test_done
