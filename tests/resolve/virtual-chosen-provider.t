# A provider that is already chosen satisfies a virtual dependency: nothing
# else that provides it is added, even the preferred one.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: mail-transport-agent

Package: exim4
Version: 4.96
Architecture: amd64
Priority: required
Provides: mail-transport-agent

Package: postfix
Version: 3.7
Architecture: amd64
Priority: optional
Provides: mail-transport-agent

## request
packages: postfix app
variant: custom
## expect
app=1
postfix=3.7
