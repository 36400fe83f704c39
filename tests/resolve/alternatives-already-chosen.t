# "a | b" is already met when b is chosen: a is not added.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: a | b

Package: a
Version: 1
Architecture: amd64

Package: b
Version: 1
Architecture: amd64

## request
packages: b app
variant: custom
## expect
app=1
b=1
