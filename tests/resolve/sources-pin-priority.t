# A source of higher pin priority wins over a higher version elsewhere.
## source bookworm priority 500
Package: app
Version: 2.0
Architecture: amd64
Depends: lib

Package: lib
Version: 2.0
Architecture: amd64

## source vendor priority 990
Package: app
Version: 1.0-vendor
Architecture: amd64
Depends: lib (>= 1)

## request
packages: app
variant: custom
## expect
app=1.0-vendor
lib=2.0
