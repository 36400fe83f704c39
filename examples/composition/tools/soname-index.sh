#!/bin/sh
# A stand-in for ldconfig's cache: the shared libraries of the library
# directory (the tree at /work, /usr/lib of the root filesystem), one
# "NAME => PATH" line each, in /work/index/sonames.  It reads nothing else,
# so it runs again only when /usr/lib changes.
set -e
cd /work
mkdir index
find . -path ./index -prune -o -name 'lib*.so*' -print | LC_ALL=C sort \
    | sed 's|^\./\(.*/\)*\(.*\)$|\2 => /usr/lib/&|; s|/usr/lib/\./|/usr/lib/|' > index/sonames
