# A package of another architecture cannot be asked for: images have one
# architecture.
## source main
Package: libfoo1
Version: 1.3
Architecture: i386
Multi-Arch: same

## request
packages: libfoo1:i386
variant: custom
## expect-error
package "libfoo1:i386": architecture i386 is not the image's (amd64)
