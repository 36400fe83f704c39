# Providers equal in every way apt looks at: apt takes the package it
# created last, and it creates packages as it first meets their names in
# the index (here prov-b early, through a Suggests), so prov-a wins although
# prov-b's stanza comes later.  (Checked against apt-get 2.6.)
## source main
Package: early
Version: 1
Architecture: amd64
Priority: optional
Suggests: prov-b

Package: app
Version: 1
Architecture: amd64
Priority: optional
Depends: virt

Package: prov-a
Version: 1
Architecture: amd64
Priority: optional
Provides: virt

Package: prov-b
Version: 1
Architecture: amd64
Priority: optional
Provides: virt

## request
packages: app
variant: custom
## expect
app=1
prov-a=1
