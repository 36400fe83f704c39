# A versioned dependency that only a too-old Provides could meet fails, in
# apt's words.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: libfoo-abi (>= 3)

Package: libfoo2
Version: 2.5-1
Architecture: amd64
Provides: libfoo-abi (= 2.5)

## request
packages: app
variant: custom
## expect-error
the request cannot be satisfied: app depends on libfoo-abi (>= 3) but it is not installable
