# libdifferential.sh — stage 1 against dpkg itself: the reference made by
# the real "dpkg --unpack" of the same .debs in the same order, and the
# comparison of the two trees.  Source it after libtest.sh.
#
#   unpack_reference REF LOCKFILE CACHE   # dpkg --unpack in a chroot at REF
#   assert_same_unpacked REF OURS         # files and dpkg database alike
#
# What may differ is listed, with the reason, in
# tests/dpkg-unpack-differences.txt (read by compare-trees.py) and in the
# man page's DIFFERENCES FROM MMDEBSTRAP.

# install_order LOCKFILE: "NAME SHA256" of each package, in the lockfile's
# install order (what stage 1 and stage 2 follow).
install_order () {
    python3 - "$1" <<'EOF'
import json, sys
lock = json.load(open(sys.argv[1]))
by_name = {}
for p in lock["packages"]:
    by_name.setdefault(p["name"], p)
    by_name[p["name"] + ":" + p["architecture"]] = p
for name in lock["install-order"]:
    print(by_name[name]["name"], by_name[name]["sha256"])
EOF
}

# merged_usr_root ROOT: an empty root with the merged-/usr links stage 1
# makes, and an empty dpkg database.
merged_usr_root () {
    local root=$1 d
    mkdir -p "$root/usr" "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
    for d in bin sbin lib lib64; do
        mkdir -p "$root/usr/$d"
        ln -s "usr/$d" "$root/$d"
    done
    : > "$root/var/lib/dpkg/status"
    : > "$root/var/lib/dpkg/available"
}

# unpack_reference REF LOCKFILE CACHE: REF is what "dpkg --unpack" of the
# lockfile's .debs (CACHE/SHA256), in its install order, makes in a chroot
# (bubblewrap with /dev and /proc), preinsts and all.  As mmdebstrap does
# for the essential set, the files are first extracted (tar, in the same
# order, a directory keeping the metadata of the first package that ships
# it, as dpkg does) so that dpkg and the preinsts can run there; dpkg then
# unpacks every package over them and records it.
unpack_reference () {
    local ref=$1 lock=$2 cache=$3 name sha
    merged_usr_root "$ref"
    install_order "$lock" > "$ref.order"
    while read -r name sha; do
        dpkg-deb --fsys-tarfile "$cache/$sha" \
            | tar -C "$ref" --keep-directory-symlink --no-overwrite-dir -xpf - \
            || { echo "cannot extract $name ($cache/$sha)" >&2; return 1; }
    done < "$ref.order"
    bwrap --bind "$ref" / --dev /dev --proc /proc --tmpfs /tmp --ro-bind "$cache" /tmp/debs \
        --setenv PATH /usr/sbin:/usr/bin:/sbin:/bin --setenv LC_ALL C.UTF-8 \
        --setenv DEBIAN_FRONTEND noninteractive \
        dpkg --force-depends --unpack $(awk '{ print "/tmp/debs/" $2 }' "$ref.order") \
        > "$ref.unpack.log" 2>&1 || { tail -n 30 "$ref.unpack.log" >&2; return 1; }
}

# dpkg_new_in_place ROOT: each conffile dpkg left as FILE.dpkg-new (what it
# does until it configures the package) moved to FILE, where stage 1 has it.
dpkg_new_in_place () {
    find "$1" -name '*.dpkg-new' -print0 | while IFS= read -r -d '' f; do
        mv "$f" "${f%.dpkg-new}"
    done
}

# assert_same_unpacked_files REF OURS: the same paths, types, modes, owners,
# contents and link targets, but for tests/dpkg-unpack-differences.txt.
assert_same_unpacked_files () {
    python3 "$TOP_SRCDIR/tests/compare-trees.py" "$1" "$2" \
        --expected "$TOP_SRCDIR/tests/dpkg-unpack-differences.txt" > "$1.compare" \
        || { cat "$1.compare"; return 1; }
    cat "$1.compare"
}

# unpacked_status REF: REF's status file as stage 1 writes it: a conffile's
# "newconffile" is its md5sum (stage 1 records it, as dpkg does once it has
# configured the package), and no last blank line.
unpacked_status () {
    awk -v root="$1" '
        / newconffile$/ { cmd = "md5sum < \"" root $1 "\""; cmd | getline sum; close(cmd)
                          sub(/ .*/, "", sum); print " " $1 " " sum; next }
        { print }' "$1/var/lib/dpkg/status" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
}

# status_stanzas_sorted FILE: the stanzas of a status file, each on one
# line (fields joined by ^A), sorted: the same stanzas in any order.
status_stanzas_sorted () {
    awk 'BEGIN { RS = ""; FS = "\n" } { gsub(/\n/, "\001"); print }' "$1" | LC_ALL=C sort
}

# assert_diversions_by_preinsts REF: each diversion dpkg --unpack left in
# REF was made by its package's preinst (which runs in stage 2, so stage
# 1's diversions file is empty).
assert_diversions_by_preinsts () {
    local from to pkg
    [ -s "$1/var/lib/dpkg/diversions" ] || return 0
    paste - - - < "$1/var/lib/dpkg/diversions" | while IFS=$'\t' read -r from to pkg; do
        cat "$1/var/lib/dpkg/info/$pkg.preinst" "$1/var/lib/dpkg/info/$pkg":*.preinst 2>/dev/null \
            | grep -q dpkg-divert || { echo "$from: diverted by $pkg, not by its preinst"; return 1; }
    done
}

# assert_same_unpacked_database REF OURS: every info file byte for byte
# (dpkg's empty md5sums of a package with no regular file aside), the
# same status stanzas (unpacked_status; their order is
# assert_same_status_order's), the same statoverrides; no diversions but
# preinsts' (assert_diversions_by_preinsts).
assert_same_unpacked_database () {
    local ref=$1 ours=$2 f
    diff <(cd "$ref/var/lib/dpkg/info" && ls | while read -r f; do
               [ "${f##*.}" = md5sums ] && [ ! -s "$f" ] && [ ! -e "$ours/var/lib/dpkg/info/$f" ] || echo "$f"
           done) <(ls "$ours/var/lib/dpkg/info") || return 1
    for f in "$ours"/var/lib/dpkg/info/*; do
        cmp "$ref/var/lib/dpkg/info/${f##*/}" "$f" || return 1
    done
    unpacked_status "$ref" > "$ref.status"
    diff -U0 <(status_stanzas_sorted "$ref.status") <(status_stanzas_sorted "$ours/var/lib/dpkg/status") \
        > "$ref.status.diff" || { tr '\001' '\n' < "$ref.status.diff"; return 1; }
    [ ! -s "$ours/var/lib/dpkg/diversions" ] || { echo "stage 1 made diversions"; return 1; }
    assert_diversions_by_preinsts "$ref" || return 1
    diff <(sort "$ref/var/lib/dpkg/statoverride" 2>/dev/null) <(sort "$ours/var/lib/dpkg/statoverride")
}

# assert_same_unpacked REF OURS: the whole comparison, REF's FILE.dpkg-new
# moved in place first.
assert_same_unpacked () {
    dpkg_new_in_place "$1"
    assert_same_unpacked_files "$1" "$2" && assert_same_unpacked_database "$1" "$2"
}

# assert_same_status_order REF OURS: the status file's stanzas in dpkg's
# order (by package name, then architecture), byte for byte but for
# unpacked_status's differences.
assert_same_status_order () {
    unpacked_status "$1" | diff -u - "$2/var/lib/dpkg/status"
}
