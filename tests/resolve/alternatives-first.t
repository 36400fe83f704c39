# Of "a | b" apt installs the first alternative when it can be installed,
# even when the second sorts first or is more important.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: zeta | alpha

Package: alpha
Version: 1
Architecture: amd64
Priority: required

Package: zeta
Version: 1
Architecture: amd64
Priority: optional

## request
packages: app
variant: custom
## expect
app=1
zeta=1
