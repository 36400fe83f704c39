# Recommends are not installed unless asked for.
## source main
Package: app
Version: 1
Architecture: amd64
Recommends: rec1, rec2 | rec3

Package: rec1
Version: 1
Architecture: amd64

Package: rec2
Version: 1
Architecture: amd64

Package: rec3
Version: 1
Architecture: amd64

## request
packages: app
variant: custom
recommends: no
## expect
app=1
