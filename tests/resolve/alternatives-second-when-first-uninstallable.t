# When the first alternative cannot be installed (its dependency is missing,
# or it does not exist) apt takes the next one.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: broken | missing | works, gone | fallback

Package: broken
Version: 1
Architecture: amd64
Depends: not-in-the-archive

Package: works
Version: 2
Architecture: amd64

Package: fallback
Version: 3
Architecture: all

## request
packages: app
variant: custom
## expect
app=1
works=2
fallback=3
