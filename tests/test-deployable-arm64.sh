#!/bin/bash
# deployable for arm64 images (Jetson boards, Debian arm64): the same proofs
# as tests/test-deployable.sh, on images whose packages are arm64's; stage 2
# runs them under qemu-user, "ostree admin deploy" needs no emulation.
BASE_ARCH=arm64
. "$TOP_SRCDIR/tests/test-deployable.sh"
