# When no alternative can be installed, each one's reason is given.
## source main
Package: d
Version: 1
Architecture: amd64
Depends: e | f

Package: e
Version: 1
Architecture: amd64
Depends: missing

Package: f
Version: 1
Architecture: amd64
Depends: missing2 (>= 3)

## request
packages: d
variant: custom
## expect-error
the request cannot be satisfied:
e depends on missing but it is not installable
f depends on missing2 (>= 3) but it is not installable
