# A package the request names is never displaced by a conflicting one.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: pipe-audio

Package: pipe-audio
Version: 1
Architecture: amd64
Conflicts: pulse

Package: pulse
Version: 1
Architecture: amd64

## request
packages: pulse app
variant: custom
## expect-error
pipe-audio conflicts with pulse but pulse 1 is to be installed
