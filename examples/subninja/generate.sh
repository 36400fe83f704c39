#!/bin/sh
# Write out/images.ninja, the one generated file build.ninja includes: every
# image of this project, one repository (out/ostree), each package unpacked
# once.  To add an image, add its lockfile to IMAGES.  Arguments are passed
# to "apt2ostree ninja" (for example --sources FILE).  The program is
# $APT2OSTREE when set, else the one built in this source tree (../..),
# else apt2ostree on PATH.
set -e
cd "$(dirname "$0")"
IMAGES="base.lock.json dev.lock.json"
if [ -n "${APT2OSTREE:-}" ]; then
    a2o=$APT2OSTREE
elif [ -x ../../apt2ostree ]; then
    a2o=../../apt2ostree
elif command -v apt2ostree > /dev/null; then
    a2o=apt2ostree
else
    echo "generate.sh: no apt2ostree: build it (make, in the top directory of its source)," \
        "install it (make install; its bin directory on PATH) or name it in APT2OSTREE" >&2
    exit 1
fi
# shellcheck disable=SC2086 # one word per lockfile
"$a2o" ninja $IMAGES -o out/images.ninja --builddir out --subninja "$@"
