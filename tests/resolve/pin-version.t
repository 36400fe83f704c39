# name=version installs that version, and the other packages see it as the
# one to be installed.
## source bookworm
Package: app
Version: 1
Architecture: amd64
Depends: lib (<< 1:2)

Package: lib
Version: 1:1.5
Architecture: amd64

## source updates
Package: lib
Version: 1:2.1
Architecture: amd64

## request
packages: app lib=1:1.5
variant: custom
## expect
app=1
lib=1:1.5
