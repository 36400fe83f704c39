# Breaks keeps out the versions it names, in apt's words.
## source main
Package: libnew
Version: 2
Architecture: amd64
Breaks: oldapp (<< 2)

Package: oldapp
Version: 1.0
Architecture: amd64

## request
packages: libnew oldapp
variant: custom
## expect-error
libnew breaks oldapp (<< 2) but oldapp 1.0 is to be installed
