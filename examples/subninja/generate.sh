#!/bin/sh
# Write out/images.ninja, the one generated file build.ninja includes: every
# image of this project, one repository (out/ostree), each package unpacked
# once.  To add an image, add its lockfile to IMAGES.  Arguments are passed
# to "apt2ostree ninja" (for example --sources FILE).  $APT2OSTREE names the
# binary (default: apt2ostree on PATH).
set -e
cd "$(dirname "$0")"
IMAGES="base.lock.json dev.lock.json"
# shellcheck disable=SC2086 # one word per lockfile
"${APT2OSTREE:-apt2ostree}" ninja $IMAGES -o out/images.ninja --builddir out --subninja "$@"
