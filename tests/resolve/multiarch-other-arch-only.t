# A package that exists only for other architectures says which, and where.
## source main
Package: i386-only
Version: 1
Architecture: i386

## request
packages: i386-only
variant: custom
## expect-error
package "i386-only" is only built for i386 in main, not for amd64
