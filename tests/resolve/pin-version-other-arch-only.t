# name=version of a package built only for other architectures names them,
# per source, each once; a source of negative priority is not named.
## source main
Package: tool
Version: 1
Architecture: i386

Package: tool
Version: 1
Architecture: arm64

## source extra
Package: tool
Version: 2
Architecture: i386

Package: tool
Version: 3
Architecture: i386

## source never priority -1
Package: tool
Version: 4
Architecture: riscv64

## request
packages: tool=1
variant: custom
## expect-error
package "tool" is only built for arm64, i386 in main and i386 in extra, not for amd64
