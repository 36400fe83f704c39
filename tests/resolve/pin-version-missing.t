# name=version of a version no source has lists the versions there are.
## source main
Package: lib
Version: 1.5
Architecture: amd64

Package: lib
Version: 2.0
Architecture: amd64

## request
packages: lib=3.0
variant: custom
## expect-error
package "lib" has no version "3.0" in any source (available: 1.5, 2.0)
