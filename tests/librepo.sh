# librepo.sh — signed apt repositories made at test time.  Source it after
# libtest.sh:
#
#   repo_key archive                      # a gpg key: $SCRATCH/keys/archive.{gpg,asc}
#   repo_deb www hello 1.0 amd64 "Depends: libfoo (>= 2)"
#   repo_dists www bookworm amd64         # Packages{,.gz,.xz}, Release
#   repo_sign www bookworm archive        # InRelease, Release.gpg
#   start_httpd www
#
# Everything lives under $SCRATCH, so keys and repositories can be shared by
# the tests of one file.

# repo_gpg NAME ARGS…: gpg on key NAME's private home.
repo_gpg () {
    local name=$1; shift
    GNUPGHOME="$SCRATCH/gnupg-$name" gpg --batch --quiet --no-tty --pinentry-mode loopback \
        --passphrase '' "$@"
}

_repo_agents=
_repo_stop_agents () {
    local h
    for h in $_repo_agents; do
        GNUPGHOME="$h" gpgconf --kill all 2>/dev/null || true
    done
}

# repo_key NAME [EXPIRE] [FAKED-TIME]: a new ed25519 signing key in
# $SCRATCH/gnupg-NAME; its public key in $SCRATCH/keys/NAME.gpg (binary) and
# NAME.asc (armored), its fingerprint in $SCRATCH/keys/NAME.fpr.  EXPIRE is
# gpg's (default: never); FAKED-TIME (e.g. 20200101T000000) makes the key as
# if it were then, for an expired key.
repo_key () {
    local name=$1 expire=${2:-never} faked=${3:-}
    mkdir -p "$SCRATCH/keys"
    mkdir -m 700 -p "$SCRATCH/gnupg-$name"
    _repo_agents="$_repo_agents $SCRATCH/gnupg-$name"
    repo_gpg "$name" ${faked:+--faked-system-time "$faked"} \
        --quick-gen-key "apt2ostree test key $name <$name@test.invalid>" ed25519 sign "$expire"
    repo_gpg "$name" --export > "$SCRATCH/keys/$name.gpg"
    repo_gpg "$name" --armor --export > "$SCRATCH/keys/$name.asc"
    repo_gpg "$name" --with-colons --list-keys | awk -F: '$1 == "fpr" { print $10; exit }' \
        > "$SCRATCH/keys/$name.fpr"
}

# repo_revoke NAME: revoke key NAME; its exported public keys now carry the
# revocation.
repo_revoke () {
    local name=$1 fpr
    fpr=$(cat "$SCRATCH/keys/$name.fpr")
    sed 's/^:-----BEGIN/-----BEGIN/' "$SCRATCH/gnupg-$name/openpgp-revocs.d/$fpr.rev" \
        > "$SCRATCH/keys/$name.rev"
    repo_gpg "$name" --import "$SCRATCH/keys/$name.rev" 2>/dev/null
    repo_gpg "$name" --export > "$SCRATCH/keys/$name.gpg"
    repo_gpg "$name" --armor --export > "$SCRATCH/keys/$name.asc"
}

# repo_deb ROOT NAME VERSION ARCH [CONTROL-LINES]: a trivial package (one
# file, /usr/share/doc/NAME/hello) in ROOT/pool/main/.  CONTROL-LINES are
# extra control fields, newline-separated ("Depends: x\nEssential: yes").
repo_deb () {
    local root=$1 name=$2 version=$3 arch=$4 extra=${5:-}
    local build="$SCRATCH/debbuild/$name-$version-$arch"
    rm -rf "$build"
    mkdir -p "$build/DEBIAN" "$build/usr/share/doc/$name" "$root/pool/main"
    echo "$name $version" > "$build/usr/share/doc/$name/hello"
    {
        echo "Package: $name"
        echo "Version: $version"
        echo "Architecture: $arch"
        echo "Maintainer: apt2ostree tests <tests@test.invalid>"
        printf '%b\n' "$extra" | grep -q '^Priority:' || echo "Priority: optional"
        [ -z "$extra" ] || printf '%b\n' "$extra"
        echo "Description: test package $name"
    } > "$build/DEBIAN/control"
    dpkg-deb --root-owner-group -Zgzip --build "$build" \
        "$root/pool/main/${name}_${version}_${arch}.deb" >/dev/null
}

# repo_dists ROOT SUITE [ARCHS] [RELEASE-LINES]: index ROOT/pool into
# ROOT/dists/SUITE/main/binary-ARCH/Packages{,.gz,.xz} for each of ARCHS
# (default amd64) and write an unsigned Release (Origin $REPO_ORIGIN, default
# "apt2ostree-test")
# with SHA256 sums.  With "all" among ARCHS, arch:all packages go to
# binary-all only (an archive without "No-Support-for-Architecture-all").
# RELEASE-LINES are extra fields put after Date: ("Valid-Until: …",
# "Acquire-By-Hash: yes"); with Acquire-By-Hash the indices are also stored
# under by-hash/SHA256/.
repo_dists () {
    local root=$1 suite=$2 archs=${3:-amd64} extra=${4:-}
    ( cd "$root"
      rm -rf "dists/$suite"
      local arch bin
      for arch in $archs; do
          bin="dists/$suite/main/binary-$arch"
          mkdir -p "$bin"
          apt-ftparchive --arch "$arch" packages pool 2>/dev/null > "$bin/Packages.all"
          case " $archs " in
              *" all "*) [ "$arch" = all ] || \
                  awk 'BEGIN { RS = ""; ORS = "\n\n" } !/\nArchitecture: all\n/' \
                      "$bin/Packages.all" > "$bin/Packages" ;;
          esac
          [ -e "$bin/Packages" ] || mv "$bin/Packages.all" "$bin/Packages"
          rm -f "$bin/Packages.all"
          gzip -9n < "$bin/Packages" > "$bin/Packages.gz"
          xz -9 < "$bin/Packages" > "$bin/Packages.xz"
      done
      apt-ftparchive \
          -o APT::FTPArchive::Release::Origin="${REPO_ORIGIN:-apt2ostree-test}" \
          -o APT::FTPArchive::Release::Suite="$suite" \
          -o APT::FTPArchive::Release::Codename="$suite" \
          -o APT::FTPArchive::Release::Architectures="$archs" \
          -o APT::FTPArchive::Release::Components=main \
          -o APT::FTPArchive::Md5=false -o APT::FTPArchive::SHA1=false \
          -o APT::FTPArchive::SHA512=false \
          release "dists/$suite" > "$SCRATCH/Release.tmp"
      if [ -n "$extra" ]; then
          awk -v extra="$extra" '{ print } /^Date:/ { print extra }' "$SCRATCH/Release.tmp" \
              > "dists/$suite/Release"
      else
          mv "$SCRATCH/Release.tmp" "dists/$suite/Release"
      fi
      if printf '%s\n' "$extra" | grep -q '^Acquire-By-Hash: yes'; then
          local f
          for arch in $archs; do
              bin="dists/$suite/main/binary-$arch"
              mkdir -p "$bin/by-hash/SHA256"
              for f in "$bin"/Packages*; do
                  cp "$f" "$bin/by-hash/SHA256/$(sha256sum < "$f" | cut -d' ' -f1)"
              done
          done
      fi
    )
}

# repo_sign ROOT SUITE KEY: InRelease (clearsigned) and Release.gpg
# (detached) for ROOT/dists/SUITE/Release, by key KEY.
repo_sign () {
    local dir="$1/dists/$2" key=$3
    rm -f "$dir/InRelease" "$dir/Release.gpg"
    repo_gpg "$key" ${REPO_SIGN_TIME:+--faked-system-time "$REPO_SIGN_TIME"} \
        --clearsign --output "$dir/InRelease" "$dir/Release"
    repo_gpg "$key" ${REPO_SIGN_TIME:+--faked-system-time "$REPO_SIGN_TIME"} \
        --detach-sign --output "$dir/Release.gpg" "$dir/Release"
}

# repo_publish ROOT SUITE ARCHS KEY: the indices (repo_dists) and their
# signatures by KEY (repo_sign), as an archive publishes a suite.
repo_publish () {
    repo_dists "$1" "$2" "$3"
    repo_sign "$1" "$2" "$4"
}

# repo_sources_line URL SUITE KEY [OPTIONS]: a one-line sources entry.
repo_sources_line () {
    echo "deb [signed-by=$SCRATCH/keys/$3.gpg${4:+ $4}] $1 $2 main"
}

# repo_serve [HTTPD-OPTION...] ROOT: start_httpd, keeping the gpg agents'
# cleanup.
repo_serve () {
    start_httpd "$@"
    trap '_repo_stop_agents; kill ${_httpd_pids:-} 2>/dev/null; cleanup_scratch' EXIT
}

trap '_repo_stop_agents; cleanup_scratch' EXIT
