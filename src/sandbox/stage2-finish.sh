# 5. hooks
if [ -n "${APT2OSTREE_HOOKS:-}" ]; then
  step "hooks"
  sh -e -c "$APT2OSTREE_HOOKS"
fi

# 6. configure
step "dpkg --configure -a"
# dpkg's output goes to a file, shown as it grows, not through a pipe: a
# process a maintainer script leaves running (a daemon) would hold a pipe,
# and its reader would wait for it for ever.
: > /tmp/dpkg.log
dpkg --configure -a >> /tmp/dpkg.log 2>&1 &
dpkg=$!
tail -n +1 -s 0.02 -f --pid=$dpkg /tmp/dpkg.log
status=0
wait $dpkg || status=$?
echo $status > /tmp/dpkg.status
if [ "$(cat /tmp/dpkg.status)" != 0 ]; then
  # dpkg's own report scrolls away behind what it says next: say last which
  # package's script failed, and what that script printed.
  awk '/^Setting up / { name = $3; said = ""; next }
       /^dpkg: error processing package / { failed = $5; getline why; sub(/^ +/, "", why)
         if (why ~ /script/) printf "apt2ostree configure: package %s: %s; it said: %s\n",
           failed, why, (failed == name && said != "") ? said : "(nothing)"; next }
       name != "" { said = (said == "") ? $0 : said " / " $0 }' /tmp/dpkg.log >&2
  exit 1
fi
dpkg --audit

# 7. clean
rm -f /usr/sbin/policy-rc.d
rm -f /var/log/dpkg.log /var/log/alternatives.log /var/log/apt/history.log \
      /var/log/apt/term.log /var/log/apt/eipp.log.xz /var/cache/ldconfig/aux-cache \
      /var/lib/dpkg/*-old /var/cache/debconf/*-old
# stage 1 made these for dpkg; like mmdebstrap's images, keep them only if used
for f in available statoverride; do
  [ -s /var/lib/dpkg/$f ] || rm -f /var/lib/dpkg/$f
done

# 8. per-machine state, made again on each machine at first boot
rm -f /etc/ssh/ssh_host_* /var/lib/systemd/random-seed /var/lib/urandom/random-seed \
      /var/lib/systemd/credential.secret
if [ -e /etc/machine-id ]; then : > /etc/machine-id; fi
[ -L /var/lib/dbus/machine-id ] || rm -f /var/lib/dbus/machine-id
if [ "$(dpkg-query -W -f '${db:Status-Status}' openssh-server 2>/dev/null)" = installed ]; then
  unit=ssh-keygen-first-boot.service
  mkdir -p /etc/systemd/system/multi-user.target.wants
  cat > /etc/systemd/system/$unit <<'EOF'
# Written by apt2ostree configure: the image ships no SSH host keys (every
# machine running it would share them).  This makes the missing ones before
# sshd starts (its unit's "sshd -t" fails without them).
[Unit]
Description=Generate this machine's SSH host keys
DefaultDependencies=no
Requires=local-fs.target
After=local-fs.target
Before=ssh.service ssh.socket sshd.service shutdown.target
Conflicts=shutdown.target

[Service]
Type=oneshot
ExecStart=/usr/bin/ssh-keygen -A
RemainAfterExit=yes

[Install]
WantedBy=multi-user.target
EOF
  chmod 644 /etc/systemd/system/$unit
  ln -sf ../$unit /etc/systemd/system/multi-user.target.wants/$unit
fi
