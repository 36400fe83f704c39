# libdeb.sh — build hermetic .debs for the tests, and compare trees with
# what dpkg-deb -x makes.  Source it after libtest.sh.
#
#   mkdir -p stage/usr/bin && echo hi > stage/usr/bin/hi && chmod 755 stage/usr/bin/hi
#   deb=$(make_deb stage hello 1.0-1 amd64 "Depends: libc6" "Multi-Arch: foreign")
#
# make_deb writes DIR/DEBIAN/control (keeping any maintainer scripts,
# conffiles, triggers... already staged in DIR/DEBIAN), adds DIR/DEBIAN/md5sums
# when missing, and builds NAME_VERSION_ARCH.deb in the current directory
# with dpkg-deb.  Environment:
#   DEB_COMPRESSION   gzip | xz | zstd | none (dpkg-deb -Z; default xz)
#   DEB_KEEP_OWNERS   1: keep the staged files' owners (default: all root)

# make_deb DIR NAME VERSION ARCH [FIELD: VALUE]...: prints the .deb's path.
make_deb () {
    local dir=$1 name=$2 version=$3 arch=$4
    shift 4
    mkdir -p "$dir/DEBIAN"
    chmod 0755 "$dir/DEBIAN"
    {
        echo "Package: $name"
        echo "Version: $version"
        echo "Architecture: $arch"
        echo "Maintainer: apt2ostree tests <tests@example.invalid>"
        local field
        for field in "$@"; do
            printf '%s\n' "$field"
        done
        echo "Description: test package $name"
        echo " built by tests/libdeb.sh"
    } > "$dir/DEBIAN/control"
    if [ ! -e "$dir/DEBIAN/md5sums" ]; then
        (cd "$dir" && find . -path ./DEBIAN -prune -o -type f -print0 | LC_ALL=C sort -z \
            | xargs -0 -r md5sum | sed 's#  \./#  #') > "$dir/DEBIAN/md5sums.tmp"
        if [ -s "$dir/DEBIAN/md5sums.tmp" ]; then
            mv "$dir/DEBIAN/md5sums.tmp" "$dir/DEBIAN/md5sums"
        else
            rm -f "$dir/DEBIAN/md5sums.tmp"
        fi
    fi
    local s
    for s in preinst postinst prerm postrm config; do
        [ ! -e "$dir/DEBIAN/$s" ] || chmod 0755 "$dir/DEBIAN/$s"
    done
    local out="${name}_${version//:/%3a}_${arch}.deb"
    local owners=--root-owner-group
    [ "${DEB_KEEP_OWNERS:-}" != 1 ] || owners=
    dpkg-deb $owners -Z"${DEB_COMPRESSION:-xz}" --build "$dir" "$out" > /dev/null || return 1
    echo "$out"
}

# deb_ar OUT MEMBER...: an ar archive with debian-binary ("2.0") first and
# the given files as the next members, in order (for .debs dpkg-deb will
# not build: bzip2 or lzma members, hostile tar entries).
deb_ar () {
    local out=$1
    shift
    local tmp
    tmp=$(mktemp -d)
    echo 2.0 > "$tmp/debian-binary"
    local m
    for m in "$@"; do
        cp "$m" "$tmp/"
    done
    rm -f "$out"
    (cd "$tmp" && ar rcD out.deb debian-binary $(for m in "$@"; do basename "$m"; done)) || return 1
    mv "$tmp/out.deb" "$out"
    rm -rf "$tmp"
}

# deb_members DEB DIR: the .deb's ar members, extracted into DIR.
deb_members () {
    local deb
    deb=$(realpath "$1")
    mkdir -p "$2"
    (cd "$2" && ar x "$deb")
}

# recompress_deb DEB COMPRESSOR OUT: OUT is DEB with data.tar compressed
# by COMPRESSOR (gzip, xz, zstd, bzip2, lzma or none).
recompress_deb () {
    local deb=$1 comp=$2 out=$3
    local tmp
    tmp=$(mktemp -d)
    deb_members "$deb" "$tmp/m"
    local data
    data=$(ls "$tmp/m" | grep '^data\.tar')
    case "$data" in
        data.tar) cp "$tmp/m/$data" "$tmp/data.tar" ;;
        data.tar.gz) gzip -dc "$tmp/m/$data" > "$tmp/data.tar" ;;
        data.tar.xz) xz -dc "$tmp/m/$data" > "$tmp/data.tar" ;;
        data.tar.zst) zstd -q -dc "$tmp/m/$data" > "$tmp/data.tar" ;;
        *) echo "recompress_deb: unexpected member $data" >&2; return 1 ;;
    esac
    local member
    case "$comp" in
        none) member=data.tar; mv "$tmp/data.tar" "$tmp/$member" 2>/dev/null || true ;;
        gzip) member=data.tar.gz; gzip -n -c "$tmp/data.tar" > "$tmp/$member" ;;
        xz) member=data.tar.xz; xz -c "$tmp/data.tar" > "$tmp/$member" ;;
        zstd) member=data.tar.zst; zstd -q -c "$tmp/data.tar" > "$tmp/$member" ;;
        bzip2) member=data.tar.bz2; bzip2 -c "$tmp/data.tar" > "$tmp/$member" ;;
        lzma) member=data.tar.lzma; xz --format=lzma -c "$tmp/data.tar" > "$tmp/$member" ;;
        *) echo "recompress_deb: unknown compressor $comp" >&2; return 1 ;;
    esac
    local control
    control=$(ls "$tmp/m" | grep '^control\.tar')
    deb_ar "$out" "$tmp/m/$control" "$tmp/$member"
    rm -rf "$tmp"
}

# tar_from_spec OUT.tar SPEC: a tar written by Python's tarfile (pax format)
# from a spec, one entry a line, fields separated by "|":
#   f|PATH|MODE|CONTENT[|xattr=NAME=VALUE...]     regular file
#   d|PATH|MODE                                   directory
#   l|PATH|TARGET[|xattr=NAME=VALUE...]           symlink
#   h|PATH|TARGET                                 hard link
#   p|PATH|MODE                                   fifo
# Paths are written exactly as given (so "../x" and "/etc/x" can be made).
# With TAR_SPEC_ESCAPES=1, every field after the kind is a Python bytes
# escape ("\n", "\xff", "\\", "\x7c" for "|"), so names no shell line or
# dpkg-deb can carry are written as they are, and the tar is in GNU format
# (what dpkg reads) instead of pax.
tar_from_spec () {
    TAR_SPEC_ESCAPES=${TAR_SPEC_ESCAPES:-0} python3 - "$1" "$2" <<'EOF'
import io, os, sys, tarfile
out, spec = sys.argv[1], sys.argv[2]
escapes = os.environ["TAR_SPEC_ESCAPES"] == "1"
def field(x):
    if not escapes:
        return x
    return x.encode().decode("unicode_escape").encode("latin-1").decode("utf-8", "surrogateescape")
fmt = tarfile.GNU_FORMAT if escapes else tarfile.PAX_FORMAT
with tarfile.open(out, "w", format=fmt, encoding="utf-8", errors="surrogateescape") as t:
    for line in spec.splitlines():
        if not line.strip():
            continue
        f = line.split("|")
        f = f[:1] + [field(x) for x in f[1:]]
        kind, path = f[0], f[1]
        ti = tarfile.TarInfo(path)
        ti.mtime = 0
        ti.uname = ti.gname = "root"
        data = None
        if kind == "f":
            ti.mode = int(f[2], 8)
            data = f[3].encode("utf-8", "surrogateescape")
            ti.size = len(data)
            for extra in f[4:]:
                if extra.startswith("xattr="):
                    name, value = extra[len("xattr="):].split("=", 1)
                    ti.pax_headers["SCHILY.xattr." + name] = value
        elif kind == "d":
            ti.type, ti.mode = tarfile.DIRTYPE, int(f[2], 8)
        elif kind == "l":
            ti.type, ti.linkname, ti.mode = tarfile.SYMTYPE, f[2], 0o777
            for extra in f[3:]:
                if extra.startswith("xattr="):
                    name, value = extra[len("xattr="):].split("=", 1)
                    ti.pax_headers["SCHILY.xattr." + name] = value
        elif kind == "h":
            ti.type, ti.linkname, ti.mode = tarfile.LNKTYPE, f[2], 0o644
        elif kind == "p":
            ti.type, ti.mode = tarfile.FIFOTYPE, int(f[2], 8)
        else:
            raise SystemExit("tar_from_spec: unknown kind " + kind)
        t.addfile(ti, io.BytesIO(data) if data is not None else None)
EOF
}

# deb_from_spec OUT.deb NAME SPEC [COMPRESSOR]: a .deb whose data.tar is
# tar_from_spec SPEC (compressed with gzip by default) and whose control.tar
# holds a minimal control file for NAME 1.0 amd64.
deb_from_spec () {
    local out=$1 name=$2 spec=$3 comp=${4:-gzip}
    local tmp
    tmp=$(mktemp -d)
    mkdir "$tmp/control"
    printf 'Package: %s\nVersion: 1.0\nArchitecture: amd64\nMaintainer: tests <t@example.invalid>\nDescription: test\n' \
        "$name" > "$tmp/control/control"
    tar -C "$tmp/control" --owner=root --group=root -czf "$tmp/control.tar.gz" ./control
    tar_from_spec "$tmp/data.tar" "$spec"
    case "$comp" in
        gzip) gzip -n "$tmp/data.tar"; deb_ar "$out" "$tmp/control.tar.gz" "$tmp/data.tar.gz" ;;
        none) deb_ar "$out" "$tmp/control.tar.gz" "$tmp/data.tar" ;;
    esac
    rm -rf "$tmp"
}

# deb_from_specs OUT.deb CONTROL-SPEC DATA-SPEC: a .deb (debian-binary,
# control.tar.gz, data.tar.xz) whose two tars are TAR_SPEC_ESCAPES=1
# tar_from_spec of the specs: for hostile packages dpkg-deb will not build
# (a newline in a name, "Package: a/b", a control member "x.postinst").
#   deb_from_specs evil.deb 'f|./control|644|Package: evil\nVersion: 1\nArchitecture: all\n' \
#       'f|./usr/a\n/etc/shadow|644|x'
deb_from_specs () {
    local out=$1 control=$2 data=$3
    local tmp
    tmp=$(mktemp -d)
    TAR_SPEC_ESCAPES=1 tar_from_spec "$tmp/control.tar" "$control" || return 1
    TAR_SPEC_ESCAPES=1 tar_from_spec "$tmp/data.tar" "$data" || return 1
    gzip -n "$tmp/control.tar" && xz "$tmp/data.tar" || return 1
    deb_ar "$out" "$tmp/control.tar.gz" "$tmp/data.tar.xz"
    rm -rf "$tmp"
}

# dpkg_unpack ROOT DEB: what dpkg itself records for DEB, unpacked (not
# configured) into an empty ROOT.  Maintainer scripts run outside a chroot
# (they only echo).
dpkg_unpack () {
    mkdir -p "$1/var/lib/dpkg/info" "$1/var/lib/dpkg/updates" "$1/var/lib/dpkg/triggers"
    : > "$1/var/lib/dpkg/status"
    : > "$1/var/lib/dpkg/available"
    dpkg --root="$(realpath "$1")" --force-script-chrootless --force-depends --unpack "$2" > /dev/null
}

# merge_usr DIR: the merged-/usr rewrite applied to an extracted package:
# DIR/bin, sbin, lib, lib32, lib64, libx32 move into DIR/usr.
merge_usr () {
    local d
    for d in bin sbin lib lib32 lib64 libx32; do
        [ -d "$1/$d" ] && [ ! -L "$1/$d" ] || continue
        if [ ! -e "$1/usr" ]; then
            mkdir "$1/usr"
            chmod 0755 "$1/usr"
        fi
        if [ -e "$1/usr/$d" ]; then
            cp -a "$1/$d/." "$1/usr/$d/"
            rm -rf "$1/$d"
        else
            mv "$1/$d" "$1/usr/$d"
        fi
    done
}

# dir_listing DIR: every path below DIR with its type, mode (with
# setuid/setgid/sticky), owner, and symlink target or content sha256, one a
# line, sorted.  Device nodes, fifos and sockets are left out (OSTree
# cannot hold them).
dir_listing () {
    python3 - "$1" <<'EOF'
import hashlib, os, stat, sys
root = sys.argv[1]
out = []
def add(path, rel):
    st = os.lstat(path)
    m = st.st_mode
    if stat.S_ISDIR(m):
        what, extra = "d", ""
    elif stat.S_ISLNK(m):
        what, extra = "l", "-> " + os.readlink(path)
    elif stat.S_ISREG(m):
        with open(path, "rb") as f:
            what, extra = "f", hashlib.sha256(f.read()).hexdigest()
    else:
        return
    out.append("%s %s %04o %d:%d %s" % (rel, what, stat.S_IMODE(m), st.st_uid, st.st_gid, extra))
add(root, "/")
for dirpath, dirnames, filenames in os.walk(root):
    for n in dirnames + filenames:
        p = os.path.join(dirpath, n)
        add(p, "/" + os.path.relpath(p, root))
for line in sorted(out):
    print(line)
EOF
}

# checkout_deb_tree REPO REF DIR: the tree at REF, checked out into DIR
# without the dpkg metadata unpack-deb adds (var/lib/dpkg/info files, the
# status stanza, and the directories made only to hold them).
checkout_deb_tree () {
    local repo=$1 ref=$2 dir=$3
    local mode
    mode=$(sed -n 's/^mode=//p' "$repo/config")
    if [ "$mode" = bare ]; then
        ostree --repo="$repo" checkout "$ref" "$dir"
    else
        ostree --repo="$repo" checkout -U "$ref" "$dir"
    fi
    rm -rf "$dir/var/lib/apt2ostree"
    find "$dir/var/lib/dpkg/info" -maxdepth 1 -type f -delete 2>/dev/null || true
}

# compare_with_dpkg DEB REPO REF [--no-merged-usr]: the tree at REF equals
# dpkg-deb -x DEB (after the merged-/usr rewrite): paths, types, modes,
# owners, symlink targets and contents.  Directories that only hold the dpkg
# metadata are ignored when dpkg-deb -x does not make them.
compare_with_dpkg () {
    local deb=$1 repo=$2 ref=$3 merged=${4:-}
    local work
    work=$(mktemp -d "${SCRATCH:-/tmp}/cmp.XXXXXX")
    mkdir "$work/x"
    dpkg-deb -x "$deb" "$work/x"
    [ "$merged" = --no-merged-usr ] || merge_usr "$work/x"
    checkout_deb_tree "$repo" "$ref" "$work/t"
    dir_listing "$work/x" > "$work/x.list"
    dir_listing "$work/t" > "$work/t.list"
    local d
    for d in /var /var/lib /var/lib/dpkg /var/lib/dpkg/info; do
        grep -q "^$d d " "$work/x.list" || sed -i "\\#^$d d #d" "$work/t.list"
    done
    if ! diff -u "$work/x.list" "$work/t.list" > "$work/diff"; then
        echo "$deb: tree $ref differs from dpkg-deb -x (- dpkg, + tree):" >&2
        head -n 40 "$work/diff" >&2
        return 1
    fi
    chmod -R u+w "$work" 2>/dev/null
    rm -rf "$work"
}

# stage_everything DIR: the tree of the package with every kind of entry
# (setuid, setgid and sticky bits, private modes, numeric owners as root,
# symlinks, hard links across the merged-/usr rewrite, names longer than
# 100 characters, a fifo, a conffile, maintainer scripts).
long_dir=usr/share/very-long-directory-name-that-goes-on-and-on/and-on-and-on-beyond-the-hundred-character-limit
long_name=a-file-name-that-is-also-quite-long-to-need-pax-or-gnu-long-names.txt

stage_everything () {
    local s=$1
    mkdir -p "$s"/{bin,sbin,lib/x86_64-linux-gnu,lib64,usr/bin,usr/lib,etc/everything,tmp,var/spool/private}
    mkdir -p "$s/usr/share/doc/everything" "$s/$long_dir"
    echo '#!/bin/sh' > "$s/bin/tool";              chmod 0755 "$s/bin/tool"
    echo 'suid' > "$s/bin/suid";                   chmod 4755 "$s/bin/suid"
    echo 'sgid' > "$s/usr/bin/sgid";               chmod 2755 "$s/usr/bin/sgid"
    echo 'admin' > "$s/sbin/admin";                chmod 0750 "$s/sbin/admin"
    echo 'lib' > "$s/lib/x86_64-linux-gnu/libx.so.1"
    echo 'ld' > "$s/lib64/ld.so";                  chmod 0755 "$s/lib64/ld.so"
    : > "$s/usr/lib/empty"
    echo 'secret' > "$s/etc/everything/secret";    chmod 0600 "$s/etc/everything/secret"
    echo 'setting=1' > "$s/etc/everything/everything.conf"
    chmod 1777 "$s/tmp"
    chmod 0700 "$s/var/spool/private"
    chmod 2775 "$s/usr/share/doc/everything"
    echo 'long' > "$s/$long_dir/$long_name"
    ln -s "/$long_dir/$long_name" "$s/usr/share/doc/everything/long-target"
    ln -s tool "$s/bin/tool-relative"
    ln -s /bin/tool "$s/usr/bin/tool-absolute"
    ln "$s/bin/tool" "$s/usr/bin/tool-hardlink"     # across the /usr rewrite
    ln "$s/usr/bin/sgid" "$s/usr/bin/sgid-hardlink"
    mkfifo "$s/etc/everything/fifo"
    if [ "$(id -u)" = 0 ]; then
        chown 1234:5678 "$s/usr/share/doc/everything"
        chown 4321:8765 "$s/etc/everything/secret"
    fi
    mkdir -p "$s/DEBIAN"
    echo /etc/everything/everything.conf > "$s/DEBIAN/conffiles"
    local script
    for script in preinst postinst prerm postrm; do
        printf '#!/bin/sh\necho %s\n' "$script" > "$s/DEBIAN/$script"
    done
    echo 'activate-noawait ldconfig' > "$s/DEBIAN/triggers"
    echo 'libx 1 everything (>= 1.0)' > "$s/DEBIAN/shlibs"
}

# objects_stat REPO: each regular-file object with its mode, owner, mtime and
# extended attributes, and each metadata object with its mode and owner
# (libostree leaves their mtime alone), sorted.
objects_stat () {
    (cd "$1/objects" && find . \( -type f -o -type l \) | sort | while read -r f; do
        case $f in
            # (symlinks, in bare repositories, keep the time they were made)
            *.file) if [ -L "$f" ]; then printf "%s %s -> %s " "$f" "$(stat -c "%a %u %g %s" "$f")" "$(readlink "$f")"
                    else printf "%s %s " "$f" "$(stat -c "%a %u %g %Y %s" "$f")"; fi ;;
            *) printf "%s %s " "$f" "$(stat -c "%a %u %g %s" "$f")" ;;
        esac
        getfattr -h -d -m - -e hex "$f" 2>/dev/null | grep -v "^#" | sort | tr "\n" " "
        echo
    done)
}

# make_everything_debs [COMPRESSION...]: in the current directory,
# everything.deb (stage_everything's tree as the package "everything",
# version 1:2.0+b1~rc1-1), everything-COMPRESSION.deb for each compression
# given, and libsame1.deb (a Multi-Arch: same library with a postinst).
make_everything_debs () {
    stage_everything stage
    local z out
    for z in default "$@"; do
        out=everything-$z.deb
        [ "$z" = default ] && { out=everything.deb; z=; }
        DEB_KEEP_OWNERS=1 DEB_COMPRESSION=$z make_deb stage everything 1:2.0+b1~rc1-1 amd64 \
            "Depends: libc6 (>= 2.36)" "Multi-Arch: foreign" "Homepage: https://example.invalid/" > name
        mv "$(cat name)" "$out"
    done
    mkdir -p same/usr/lib/x86_64-linux-gnu && echo so > same/usr/lib/x86_64-linux-gnu/libsame.so.1
    mkdir -p same/DEBIAN && printf '#!/bin/sh\n' > same/DEBIAN/postinst
    mv "$(make_deb same libsame1 1.0-1 amd64 'Multi-Arch: same')" libsame1.deb
}

# make_tiny_debs DIR PREFIX N ARCH [EVERY]: N small packages PREFIX-00001 …
# PREFIX-N (version 1.0), each shipping /usr/share/PREFIX/NAME, as
# DIR/NAME_1.0_ARCH.deb: debian-binary, control.tar.gz and data.tar.gz in
# an ar archive, the layout dpkg-deb --build writes, written by Python in
# one process (dpkg-deb runs tar and a compressor for each package: minutes
# for thousands on two cores).  With EVERY, every EVERY-th package has a
# postinst that writes /var/lib/PREFIX/NAME when it is configured.
make_tiny_debs () {
    python3 - "$@" <<'EOF'
import gzip, io, os, sys, tarfile
out, prefix, n, arch = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
every = int(sys.argv[5]) if len(sys.argv) > 5 else 0

def targz(entries):
    """entries: (path, mode, bytes or None for a directory), in order."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
        for path, mode, data in entries:
            ti = tarfile.TarInfo(path)
            ti.mode, ti.mtime, ti.uname, ti.gname = mode, 0, "root", "root"
            if data is None:
                ti.type = tarfile.DIRTYPE
            else:
                ti.size = len(data)
            t.addfile(ti, io.BytesIO(data) if data is not None else None)
    return gzip.compress(buf.getvalue(), mtime=0)

def ar(members):
    parts = [b"!<arch>\n"]
    for name, data in members:
        parts.append(b"%-16s%-12d%-6d%-6d%-8s%-10d`\n" % (name.encode(), 0, 0, 0, b"100644", len(data)))
        parts.append(data + (b"\n" if len(data) % 2 else b""))
    return b"".join(parts)

for i in range(1, n + 1):
    name = "%s-%05d" % (prefix, i)
    control = [("./", 0o755, None), ("./control", 0o644, (
        "Package: %s\nVersion: 1.0\nArchitecture: %s\n"
        "Maintainer: apt2ostree tests <tests@example.invalid>\nPriority: optional\n"
        "Description: tiny test package %s\n" % (name, arch, name)).encode())]
    if every and i % every == 0:
        control.append(("./postinst", 0o755, (
            "#!/bin/sh\nset -e\nif [ \"$1\" = configure ]; then mkdir -p /var/lib/%s; "
            "echo %s > /var/lib/%s/%s; fi\n" % (prefix, name, prefix, name)).encode()))
    data = [("./", 0o755, None), ("./usr/", 0o755, None), ("./usr/share/", 0o755, None),
            ("./usr/share/%s/" % prefix, 0o755, None),
            ("./usr/share/%s/%s" % (prefix, name), 0o644, (name + "\n").encode())]
    deb = ar([("debian-binary", b"2.0\n"), ("control.tar.gz", targz(control)),
              ("data.tar.gz", targz(data))])
    with open(os.path.join(out, "%s_1.0_%s.deb" % (name, arch)), "wb") as f:
        f.write(deb)
EOF
}
