# Two requested packages that conflict cannot both be installed.
## source main
Package: sysvinit-core
Version: 3.06
Architecture: amd64
Conflicts: systemd-sysv

Package: systemd-sysv
Version: 252
Architecture: amd64

## request
packages: sysvinit-core systemd-sysv
variant: custom
## expect-error
the request cannot be satisfied:
sysvinit-core conflicts with systemd-sysv but systemd-sysv 252 is to be installed
