# name=version of a misspelled name suggests the closest names too: nearest
# first, then in name order, at most 3.
## source main
Package: libfoo2
Version: 1
Architecture: amd64

Package: libfoo1
Version: 1
Architecture: amd64

Package: libgo1
Version: 1
Architecture: amd64

Package: libfo
Version: 1
Architecture: all

Package: libfoo-common
Version: 1
Architecture: all

## request
packages: libfo1=1
variant: custom
## expect-error
package "libfo1" is not in any source; did you mean "libfo", "libfoo1", "libgo1"?
