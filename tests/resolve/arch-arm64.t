# The image's architecture picks the stanzas: arm64 here, and name:arch
# for the native architecture or "all" is accepted.
## source main
Package: libc6
Version: 2.36-9
Architecture: amd64

Package: libc6
Version: 2.36-9
Architecture: arm64

Package: tzdata
Version: 2024a
Architecture: all

Package: hello
Version: 2.10
Architecture: arm64
Depends: libc6 (>= 2.34)

## request
packages: hello:arm64 tzdata:all
variant: custom
arch: arm64
## expect
hello=2.10
libc6=2.36-9
tzdata=2024a
