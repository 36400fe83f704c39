# An alternative that conflicts with a package already chosen is skipped.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: mta-a | mta-b

Package: mta-a
Version: 1
Architecture: amd64
Conflicts: other

Package: mta-b
Version: 1
Architecture: amd64

Package: other
Version: 1
Architecture: amd64

## request
packages: other app
variant: custom
## expect
other=1
app=1
mta-b=1
