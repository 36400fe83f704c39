#!/usr/bin/env python3
"""Compare two root filesystem trees by path, type, mode, owner and symlink
target (and say how many regular files differ in content).

    compare-trees.py REFERENCE OURS [--expected FILE]

FILE lists the expected differences, one per line: "only-reference PATTERN",
"only-ours PATTERN", "content PATTERN", "mode PATTERN" (type, mode, owner
or symlink target) or "target PATTERN" (the symlink target alone); fnmatch
patterns on paths such as "/dev/*"; "#" starts a comment.  Prints every unexpected difference and
exits 1 when there is one.
"""
import fnmatch
import hashlib
import os
import stat
import sys


def scan(root):
    entries = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = "/" + os.path.relpath(full, root)
            st = os.lstat(full)
            target = os.readlink(full) if stat.S_ISLNK(st.st_mode) else None
            entries[rel] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid,
                            st.st_gid, target, full)
    return entries


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def kind(mode):
    return {stat.S_IFDIR: "dir", stat.S_IFREG: "file", stat.S_IFLNK: "symlink",
            stat.S_IFCHR: "chardev", stat.S_IFBLK: "blockdev", stat.S_IFIFO: "fifo",
            stat.S_IFSOCK: "socket"}.get(mode, "?")


def main():
    args = sys.argv[1:]
    expected = []
    if "--expected" in args:
        i = args.index("--expected")
        with open(args[i + 1]) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    what, pattern = line.split(None, 1)
                    expected.append((what, pattern))
        del args[i:i + 2]
    ref, ours = scan(args[0]), scan(args[1])

    def is_expected(what, path):
        return any(w == what and fnmatch.fnmatch(path, p) for w, p in expected)

    problems = []
    for path in sorted(set(ref) - set(ours)):
        if not is_expected("only-reference", path):
            problems.append(f"only in the reference: {path}")
    for path in sorted(set(ours) - set(ref)):
        if not is_expected("only-ours", path):
            problems.append(f"only in ours: {path}")
    content = 0
    for path in sorted(set(ref) & set(ours)):
        a, b = ref[path], ours[path]
        if a[:5] != b[:5]:
            if is_expected("mode", path):
                continue
            if a[:4] == b[:4] and is_expected("target", path):
                continue
            problems.append(f"{path}: reference {kind(a[0])} {a[1]:04o} {a[2]}:{a[3]}"
                            f"{' -> ' + a[4] if a[4] else ''}, ours {kind(b[0])} {b[1]:04o}"
                            f" {b[2]}:{b[3]}{' -> ' + b[4] if b[4] else ''}")
        elif a[0] == stat.S_IFREG and digest(a[5]) != digest(b[5]):
            if not is_expected("content", path):
                problems.append(f"{path}: content differs")
            content += 1
    common = len(set(ref) & set(ours))
    print(f"# {len(ref)} entries in the reference, {len(ours)} in ours, {common} in both; "
          f"{content} files differ in content (expected ones included)")
    for p in problems:
        print(p)
    return 1 if problems else 0


sys.exit(main())
