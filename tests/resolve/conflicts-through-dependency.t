# A dependency kept out by a conflict is reported with the conflict behind
# it, on one line.
## source main
Package: a
Version: 1
Architecture: amd64
Depends: b

Package: b
Version: 1
Architecture: amd64
Conflicts: c

Package: c
Version: 1
Architecture: amd64

## request
packages: a c
variant: custom
## expect-error
a depends on b but it is not going to be installed, because b conflicts with c but c 1 is to be installed
