# Boot 1, image 1: the device makes state of its own (a file under
# /var/lib, a user, an edit of a conffile), then upgrades from the update
# disk's repository (the remote "origin", file:///mnt/updates/repo).
set -e
# Booted by ostree-prepare-root (it leaves /run/ostree-booted), into the
# deployed system (not the initramfs): the device's own word, not the
# console's, whose lines the kernel's messages may split.
if [ -e /run/ostree-booted ]; then echo yes; else echo no; fi > ostree-booted
. /etc/os-release
echo "$PRETTY_NAME" > os-release
dpkg-query -W -f '${Package} ${Version}\n' > pkgs
echo "the device's own" > /var/lib/a2o-device-state
useradd -m -c "the device's user" deviceuser
echo "# edited on the device" >> /etc/default/useradd
ostree admin upgrade
ostree admin status > admin-status
