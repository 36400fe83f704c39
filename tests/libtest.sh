# libtest.sh — shared by every tests/test-*.sh.  Source it, then write
#
#   test_expect_success 'combine refuses two different files at one path' '
#       a2o combine --ref out a b && false || true
#   '
#   test_done
#
# Each test body runs in a subshell with "set -e" in a fresh directory under
# the test file's scratch directory ($SCRATCH), and prints one TAP line.

set -u

: "${APT2OSTREE:=apt2ostree}"
: "${TOP_SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
export SOURCE_DATE_EPOCH=0
unset APT2OSTREE_REPO

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/a2o-test.XXXXXX")
cleanup_scratch () {
    if [ -n "${A2O_KEEP_SCRATCH:-}" ]; then
        echo "# scratch kept in $SCRATCH" >&2
    else
        # Checkouts may hold read-only directories.
        chmod -R u+w "$SCRATCH" 2>/dev/null || true
        rm -rf "$SCRATCH"
    fi
}
trap cleanup_scratch EXIT

_test_count=0
_test_failed=0
_test_planned=

# a2o ARGS…: the apt2ostree under test, on the test's repository.
a2o () {
    "$APT2OSTREE" "$@"
}

say () { echo "# $*"; }

test_expect_success () {
    local name=$1 body=$2
    _test_count=$((_test_count + 1))
    local dir="$SCRATCH/t$_test_count"
    mkdir -p "$dir"
    local output
    output=$( cd "$dir" && set -e && eval "$body" 2>&1 )
    local rc=$?
    if [ $rc -eq 0 ]; then
        echo "ok $_test_count - $name"
    else
        echo "not ok $_test_count - $name"
        _test_failed=$((_test_failed + 1))
        printf '%s\n' "$output" | tail -n 40 | sed 's/^/#   /'
        echo "#   (exit status $rc)"
    fi
}

# test_expect_todo 'name' 'reason' 'body': a known bug, reported and not
# yet fixed (TAP's TODO): its failure does not fail the file, and its
# success does (an unexpected pass), so the mark goes with the fix.
test_expect_todo () {
    local name=$1 reason=$2 body=$3
    _test_count=$((_test_count + 1))
    local dir="$SCRATCH/t$_test_count" output rc
    mkdir -p "$dir"
    output=$( cd "$dir" && set -e && eval "$body" 2>&1 )
    rc=$?
    if [ $rc -eq 0 ]; then
        echo "ok $_test_count - $name # TODO $reason"
    else
        echo "not ok $_test_count - $name # TODO $reason"
        printf '%s\n' "$output" | tail -n 10 | sed 's/^/#   /'
    fi
}

# test_skip 'name' 'reason': a test that cannot run here, and why.
test_skip () {
    _test_count=$((_test_count + 1))
    echo "ok $_test_count - $1 # SKIP $2"
}

# skip_all 'reason': the whole file cannot run here.
skip_all () {
    echo "1..0 # SKIP $1"
    exit 0
}

test_done () {
    echo "1..$_test_count"
    [ $_test_failed -eq 0 ]
}

# --- assertions: each prints what it expected on failure and returns 1 ---

fail () { echo "FAIL: $*" >&2; return 1; }

assert_streq () {
    [ "$1" = "$2" ] || fail "expected \"$2\", got \"$1\""
}

assert_file_has_content () {
    grep -q -e "$2" "$1" || { sed 's/^/  | /' "$1" >&2; fail "$1 does not match \"$2\""; }
}

assert_not_file_has_content () {
    ! grep -q -e "$2" "$1" || { sed 's/^/  | /' "$1" >&2; fail "$1 matches \"$2\""; }
}

assert_has_file () { [ -e "$1" ] || [ -L "$1" ] || fail "$1 does not exist"; }
assert_not_has_file () { ! { [ -e "$1" ] || [ -L "$1" ]; } || fail "$1 exists"; }

# expect_failure FILE CMD…: CMD must exit non-zero; its stderr goes to FILE.
expect_failure () {
    local errfile=$1; shift
    if "$@" 2>"$errfile"; then
        fail "\"$*\" succeeded but should have failed"
    fi
    cat "$errfile" >&2
}

# assert_one_line FILE: error output is exactly one line.
assert_one_line () {
    local n
    n=$(wc -l < "$1")
    [ "$n" -eq 1 ] || { sed 's/^/  | /' "$1" >&2; fail "$1 has $n lines, expected one"; }
}

# ref_commit REPO REF: the commit a ref points at.
ref_commit () { cat "$1/refs/heads/$2"; }

# mtime FILE: modification time with nanoseconds.
mtime () { stat -c %.9Y "$1"; }

# A test repository in the current directory, in the mode a user would get.
new_repo () { a2o --repo "${1:-repo}" init ${2:+--mode "$2"}; }

# ls_tree REPO REV: a stable listing of a tree: type, mode, uid, gid, path,
# and symlink target, one entry a line, sorted.
ls_tree () {
    ostree --repo="$1" ls -R "$(rev_commit "$1" "$2")" | awk '{ $1=$1; print }' | sort
}

# rev_commit REPO REV: the full commit checksum of a ref (or a checksum).
# The ostree CLI reads a short ref such as "a" or "c3" as a checksum prefix
# when one matches, so tests hand it full checksums.
rev_commit () {
    if [ -f "$1/refs/heads/$2" ]; then cat "$1/refs/heads/$2"; else echo "$2"; fi
}

# commit_dir REPO REF DIR [OSTREE-COMMIT-OPTIONS…]: an input tree, made with
# the ostree CLI (not with the code under test).
commit_dir () {
    local repo=$1 ref=$2 dir=$3; shift 3
    ostree --repo="$repo" commit --no-bindings -b "$ref" --tree=dir="$dir" "$@" > /dev/null
}

# start_httpd ROOT: serve ROOT on 127.0.0.1 (tests/httpd.py) until the test
# file exits; sets HTTPD_URL (http://127.0.0.1:PORT) and HTTPD_LOG (the
# request log).
start_httpd () {
    local portfile="$SCRATCH/httpd.$$.$RANDOM.port"
    HTTPD_LOG="$portfile.log"
    : > "$HTTPD_LOG"
    python3 "$TOP_SRCDIR/tests/httpd.py" "$1" "$portfile" "$HTTPD_LOG" &
    _httpd_pids="${_httpd_pids:-} $!"
    local i
    for i in $(seq 100); do
        [ -s "$portfile" ] && break
        sleep 0.05
    done
    HTTPD_URL="http://127.0.0.1:$(cat "$portfile")"
    trap 'kill $_httpd_pids 2>/dev/null; cleanup_scratch' EXIT
}

# start_proxy [NAME=ADDRESS]...: a forward HTTP proxy on 127.0.0.1
# (tests/proxy.py, which connects to ADDRESS for host NAME) until the test
# file exits; sets PROXY_URL (http://127.0.0.1:PORT) and PROXY_LOG (one
# "GET URL" line for each request it forwarded).
start_proxy () {
    local portfile="$SCRATCH/proxy.$$.$RANDOM.port"
    PROXY_LOG="$portfile.log"
    : > "$PROXY_LOG"
    python3 "$TOP_SRCDIR/tests/proxy.py" "$portfile" "$PROXY_LOG" "$@" &
    _httpd_pids="${_httpd_pids:-} $!"
    local i
    for i in $(seq 100); do
        [ -s "$portfile" ] && break
        sleep 0.05
    done
    PROXY_URL="http://127.0.0.1:$(cat "$portfile")"
    trap -p EXIT | grep -q _httpd_pids || trap 'kill $_httpd_pids 2>/dev/null; cleanup_scratch' EXIT
}

# host_debian_mirror, host_sources_for: the host's own apt configuration.
. "$TOP_SRCDIR/tests/libsources.sh"

# assert_same_dpkg_database REF OURS: the dpkg database of the image at OURS
# is the one at REF (made by mmdebstrap, dpkg's own --unpack and
# --configure): the status file and every info file byte for byte, the
# same diversions, statoverrides and file-trigger interests (whose order
# follows the order packages were unpacked in).
assert_same_dpkg_database () {
    local ref=$1/var/lib/dpkg ours=$2/var/lib/dpkg f
    diff -u "$ref/status" "$ours/status" || return 1
    diff <(ls "$ref/info") <(ls "$ours/info") || return 1
    for f in "$ref"/info/*; do
        cmp "$f" "$ours/info/${f##*/}" || return 1
    done
    diff <(paste - - - < "$ref/diversions" | sort) <(paste - - - < "$ours/diversions" | sort) || return 1
    diff <(cat "$ref/statoverride" 2>/dev/null) <(cat "$ours/statoverride" 2>/dev/null) || return 1
    diff <(sort "$ref/triggers/File") <(sort "$ours/triggers/File")
}

# assert_dpkg_clean ROOT: in the image at ROOT every package is installed
# and configured (ii), and dpkg --audit and dpkg --verify say nothing.
assert_dpkg_clean () {
    local root=$1
    dpkg --root="$root" -l | awk 'NR > 5 { print $1 }' | sort | uniq -c > "$root.states"
    cat "$root.states"
    assert_streq "$(awk '{ print $2 }' "$root.states")" ii
    dpkg --root="$root" --audit > "$root.audit"
    [ ! -s "$root.audit" ] || { cat "$root.audit"; false; }
    dpkg --root="$root" --verify > "$root.verify" || true
    [ ! -s "$root.verify" ] || { cat "$root.verify"; false; }
}

# require_mirror: sets MIRROR to the host's Debian mirror, or skips the whole
# test file with the reason when none is configured or it does not answer.
require_mirror () {
    MIRROR=$(host_debian_mirror)
    [ -n "$MIRROR" ] || skip_all "the host's apt configuration names no Debian bookworm mirror"
    curl -fsS --max-time 20 -o /dev/null "$MIRROR/dists/bookworm/InRelease" \
        || skip_all "the mirror $MIRROR (from the host's apt configuration) does not answer"
}
