#!/bin/sh
# Write out/base.ninja and out/dev.ninja, the two images build.ninja
# includes, from base.lock.json and dev.lock.json.  Arguments are passed to
# each "apt2ostree ninja" (for example --sources FILE).  $APT2OSTREE names
# the binary (default: apt2ostree on PATH).
set -e
cd "$(dirname "$0")"
for image in base dev; do
    "${APT2OSTREE:-apt2ostree}" ninja "$image.lock.json" -o "out/$image.ninja" \
        --ref "$image" --builddir "out/$image" --subninja "$@"
done
