# A package and its dependency chain; nothing else is installed.
## source main
Package: a
Version: 1.0
Architecture: amd64
Priority: optional
Depends: b (>= 2), c

Package: b
Version: 2.1
Architecture: amd64
Depends: c

Package: c
Version: 3
Architecture: all

Package: unrelated
Version: 1
Architecture: amd64

## request
packages: a
variant: custom
## expect
a=1.0
b=2.1
c=3
## expect-before
c < b
b < a
