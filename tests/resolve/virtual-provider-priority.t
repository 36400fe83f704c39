# Of several providers of a virtual dependency apt takes the Essential one,
# then the one of the most important Priority (as awk -> mawk in minbase).
## source main
Package: needs-awk
Version: 1
Architecture: amd64
Depends: awk

Package: gawk
Version: 5.2
Architecture: amd64
Priority: optional
Provides: awk

Package: mawk
Version: 1.3.4
Architecture: amd64
Priority: required
Provides: awk

Package: original-awk
Version: 2012
Architecture: amd64
Priority: optional
Provides: awk

Package: needs-sh
Version: 1
Architecture: amd64
Depends: sh

Package: zsh-static
Version: 5
Architecture: amd64
Priority: required
Provides: sh

Package: dash
Version: 0.5
Architecture: amd64
Priority: optional
Essential: yes
Provides: sh

## request
packages: needs-awk needs-sh
variant: custom
## expect
needs-awk=1
mawk=1.3.4
needs-sh=1
dash=0.5
