# Stanzas as real indices write them: multi-line descriptions, field names
# in any case, several blank lines between stanzas, a stanza with no
# Package field (skipped), no newline at the end.
## source main
Package: app
Version: 1:2.0-1
architecture: amd64
Description: an application
 with a long description
 .
 over several lines
DEPENDS: lib (>= 1.0),
 tool
Essential: no
Priority: optional



Origin: not a package

Package: lib
Version: 1.0
Architecture: amd64
Description: a library
Filename: pool/main/l/lib/lib_1.0_amd64.deb

Package: tool
Version: 3
Architecture: all
## request
packages: app
variant: custom
## expect
app=1:2.0-1
lib=1.0
tool=3
