#!/bin/sh
# When the tool tree has no mandb (the tests' build-root, from the .debs
# they serve themselves): a listing in its place, the NAME line of every
# manual page, one "PAGE (SECTION) - WHAT" line each, in
# /out/var/cache/man-index/whatis.  Runs as / in the tool tree
# (mod --chroot), which holds /usr/share/man at /work/usr/share/man; it reads nothing
# else, so it runs again only when /usr/share/man changes.
set -e
mkdir -p /out/var/cache/man-index
cd /work/usr/share/man
for page in man*/*; do
    [ -f "$page" ] || continue
    section=${page%%/*}
    sed -n "/^\.SH NAME/{n;s/ \\\\- / ($section) - /p;}" "$page"
done | LC_ALL=C sort > /out/var/cache/man-index/whatis
