# A package that conflicts with one apt chose earlier on its own takes its
# place (as pipewire-audio does pulseaudio for gnome); the dependency that
# chose it is met by the alternative instead, and what only the displaced
# package needed is not installed.
## source main
Package: app
Version: 1
Architecture: amd64
Depends: x, y

Package: x
Version: 1
Architecture: amd64
Depends: pulse | pipe-pulse

Package: pulse
Version: 1
Architecture: amd64
Depends: pulse-lib

Package: pulse-lib
Version: 1
Architecture: amd64

Package: y
Version: 1
Architecture: amd64
Depends: pipe-audio

Package: pipe-audio
Version: 1
Architecture: amd64
Depends: pipe-pulse
Conflicts: pulse

Package: pipe-pulse
Version: 1
Architecture: amd64

## request
packages: app
variant: custom
## expect
app=1
x=1
y=1
pipe-audio=1
pipe-pulse=1
