# Boot 2, image 2 (the upgrade): what dpkg, systemd and /etc say; then the
# rollback to image 1.
dpkg-query -W -f '${Package} ${Version}\n' > pkgs
# chrony is wanted by multi-user.target, which this probe runs after; it
# may still be starting.
i=0
while [ "$(systemctl is-active chrony)" = activating ] && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
systemctl is-active chrony > chrony.active
systemctl status --no-pager chrony > chrony.status 2>&1
stat -c '%U %F' /var/lib/chrony > chrony.var
cat /var/lib/a2o-device-state > state
getent passwd deviceuser > user
tail -n 1 /etc/default/useradd > useradd.tail
cat /etc/a2o-probe.conf > probe.conf
dpkg --verify > verify 2>&1
ostree admin status > admin-status
if ostree admin --help 2>&1 | grep -q "^  rollback "; then
    ostree admin rollback > rollback.out 2>&1
else
    # bookworm's ostree (2022.7) has no "admin rollback": the rollback
    # deployment's commit deployed again as the default, with its origin,
    # every deployment kept.
    c=$(ostree admin status | sed -n 's/^  [^ ]* \([0-9a-f]\{64\}\)\.[0-9]* (rollback)$/\1/p')
    os=$(ostree admin status | sed -n 's/^  \([^ ]*\) [0-9a-f]\{64\}\.[0-9]* (rollback)$/\1/p')
    ostree admin deploy --retain --origin-file="/ostree/deploy/$os/deploy/$c.0.origin" "$c" > rollback.out 2>&1
fi
