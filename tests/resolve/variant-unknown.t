# An unknown variant is refused, listing the known ones.
## source main
Package: a
Version: 1
Architecture: amd64

## request
variant: minimal
packages: a
## expect-error
unknown variant "minimal" (known: essential, apt, minbase, required, buildd, important, standard, custom)
