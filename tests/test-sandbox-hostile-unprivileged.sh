#!/bin/bash
# The hostile commands of test-sandbox-hostile.sh again as a normal user
# (uid/gid 65534): a user namespace, fakeroot, and the same bounded
# capabilities inside.
. "$TOP_SRCDIR/tests/libtest.sh"

again_as_nobody test-sandbox-hostile.sh
