# A "pkg:any" dependency is met by pkg itself on a single-architecture
# image (libsolv does not implement Multi-Arch).
## source main
Package: script
Version: 1
Architecture: all
Depends: perl:any (>= 5.30), python3:any

Package: perl
Version: 5.36.0-7
Architecture: amd64
Multi-Arch: allowed

Package: python3
Version: 3.11.2-1
Architecture: amd64
Multi-Arch: allowed

## request
packages: script
variant: custom
## expect
script=1
perl=5.36.0-7
python3=3.11.2-1
