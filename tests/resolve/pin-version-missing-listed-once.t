# A version that two sources have is listed once among the available ones.
## source main
Package: lib
Version: 1.5
Architecture: amd64

Package: lib
Version: 2.0
Architecture: amd64

## source security
Package: lib
Version: 1.5
Architecture: amd64

## request
packages: lib=3.0
variant: custom
## expect-error
package "lib" has no version "3.0" in any source (available: 1.5, 2.0)
