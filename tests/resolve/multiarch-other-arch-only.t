# A package that exists only for another architecture is not available.
## source main
Package: i386-only
Version: 1
Architecture: i386

## request
packages: i386-only
variant: custom
## expect-error
package "i386-only" is not available for architecture amd64
