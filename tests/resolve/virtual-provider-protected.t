# Among providers that are not Essential, apt prefers one marked Protected
# (or Important) before looking at Priority.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: init-provider

Package: plain-init
Version: 1
Architecture: amd64
Priority: required
Provides: init-provider

Package: protected-init
Version: 1
Architecture: amd64
Priority: optional
Protected: yes
Provides: init-provider

## request
packages: app
variant: custom
## expect
app=1
protected-init=1
