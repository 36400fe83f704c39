# Asking for a virtual package that one package provides installs that one.
## source main
Package: postfix
Version: 3.7
Architecture: amd64
Provides: mail-transport-agent

## request
packages: mail-transport-agent
variant: custom
## expect
postfix=3.7
