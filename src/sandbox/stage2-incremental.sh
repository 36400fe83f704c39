set -e
export DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true
cd /
step() { echo "apt2ostree configure: $*"; }

# 2. no services
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
chmod 755 /usr/sbin/policy-rc.d

# the packages that left, purged (dependencies come right again below)
purge=$1; shift
if [ -n "$purge" ]; then
  step "dpkg --purge$(printf ' %s' $purge)"
  dpkg --purge --no-triggers --force-depends --force-remove-essential $purge
fi

# the packages that changed or arrived, unpacked by dpkg (preinsts; the
# triggers they activate run once, in dpkg --configure -a); a conffile takes
# the package's version, as a from-scratch image has it.  No fsync or
# early writeback of each file (--force-unsafe-io): the files land in the
# overlay's upper directory, which only the commit reads (and syncs)
if [ $# -gt 0 ]; then
  step "dpkg --unpack ($# packages)"
  dpkg --unpack --force-unsafe-io --no-triggers --auto-deconfigure --force-depends \
    --force-confnew --force-confmiss "$@"
fi

