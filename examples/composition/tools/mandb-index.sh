#!/bin/sh
# mandb's index of the root filesystem's manual pages, made from its
# /usr/share/man alone.  Runs as / in the tool tree (mod --chroot; man-db
# is in build-root.txt), which holds the subtree at /work/usr/share/man; writes
# /out/var/cache/man, laid over the root filesystem.  Its own manpath
# configuration names the one directory, so it reads nothing else and runs
# again only when /usr/share/man changes.
set -e
mkdir -p /out/var/cache/man
echo "MANDB_MAP /work/usr/share/man /out/var/cache/man" > /tmp/manpath.config
mandb --config-file=/tmp/manpath.config --create --quiet /work/usr/share/man
