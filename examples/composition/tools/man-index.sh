#!/bin/sh
# A stand-in for mandb's index: the NAME line of every manual page of the
# tree at /work (/usr/share/man of the root filesystem), one
# "PAGE (SECTION) - WHAT" line each, in /work/index/whatis.  It reads
# nothing else, so it runs again only when /usr/share/man changes.
set -e
cd /work
mkdir index
for page in man*/*; do
    [ -f "$page" ] || continue
    section=${page%%/*}
    sed -n "/^\.SH NAME/{n;s/ \\\\- / ($section) - /p;}" "$page"
done | LC_ALL=C sort > index/whatis
