# Asking for a virtual package that several packages provide is refused,
# with the candidates listed, as apt-get does.
## source main
Package: exim4
Version: 4.96
Architecture: amd64
Provides: mail-transport-agent

Package: postfix
Version: 3.7
Architecture: amd64
Provides: mail-transport-agent

## request
packages: mail-transport-agent
variant: custom
## expect-error
package "mail-transport-agent" is virtual and several packages provide it: exim4, postfix; name one
