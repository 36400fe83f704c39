# apt walks Depends in the order they are written: zz (first) picks q1 for
# "q1 | shared" before aa brings in shared; walking aa first would have met
# that dependency with shared alone.  (aa comes first in the index, so any
# order by name or by id would walk it first.)
## source main
Package: aa
Version: 1
Architecture: amd64
Depends: shared

Package: app
Version: 1
Architecture: amd64
Depends: zz, aa

Package: zz
Version: 1
Architecture: amd64
Depends: q1 | shared

Package: q1
Version: 1
Architecture: amd64

Package: shared
Version: 1
Architecture: amd64

## request
packages: app
variant: custom
## expect
app=1
zz=1
aa=1
q1=1
shared=1
