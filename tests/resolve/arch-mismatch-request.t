# name:arch must name the package's own architecture.
## source main
Package: tzdata
Version: 2024a
Architecture: all

## request
packages: tzdata:amd64
variant: custom
## expect-error
package "tzdata:amd64" is "tzdata:all"
