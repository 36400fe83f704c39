# Boot 1, image 1: the device makes state of its own (a file under
# /var/lib, a user, an edit of a conffile), then upgrades from the update
# disk's repository (the remote "origin", file:///mnt/updates/repo).
set -e
dpkg-query -W -f '${Package} ${Version}\n' > pkgs
echo "the device's own" > /var/lib/a2o-device-state
useradd -m -c "the device's user" deviceuser
echo "# edited on the device" >> /etc/default/useradd
ostree admin upgrade
ostree admin status > admin-status
