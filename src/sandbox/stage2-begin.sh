set -e
export DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true
cd /
step() { echo "apt2ostree configure: $*"; }

# 0. The image is being built, not run: its maintainer scripts run as in
#    the chroot debootstrap or mmdebstrap gives them, where "ischroot"
#    answers yes.  Here its own test cannot tell (the sandbox's process 1
#    has the same root), and a script that believes it runs on a live
#    system acts on one: bookworm's libc6 postinst re-executes init and
#    sleeps a second.  The answer lives in /run, a tmpfs that never
#    reaches the image.
mkdir -p /run/apt2ostree/bin
printf '#!/bin/sh\nexit 0\n' > /run/apt2ostree/bin/ischroot
chmod 755 /run/apt2ostree/bin/ischroot
export PATH="/run/apt2ostree/bin:$PATH"

