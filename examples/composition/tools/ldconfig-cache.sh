#!/bin/sh
# ldconfig's cache for the root filesystem, made from its /usr/lib alone.
# Runs as / in the tool tree (mod --chroot), which holds the subtree at
# /work/usr/lib; writes /out/etc/ld.so.cache, laid over the root
# filesystem's.  It reads nothing else (no /etc/ld.so.conf: the library
# directories are named here), so it runs again only when /usr/lib changes.
set -e
mkdir -p /work/etc /out/etc
dirs=$(cd /work && for d in usr/lib/*-linux-gnu*; do [ -d "$d" ] && echo "/$d"; done)
# -r: the paths below are inside /work; -X: leave the libraries' links alone.
ldconfig -X -r /work -f /etc/ld.so.conf -C /etc/ld.so.cache $dirs /usr/lib
mv /work/etc/ld.so.cache /out/etc/ld.so.cache
