# With equal pin priorities the highest version wins (apt's default), from
# whichever source has it.
## source bookworm
Package: app
Version: 1.0-1
Architecture: amd64

Package: tool
Version: 3
Architecture: amd64

## source bookworm-updates
Package: app
Version: 1.0-1+deb12u1
Architecture: amd64

Package: tool
Version: 2
Architecture: amd64

## request
packages: app tool
variant: custom
## expect
app=1.0-1+deb12u1
tool=3
