# An alternative whose version constraint the candidate does not meet is
# skipped for the next one.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: libold (>= 2) | libnew

Package: libold
Version: 1.5
Architecture: amd64

Package: libnew
Version: 1
Architecture: amd64

## request
packages: app
variant: custom
## expect
app=1
libnew=1
