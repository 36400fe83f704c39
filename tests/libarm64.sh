# libarm64.sh — arm64 images on this (amd64) machine.  Source it after
# libtest.sh.
#
#   require_qemu_aarch64        # skip the file, saying why, when arm64 programs cannot run
#   arm64_deb_cache build       # BUILD/cache/debs is the persistent cache, keyed by sha256
#   elf_machine FILE            # "aarch64", "x86_64", ... from the ELF header

# require_qemu_aarch64: a binfmt_misc handler for aarch64 ELF programs,
# enabled, with the F flag (what "apt2ostree configure" checks).  As root,
# mount binfmt_misc and enable qemu-user-static's handler when they are not
# (what tools/setup does on a fresh machine).
require_qemu_aarch64 () {
    local dir=/proc/sys/fs/binfmt_misc
    if [ "$(id -u)" = 0 ]; then
        [ -e $dir/register ] || mount -t binfmt_misc binfmt_misc $dir 2>/dev/null || true
        if [ -e $dir/register ] && ! grep -qx enabled $dir/qemu-aarch64 2>/dev/null \
           && command -v update-binfmts > /dev/null; then
            update-binfmts --enable qemu-aarch64 2>/dev/null || true
        fi
    fi
    [ -e $dir/register ] || skip_all "binfmt_misc is not mounted (mount -t binfmt_misc binfmt_misc $dir)"
    grep -qx enabled $dir/qemu-aarch64 2>/dev/null \
        || skip_all "no enabled qemu-aarch64 binfmt_misc handler (apt-get install qemu-user-static binfmt-support; update-binfmts --enable qemu-aarch64)"
    grep -q '^flags: .*F' $dir/qemu-aarch64 \
        || skip_all "the qemu-aarch64 binfmt_misc handler has no F flag: it cannot run inside a chroot"
}

ARM64_CACHE=/var/cache/apt2ostree-tests
mkdir -p "$ARM64_CACHE/debs" 2>/dev/null && [ -w "$ARM64_CACHE/debs" ] \
    || ARM64_CACHE="${TMPDIR:-/tmp}/apt2ostree-tests"
mkdir -p "$ARM64_CACHE/debs"

# arm64_deb_cache BUILDDIR: the build's download cache (BUILDDIR/cache/debs,
# files named by sha256) is the cache that outlives the tests.
arm64_deb_cache () {
    mkdir -p "$1/cache"
    [ -e "$1/cache/debs" ] || ln -s "$ARM64_CACHE/debs" "$1/cache/debs"
}

# elf_machine FILE: the machine of an ELF file (bytes 18-19, little endian).
elf_machine () {
    case "$(od -An -tx1 -j18 -N2 "$1" | tr -d ' \n')" in
        b700) echo aarch64 ;;
        3e00) echo x86_64 ;;
        *) echo unknown ;;
    esac
}
