# A conflict with a virtual package keeps out its other providers, but not
# the package itself (a package may conflict with what it provides).
## source main
Package: app
Version: 1
Architecture: amd64
Depends: mta

Package: postfix
Version: 3.7
Architecture: amd64
Priority: optional
Provides: mail-transport-agent
Conflicts: mail-transport-agent

Package: exim4
Version: 4.96
Architecture: amd64
Priority: important
Provides: mail-transport-agent
Conflicts: mail-transport-agent

Package: mta
Version: 1
Architecture: all
Depends: mail-transport-agent

## request
packages: postfix app
variant: custom
## expect
postfix=3.7
app=1
mta=1
