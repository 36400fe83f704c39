# mod-lib.sh — the trees the mod tests run over.  Source after libtest.sh.

# The programs the tests' commands use, copied from the host with the
# libraries they load: dynamically linked, as in a real image, so that
# fakeroot's preload works on them (unprivileged mode).
MOD_PROGRAMS="dash true cat chmod chown chgrp rm mv ln mkdir env touch ls stat id cp tr head
  tail wc sort truncate mkfifo"

# make_base_tar OUT: a small root filesystem as a tar archive (any owner can
# be written into a tar, so the same tree serves root and non-root runs).
make_base_tar () {
    local progs="" p
    for p in $MOD_PROGRAMS; do progs="$progs $(type -P "$p")"; done
    local libs
    libs=$(ldd $progs | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }' | sort -u)
    python3 - "$1" "$progs" "$libs" <<'PY'
import io, os, sys, tarfile
out, progs, libs = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
tar = tarfile.open(out, "w", format=tarfile.PAX_FORMAT)
made = set()
def add(name, kind, mode, uid=0, gid=0, data=b"", target=None):
    parent = os.path.dirname(name)
    if parent and parent not in made:
        add(parent, "d", 0o755)
    made.add(name)
    ti = tarfile.TarInfo(name)
    ti.mode, ti.uid, ti.gid, ti.mtime = mode, uid, gid, 0
    if kind == "d":
        ti.type = tarfile.DIRTYPE
        tar.addfile(ti)
    elif kind == "l":
        ti.type, ti.linkname = tarfile.SYMTYPE, target
        tar.addfile(ti)
    else:
        ti.size = len(data)
        tar.addfile(ti, io.BytesIO(data))
for d in ["bin", "etc", "data", "data/dir", "data/dir/sub", "usr", "usr/bin", "var"]:
    add(d, "d", 0o755)
add("var/mail", "d", 0o2775, 0, 8)
for p in progs:
    name = "sh" if os.path.basename(p) == "dash" else os.path.basename(p)
    add("bin/" + name, "f", 0o755, data=open(p, "rb").read())
for l in libs:
    add(l.lstrip("/"), "f", 0o755, data=open(os.path.realpath(l), "rb").read())
add("etc/hello", "f", 0o644, data=b"hello\n")
ti = tarfile.TarInfo("etc/labelled")
ti.mode, ti.size = 0o644, 6
ti.pax_headers = {"SCHILY.xattr.user.mod-test": "file-label"}
tar.addfile(ti, io.BytesIO(b"label\n"))
add("etc/motd", "f", 0o644, data=b"motd\n")
add("etc/owned", "f", 0o644, data=b"owned\n")
add("etc/a", "f", 0o644, data=b"a\n")
add("etc/b", "f", 0o644, data=b"b\n")
add("etc/shadow", "f", 0o640, 0, 42, data=b"secret\n")
add("data/keep", "f", 0o644, data=b"keep\n")
add("data/dir/old", "f", 0o644, data=b"old\n")
add("data/dir/sub/file", "f", 0o644, data=b"deep\n")
add("usr/bin/tool", "f", 0o755, data=b"#!/bin/sh\necho tool\n")
tar.close()
PY
}

# setup_base_repo DIR: DIR is a repository (bare as root, bare-user
# otherwise) whose ref "base" holds the tree of make_base_tar.
setup_base_repo () {
    a2o --repo "$1" init
    make_base_tar "$SCRATCH/base.tar"
    a2o --repo "$1" import --ref base --tar "$SCRATCH/base.tar" > /dev/null
}

# mod_ls REPO REV PATH: "mode uid gid" of PATH in the tree (ostree ls).
mod_ls () {
    ostree --repo="$1" ls -d "$2" "$3" | awk '{ print $1, $2, $3 }'
}

# no_scratch_left REPO: mod removed its scratch directories.
no_scratch_left () {
    ! ls -d "$1"/tmp/mod-* 2>/dev/null | grep -q . || { ls -d "$1"/tmp/mod-* >&2; fail "scratch left in $1/tmp"; }
}
