# Pre-Depends are resolved like Depends and are unpacked first; the order
# follows the dependencies.
## source main
Package: app
Version: 1
Architecture: amd64
Pre-Depends: libc6 (>= 2.36)
Depends: tool

Package: tool
Version: 1
Architecture: amd64
Pre-Depends: libc6

Package: libc6
Version: 2.36-9
Architecture: amd64
Depends: libgcc-s1

Package: libgcc-s1
Version: 12.2
Architecture: amd64
Depends: gcc-base

Package: gcc-base
Version: 12.2
Architecture: amd64

## request
packages: app
variant: custom
## expect
app=1
tool=1
libc6=2.36-9
libgcc-s1=12.2
gcc-base=12.2
## expect-before
libc6 < tool
libc6 < app
tool < app
