# 1. users and groups
for f in passwd group; do
  if [ ! -e /etc/$f ] && [ -e /usr/share/base-passwd/$f.master ]; then
    cp /usr/share/base-passwd/$f.master /etc/$f
  fi
done

# 2. no services
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
chmod 755 /usr/sbin/policy-rc.d

# 3. preinst scripts, in install order, run the way dpkg runs them: from
#    var/lib/dpkg/tmp.ci beside the package's control files (debconf reads
#    the package's name and templates there)
[ -e /var/lib/dpkg/diversions ] || : > /var/lib/dpkg/diversions
cp /var/lib/dpkg/diversions /tmp/apt2ostree-diversions
ci=/var/lib/dpkg/tmp.ci
dpkg_version=$(dpkg-query -f '${Version}' -W dpkg)
for p in "$@"; do
  [ -e /var/lib/dpkg/info/$p.preinst ] || continue
  name=${p%%:*}
  rm -rf $ci && mkdir -p $ci
  for f in /var/lib/dpkg/info/$p.*; do
    case ${f##*.} in list|md5sums|conffiles) ;; *) cp -p "$f" $ci/${f##*.} ;; esac
  done
  dpkg-query -s "$p" > $ci/control
  # the architecture and version from that record, read by the shell
  arch='' version=''
  while IFS= read -r line; do
    case $line in
      "Architecture: "*) arch=${line#Architecture: } ;;
      "Version: "*) version=${line#Version: } ;;
    esac
  done < $ci/control
  step "$name: preinst install"
  if ! DPKG_MAINTSCRIPT_PACKAGE=$name DPKG_MAINTSCRIPT_PACKAGE_REFCOUNT=1 \
       DPKG_MAINTSCRIPT_ARCH=$arch DPKG_MAINTSCRIPT_NAME=preinst PERL_DL_NONLAZY=1 \
       DPKG_RUNNING_VERSION=$dpkg_version \
       $ci/preinst install; then
    echo "apt2ostree configure: package $name ($version): its preinst script failed" >&2
    exit 1
  fi
done
rm -rf $ci

# 3a. files two packages both ship.  Stage 1 kept the earlier package's at
#     the path and set the later one's aside; now that the preinsts have
#     made their diversions, put each where dpkg would have: the diverting
#     package's file at the path, the other's at the diversion's name.
#     Without a diversion, the later package must Replace the earlier one.
aside=/var/lib/apt2ostree/set-aside
if [ -e $aside.list ]; then
  while read -r path earlier later; do
    by=$(dpkg-divert --listpackage "$path")
    to=$(dpkg-divert --truename "$path")
    if [ "$by" = "${later%%:*}" ] && [ "$to" != "$path" ]; then
      if [ -e "$path" ] && [ ! -e "$to" ]; then mv "$path" "$to"; fi
      mv "$aside/$later$path" "$path"
    elif [ "$by" = "${earlier%%:*}" ] && [ "$to" != "$path" ]; then
      if [ ! -e "$path" ] && [ -e "$to" ]; then mv "$to" "$path"; fi
      mv "$aside/$later$path" "$to"
    elif dpkg-query -W -f '${Replaces}\n' "$later" | tr ',' '\n' \
         | grep -q "^ *${earlier%%:*}\( \|:\|$\)"; then
      mv "$aside/$later$path" "$path"
      # The path is the later package's now: dpkg drops it from the
      # earlier one's file list (not from its md5sums).
      l=/var/lib/dpkg/info/$earlier.list
      grep -v -x -F -e "$path" $l > $l.new || true
      cat $l.new > $l && rm $l.new
    else
      echo "apt2ostree configure: packages ${earlier%%:*} and ${later%%:*} both ship $path \
(no diversion, and ${later%%:*} does not Replace ${earlier%%:*}), as dpkg refuses" >&2
      exit 1
    fi
  done < $aside.list
fi
rm -rf /var/lib/apt2ostree

# 3b. diversions the preinsts added.  dpkg would have unpacked every other
#     package's copy of a diverted file under the diversion's name; here all
#     files were in place before any preinst ran.  "dpkg-divert --rename"
#     has already moved it; without --rename, move it now.
while read -r from && read -r to && read -r by; do
  was=
  while read -r f && read -r t && read -r b; do
    [ "$f" = "$from" ] && [ "$t" = "$to" ] && [ "$b" = "$by" ] && was=1
  done < /tmp/apt2ostree-diversions
  [ -z "$was" ] || continue
  { [ -e "$from" ] || [ -L "$from" ]; } || continue
  { [ -e "$to" ] || [ -L "$to" ]; } && continue
  # one grep over every file list (in the order of the glob), not a
  # basename and a grep for each package
  for l in $(grep -l -x -F -e "$from" /var/lib/dpkg/info/*.list); do
    owner=${l##*/}; owner=${owner%.list}
    [ "${owner%%:*}" != "$by" ] || continue
    step "${owner%%:*}: $from diverted by $by, moved to $to"
    mv "$from" "$to"
    break
  done
done < /var/lib/dpkg/diversions
rm -f /tmp/apt2ostree-diversions

# 4. triggers: interests, then file triggers the unpacked files activate
mkdir -p /var/lib/dpkg/triggers
: > /var/lib/dpkg/triggers/File
for t in /var/lib/dpkg/info/*.triggers; do
  [ -e "$t" ] || continue
  p=$(basename "$t" .triggers)
  while read -r directive trigger rest; do
    case $directive in
      interest) suffix= ;;
      interest-await) suffix= ;;
      interest-noawait) suffix=/noawait ;;
      *) continue ;;
    esac
    case $trigger in
      /*) echo "$trigger $p$suffix" >> /var/lib/dpkg/triggers/File ;;
      *) echo "$p$suffix" >> /var/lib/dpkg/triggers/$trigger ;;
    esac
  done < "$t"
done
while read -r path p; do
  if grep -q -h -x -F -e "$path" -e "$path/" /var/lib/dpkg/info/*.list \
     || grep -q -h "^$path/" /var/lib/dpkg/info/*.list; then
    dpkg-trigger --no-await --by-package="${p%%/*}" "$path"
  fi
done < /var/lib/dpkg/triggers/File
[ -s /var/lib/dpkg/triggers/File ] || rm /var/lib/dpkg/triggers/File

