# When a real package has the dependency's name, apt takes it before any
# package that only provides the name.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: editor

Package: editor
Version: 2
Architecture: amd64
Priority: optional

Package: nano
Version: 7
Architecture: amd64
Priority: important
Provides: editor

## request
packages: app
variant: custom
## expect
app=1
editor=2
