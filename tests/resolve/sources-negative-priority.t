# A source with a negative pin priority is never used.
## source main
Package: app
Version: 1
Architecture: amd64

## source never priority -1
Package: app
Version: 9
Architecture: amd64

Package: only-there
Version: 1
Architecture: amd64

## request
packages: app
variant: custom
## expect
app=1
