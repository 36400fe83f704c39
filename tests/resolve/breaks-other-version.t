# Breaks on versions that are not the candidate does not matter.
## source main
Package: libnew
Version: 2
Architecture: amd64
Breaks: app (<< 2)

Package: app
Version: 2.1
Architecture: amd64
Depends: libnew

## request
packages: app
variant: custom
## expect
app=2.1
libnew=2
