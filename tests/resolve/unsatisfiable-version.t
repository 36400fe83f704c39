# An unsatisfiable dependency is reported in apt's words, naming the
# version that is to be installed.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: libfoo

Package: libfoo
Version: 1
Architecture: amd64
Depends: libbar (>= 2)

Package: libbar
Version: 1.0
Architecture: amd64

## request
packages: app
variant: custom
## expect-error
the request cannot be satisfied: libfoo depends on libbar (>= 2) but 1.0 is to be installed
