# 2. no services
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
chmod 755 /usr/sbin/policy-rc.d

# the packages that left, purged (dependencies come right again below): their
# names are in a file, one a line, however many (in one argument, Linux
# would refuse more than 128 KiB of them), selected for purging, then purged
# by one dpkg, which takes no name on its command line
purge=/run/apt2ostree-purge
if [ -s $purge ]; then
  step "dpkg --purge $(paste -s -d ' ' $purge)"
  while read -r p; do echo "$p purge"; done < $purge | dpkg --set-selections
  dpkg --purge --pending --no-triggers --force-depends --force-remove-essential
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

