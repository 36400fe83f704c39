# A gzip-compressed index (named by hash, as a cache keeps it) is read.
## source main compress gz
Package: app
Version: 1
Architecture: amd64
Depends: lib

Package: lib
Version: 2
Architecture: amd64

## request
packages: app
variant: custom
## expect
app=1
lib=2
