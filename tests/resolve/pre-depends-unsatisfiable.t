# A Pre-Depends that cannot be met is reported as such.
## source main
Package: app
Version: 1
Architecture: amd64
Pre-Depends: libc6 (>= 3)

Package: libc6
Version: 2.36-9
Architecture: amd64

## request
packages: app
variant: custom
## expect-error
app pre-depends on libc6 (>= 3) but 2.36-9 is to be installed
