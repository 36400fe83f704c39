#!/usr/bin/env python3
"""Write build.ninja: a root filesystem composed from trees, as the article
that apt2ostree comes from builds one.

Every function below only writes Ninja edges and returns the ref of the
tree it describes, so the build reads like a program over trees:

    rootfs = combine([userspace, kernel, package("hello"), package("greet")])

An OSTree ref is a file, so each tree is a Ninja target: ninja runs a step
again only when a tree it reads changed, and stops where a step's tree comes
out the same (every rule has restat = 1 and apt2ostree rewrites a ref only
when its tree changes).  Trees that need no name of their own get one from
their operation and inputs ("apt2ostree ref-name"; computed here).

Run it in this directory; then "ninja".  See README.md.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys

OUT = "out"            # build directory: repository, generated files
REPO = OUT + "/ostree"


def derived(op, *args):
    """The name "apt2ostree ref-name OP ARGS..." prints."""
    words = [op, *args]
    digest = hashlib.sha256(b"".join(w.encode() + b"\0" for w in words)).hexdigest()
    return "derived/%s-%s" % (op, digest[:20])


def esc_path(path):
    return path.replace("$", "$$").replace(" ", "$ ").replace(":", "$:")


def esc_value(value):
    return value.replace("$", "$$")


def files_under(top):
    found = []
    for root, dirs, files in os.walk(top):
        dirs.sort()
        found += [os.path.join(root, f) for f in sorted(files)]
    return found


class Graph:
    """The edges written so far; each tree once, whoever asks for it."""

    def __init__(self):
        self.lines = []
        self.made = set()

    def edge(self, rule, ref, inputs=(), files=(), **variables):
        """An edge of RULE writing REF from the trees INPUTS and the FILES."""
        if ref in self.made:
            return ref
        self.made.add(ref)
        ins = [ref_file(t) for t in inputs] + [esc_path(f) for f in files]
        # The repository exists before any tree is written (images.ninja's
        # init edge makes it).
        self.lines.append("build %s: %s %s || $repo/config" % (ref_file(ref), rule, " ".join(ins)))
        self.lines.append("  ref = " + ref)
        for name, value in variables.items():
            if value:
                self.lines.append("  %s = %s" % (name, esc_value(value)))
        self.lines.append("")
        return ref


def ref_file(ref):
    return "$repo/refs/heads/" + ref


G = Graph()


# --- the tree operations: each writes an edge, returns the tree's ref ---

def import_tarball(path, ref=None):
    return G.edge("a2o_import", ref or derived("import", "--tar", path), files=[path])


def import_dir(path, ref=None):
    return G.edge("a2o_import_dir", ref or derived("import", path), files=files_under(path),
                  dir=path)


def combine(trees, ref=None):
    return G.edge("a2o_combine", ref or derived("combine", *trees), trees, trees=" ".join(trees))


def graft(tree, path, what, ref=None):
    return G.edge("a2o_graft", ref or derived("graft", tree, path, what), [tree, what],
                  tree=tree, path=path, **{"from": what})


def mkdir(tree, path, ref=None):
    """PATH and its missing parents made in TREE."""
    return G.edge("a2o_mkdir", ref or derived("mkdir", "-p", tree, path), [tree],
                  tree=tree, paths=path, flags="-p")


def subtree(tree, path, ref=None):
    return G.edge("a2o_subtree", ref or derived("subtree", tree, path), [tree],
                  tree=tree, path=path)


def overlay(base, trees, ref=None):
    """The TREES over BASE: their files replace BASE's."""
    return G.edge("a2o_overlay", ref or derived("overlay", base, *trees), [base, *trees],
                  base=base, trees=" ".join(trees))


def mod(tree, cmd, chroot=False, capture=None, binds=(), flags="", files=(), ref=None):
    """Run CMD over TREE (as / with CHROOT, else at /work over the host's
    /usr); the tree it leaves, or its directory CAPTURE, is the result."""
    options = (["--chroot"] if chroot else []) + (["--capture-subdir", capture] if capture else [])
    bind_words = []
    for src, dest in binds:
        bind_words += ["--bind", src, dest]
    name = ref or derived("mod", tree, *options, *bind_words, *flags.split(),
                          "--", "sh", "-c", cmd)
    return G.edge("a2o_mod", name, [tree], files=files, tree=tree,
                  chroot="--chroot" if chroot else "",
                  capture="--capture-subdir " + capture if capture else "",
                  binds=" ".join(bind_words), flags=flags, cmd="sh -c '%s'" % cmd)


# --- the project: what a build script would say ---

def package(directory, name, build_root, binds):
    """Compile DIRECTORY/NAME in the build-root tree; its tree is what the
    build installed into /dest.  A package with a Makefile is built with
    "make DESTDIR=/dest install"; one with a "build" script (the tests'
    stand-ins) with "sh ./build /dest"."""
    path = os.path.join(directory, name)
    src = import_dir(path)
    build_input = graft(build_root, "/src", src)
    if os.path.exists(os.path.join(path, "Makefile")):
        cmd = "cd /src && make DESTDIR=/dest install"
    else:
        cmd = "cd /src && sh ./build /dest"
    return mod(build_input, cmd, chroot=True, capture="/dest", binds=binds,
               ref="package/" + name)


def container(name, userspace):
    """A container's root filesystem: the userspace with the app on top."""
    return combine([userspace, import_dir("container/" + name)], ref="container/" + name)


def index(tree, path, tools, script, ref):
    """A cache made from one subtree of TREE only (ldconfig's, mandb's): the
    subtree at /work PATH in the TOOLS tree, tools/SCRIPT run there as /,
    the tree it leaves in /out the result.  Its inputs are the subtree and
    the tool tree, so it runs again only when one of them changes."""
    at = "/work" + path
    work = graft(mkdir(tools, os.path.dirname(at)), at, subtree(tree, path))
    return mod(work, "sh /tools/%s" % script, chroot=True, capture="/out",
               flags="--ro-bind %s /tools" % os.path.abspath("tools"),
               files=["tools/" + script], ref=ref)


def locked_packages(lockfile):
    """The names of the packages LOCKFILE locks (empty if it is not there
    yet: build.ninja is written again when it is)."""
    try:
        with open(lockfile) as f:
            data = json.load(f)
    except FileNotFoundError:
        return set()
    except ValueError as e:
        sys.exit("configure.py: %s: not a lockfile (%s)" % (lockfile, e))
    names = set()

    def walk(node):
        if isinstance(node, dict):
            if "name" in node and "version" in node:
                names.add(node["name"])
            for key, value in node.items():
                if key != "sources":
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(data)
    return names


def compose(args):
    userspace, build_root = args.userspace_ref, args.build_root_ref
    binds = [tuple(b.split(":", 1)) for b in args.compile_bind]
    kernel = import_tarball(args.kernel, ref="kernel")

    packages = [package(args.package_dir, p, build_root, binds) for p in args.packages]
    rootfs = combine([userspace, kernel] + packages)
    rootfs = graft(mkdir(rootfs, "/var/lib/machines"), "/var/lib/machines/web",
                   container("web", userspace))
    # ldconfig and mandb run in the build-root, over their one subtree.
    ldcache = index(rootfs, "/usr/lib", build_root, "ldconfig-cache.sh", ref="index/ld.so.cache")
    # Without man-db in the build-root (the tests' own), a listing in its place.
    man_tool = "mandb-index.sh" if "man-db" in locked_packages(args.build_root) else "man-index.sh"
    manidx = index(rootfs, "/usr/share/man", build_root, man_tool, ref="index/man")
    return overlay(rootfs, [ldcache, manidx], ref="rootfs")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--userspace", default="userspace.lock.json",
                        help="the lockfile of the root filesystem's userspace")
    parser.add_argument("--build-root", default="build-root.lock.json",
                        help="the lockfile of the tree packages are compiled in")
    parser.add_argument("--kernel", default=OUT + "/kernel.tar",
                        help="the kernel tarball (default: made from kernel/)")
    parser.add_argument("--packages", nargs="*", default=["hello", "greet"], metavar="NAME",
                        help="the packages to compile, directories of --package-dir")
    parser.add_argument("--package-dir", default="packages", metavar="DIR",
                        help="where the packages' sources are (default: packages)")
    parser.add_argument("--compile-bind", action="append", default=[], metavar="SRC:DEST",
                        help="bind SRC on DEST while compiling (a compiler cache)")
    parser.add_argument("--apt2ostree", default=os.environ.get("APT2OSTREE", "apt2ostree"))
    parser.add_argument("ninja_args", nargs="*",
                        help="more options for \"apt2ostree ninja\" (after --)")
    args = parser.parse_args()

    lockfiles = [args.userspace] + ([args.build_root] if args.build_root != args.userspace else [])
    args.userspace_ref = os.path.basename(args.userspace).removesuffix(".lock.json")
    args.build_root_ref = os.path.basename(args.build_root).removesuffix(".lock.json")
    os.makedirs(OUT, exist_ok=True)
    a2o = args.apt2ostree
    subprocess.run([a2o, "ninja", "--rules", "-o", OUT + "/rules.ninja"], check=True)
    subprocess.run([a2o, "ninja", *lockfiles, "-o", OUT + "/images.ninja", "--builddir", OUT,
                    "--subninja", *args.ninja_args], check=True)

    rootfs = compose(args)
    # The vendor's kernel tarball, unless given: made from kernel/, reproducibly.
    tarball = [
        "rule tarball",
        "  command = tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner"
        " -C kernel -cf $out.tmp . && mv $out.tmp $out",
        "  description = tar $out",
        "build %s: tarball %s" % (esc_path(args.kernel),
                                  " ".join(esc_path(f) for f in files_under("kernel"))),
        "",
    ] if args.kernel == OUT + "/kernel.tar" else []
    text = "\n".join([
        "# Written by configure.py: a root filesystem composed from trees.",
        "ninja_required_version = 1.8",
        "builddir = " + OUT,
        "repo = " + REPO,
        "include %s/rules.ninja" % OUT,
        "subninja %s/images.ninja" % OUT,
        "",
    ] + tarball + [
        "rule configure",
        "  command = python3 %s" % " ".join(esc_value(a) for a in sys.argv),
        "  description = configure build.ninja",
        "  generator = 1",
        "  restat = 1",
        "build build.ninja: configure configure.py %s" % " ".join(esc_path(l) for l in lockfiles),
        "",
    ] + G.lines + [
        "build rootfs: phony " + ref_file(rootfs),
        "default rootfs",
        "",
    ])
    try:
        with open("build.ninja") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open("build.ninja.tmp", "w") as f:
        f.write(text)
    os.replace("build.ninja.tmp", "build.ninja")


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:
        # apt2ostree said what was wrong.
        sys.exit(e.returncode)
