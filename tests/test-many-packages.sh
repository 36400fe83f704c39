#!/bin/bash
# An image of 5,000 packages (more than a desktop or a CUDA image holds),
# hermetic: the real Debian bookworm base plus tiny packages made here,
# signed and served on 127.0.0.1.  Its lockfile generates, builds and
# configures: no command an edge runs grows with the number of packages
# (Linux refuses one argument over 128 KiB, about 1,270 package refs on
# one command line; stage 1 reads its list from a response file).
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2

N=5000
base_archive
# Every 1,000th package has a postinst, which writes /var/lib/many/NAME.
make_tiny_debs "$D/pool/main" many "$N" amd64 1000
repo_dists "$D" bookworm amd64
repo_sign "$D" bookworm archive
serve_work_dir "$SRV"

test_expect_success 'the tiny packages are .debs dpkg-deb reads, and the archive indexes all of them' '
    for name in many-00001 many-01000 many-05000; do
        dpkg-deb --field "$D/pool/main/${name}_1.0_amd64.deb" Package > field
        assert_streq "$(cat field)" "$name"
        dpkg-deb --contents "$D/pool/main/${name}_1.0_amd64.deb" > contents
        assert_file_has_content contents " \./usr/share/many/$name\$"
    done
    dpkg-deb --ctrl-tarfile "$D/pool/main/many-01000_1.0_amd64.deb" | tar -t > control
    assert_file_has_content control "^\./postinst\$"
    assert_streq "$(grep -c "^Package: many-" "$D/dists/bookworm/main/binary-amd64/Packages")" "$N"
'

# in_image PATH: the file PATH of the image "many".
in_image () { ostree --repo=build/ostree cat "$(rev_commit build/ostree many)" "$1"; }

test_expect_success 'a lockfile of 5,000 packages builds: every package is installed and configured (ii), its postinst run' '
    cd "$W"
    base_lock many $(seq -f "many-%05g" 1 "$N")
    n=$(grep -c "\"sha256\": " many.lock.json)
    [ "$n" -gt "$N" ]
    a2o build many.lock.json > build.out 2>&1 || { tail -n 20 build.out; false; }
    mkdir -p db && in_image /var/lib/dpkg/status > db/status
    dpkg-query --admindir=db -W -f="\${db:Status-Abbrev}\${Package}\n" > states
    assert_streq "$(wc -l < states)" "$n"
    assert_streq "$(grep -c "^ii " states)" "$n"
    assert_streq "$(grep -c "^ii many-[0-9]*\$" states)" "$N"
    assert_streq "$(in_image /usr/share/many/many-04321)" many-04321
    for i in 01000 02000 03000 04000 05000; do
        assert_streq "$(in_image /var/lib/many/many-$i)" "many-$i"
    done
'

test_expect_success 'no command of the Ninja file grows with the packages: stage 1 reads them from a response file, which ninja removes after' '
    cd "$W"
    ninja -f build/many.ninja -t commands many > commands
    [ "$(wc -l < commands)" -gt "$N" ]
    awk "length > 4096 { print NR \": \" length \" bytes\"; bad = 1 } END { exit bad }" commands
    grep -q "stage1 .*--packages-from " commands
    assert_streq "$(find build/ostree -maxdepth 1 -name "*.packages" | wc -l)" 0
'

test_expect_success 'a second build of the 5,000 packages does no work' '
    cd "$W"
    a2o build many.lock.json > again.out 2>&1 || { tail -n 20 again.out; false; }
    assert_file_has_content again.out "ninja: no work to do"
'

test_done
