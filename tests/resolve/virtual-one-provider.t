# A dependency on a virtual package that one package provides installs it.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: mail-transport-agent

Package: postfix
Version: 3.7
Architecture: amd64
Provides: mail-transport-agent

## request
packages: app
variant: custom
## expect
app=1
postfix=3.7
