# A package no source has is named in the error.
## source main
Package: app
Version: 1
Architecture: amd64

## request
packages: app no-such-package
variant: custom
## expect-error
package "no-such-package" is not in any source
