# A dependency on a package that exists nowhere is reported as not
# installable; several problems are joined on one line.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: ghost

Package: other
Version: 1
Architecture: amd64
Depends: phantom (>= 1) | spectre

## request
packages: app other
variant: custom
## expect-error
app depends on ghost but it is not installable
other depends on phantom (>= 1) | spectre but it is not installable
