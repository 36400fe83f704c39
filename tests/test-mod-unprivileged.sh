#!/bin/bash
# The mod tests again as a normal user (uid/gid 65534): a bare-user
# repository, a user namespace and fakeroot seeded from OSTree's metadata.
. "$TOP_SRCDIR/tests/libtest.sh"

again_as_nobody test-mod.sh
