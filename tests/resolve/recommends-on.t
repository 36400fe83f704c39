# With recommends, Recommends are installed like Depends (first alternative,
# recursively), and one that cannot be met is left out without an error.
## source main
Package: app
Version: 1
Architecture: amd64
Recommends: rec1, rec2 | rec3, not-in-the-archive

Package: rec1
Version: 1
Architecture: amd64
Recommends: rec4

Package: rec2
Version: 1
Architecture: amd64

Package: rec3
Version: 1
Architecture: amd64

Package: rec4
Version: 1
Architecture: amd64

## request
packages: app
variant: custom
recommends: yes
## expect
app=1
rec1=1
rec2=1
rec4=1
