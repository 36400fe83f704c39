# A name built for the image's architecture only in a source of negative
# priority is "not in any source", not "only built for" the others.
## source main
Package: tool
Version: 1
Architecture: i386

## source never priority -1
Package: tool
Version: 2
Architecture: amd64

## request
packages: tool
variant: custom
## expect-error
package "tool" is not in any source
