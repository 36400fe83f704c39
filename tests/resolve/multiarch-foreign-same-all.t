# Multi-Arch: same and foreign packages and Architecture: all ones resolve
# on one architecture; stanzas of other architectures in the same index are
# ignored; the lockfile fields keep Multi-Arch.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: libfoo1, foo-tool, foo-data

Package: libfoo1
Version: 1.2
Architecture: amd64
Multi-Arch: same

Package: libfoo1
Version: 1.3
Architecture: i386
Multi-Arch: same

Package: foo-tool
Version: 1.2
Architecture: amd64
Multi-Arch: foreign
Depends: libfoo1 (= 1.2)

Package: foo-data
Version: 1.2
Architecture: all
Multi-Arch: foreign

Package: i386-only
Version: 1
Architecture: i386

## request
packages: app
variant: custom
## expect
app=1
libfoo1=1.2
foo-tool=1.2
foo-data=1.2
