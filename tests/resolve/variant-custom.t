# custom: only the listed packages and their dependencies.
## source main
Package: base-files
Version: 12.4
Architecture: amd64
Essential: yes
Priority: required
Depends: libc6

Package: libc6
Version: 2.36
Architecture: amd64
Priority: optional

Package: dash
Version: 0.5.12
Architecture: amd64
Essential: yes
Priority: required
Pre-Depends: libc6 (>= 2.34)

Package: init-helpers
Version: 1.65
Architecture: all
Essential: yes
Priority: optional
Depends: usrmerge | usr-is-merged

Package: usrmerge
Version: 37
Architecture: all
Priority: optional

Package: usr-is-merged
Version: 37
Architecture: all
Priority: required

Package: apt
Version: 2.6.1
Architecture: amd64
Priority: important
Depends: libapt-pkg6.0

Package: libapt-pkg6.0
Version: 2.6.1
Architecture: amd64
Priority: optional

Package: mawk
Version: 1.3.4
Architecture: amd64
Priority: required
Provides: awk

Package: req-tool
Version: 1
Architecture: amd64
Priority: required
Depends: libreq, awk

Package: libreq
Version: 1
Architecture: amd64
Priority: optional

Package: imp-tool
Version: 1
Architecture: amd64
Priority: important

Package: std-tool
Version: 1
Architecture: amd64
Priority: standard

Package: opt-tool
Version: 1
Architecture: amd64
Priority: optional
Depends: libc6

Package: build-essential
Version: 12.9
Architecture: amd64
Priority: optional
Depends: gcc

Package: gcc
Version: 12.2
Architecture: amd64
Priority: optional

## request
variant: custom
packages: opt-tool
## expect
opt-tool=1
libc6=2.36
