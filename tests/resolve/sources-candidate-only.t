# Only the candidate is ever installed: a dependency that an older version
# would meet fails, as with apt.
## source bookworm
Package: app
Version: 1
Architecture: amd64
Depends: lib (<< 2)

Package: lib
Version: 1.5
Architecture: amd64

## source updates
Package: lib
Version: 2.1
Architecture: amd64

## request
packages: app
variant: custom
## expect-error
app depends on lib (<< 2) but 2.1 is to be installed
