# A versioned Provides satisfies a versioned dependency; an unversioned
# Provides never does (Debian Policy 7.5), so the real package is taken.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: libfoo-abi (>= 2), libbar (>= 3)

Package: libfoo2
Version: 2.5-1
Architecture: amd64
Provides: libfoo-abi (= 2.5)

Package: libfoo1
Version: 1.0
Architecture: amd64
Provides: libfoo-abi (= 1.0)

Package: libbar-compat
Version: 9
Architecture: amd64
Provides: libbar

Package: libbar
Version: 3.1
Architecture: amd64

## request
packages: app
variant: custom
## expect
app=1
libfoo2=2.5-1
libbar=3.1
