# Boot 3, image 1 again (the rollback).
dpkg-query -W -f '${Package} ${Version}\n' > pkgs
cat /var/lib/a2o-device-state > state
ostree admin status > admin-status
