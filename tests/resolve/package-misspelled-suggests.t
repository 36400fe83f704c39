# A misspelled name suggests the closest names the sources have (at most 3).
## source main
Package: openssh-server
Version: 1
Architecture: amd64

Package: openssh-client
Version: 1
Architecture: amd64

Package: openssh-sftp-server
Version: 1
Architecture: amd64

Package: unrelated
Version: 1
Architecture: amd64

## request
packages: openssh-sever
variant: custom
## expect-error
package "openssh-sever" is not in any source; did you mean "openssh-server"?
