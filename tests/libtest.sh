# libtest.sh — shared by every tests/test-*.sh.  Source it, then write
#
#   test_expect_success 'combine refuses two different files at one path' '
#       expect_failure err a2o --repo repo combine --ref out a b
#       assert_file_has_content err "\"/etc/shared\" differs between \"a\" and \"b\""
#   '
#   test_done
#
# Each test body runs in a subshell with "set -e" in a fresh directory under
# the test file's scratch directory ($SCRATCH), and prints one TAP line.
# set -e does not see every failure: not that of "! CMD" (anywhere but as
# the body's last statement), nor that of A in "A && B", nor anything
# before "|| true".  Assert those as "! CMD || fail WHY", two statements,
# or expect_failure.

set -u

: "${APT2OSTREE:=apt2ostree}"
: "${TOP_SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
export SOURCE_DATE_EPOCH=0
unset APT2OSTREE_REPO

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/a2o-test.XXXXXX")
# Servers started with stop_at_exit PID...: stopped, and waited for, when
# the test file exits, before its scratch directory goes.
_exit_pids=
stop_at_exit () { _exit_pids="$_exit_pids $*"; }
cleanup_scratch () {
    # (A killed server's status is no failure: a test body that started
    # one runs this under set -e when it ends.)
    if [ -n "$_exit_pids" ]; then
        kill $_exit_pids 2>/dev/null || :
        wait $_exit_pids 2>/dev/null || :
    fi
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
    # Read by .ci/run, which lists the slowest test files: the seconds this
    # file took, and the CPU seconds it and everything it ran used (user +
    # system, from "times"): a file far below its seconds waits (servers,
    # qemu, the network), one near twice them keeps both cores busy.
    local cpu
    times > "$SCRATCH/times"   # (in this shell: a subshell's children are not its)
    cpu=$(awk '{ for (i = 1; i <= NF; i++) { split($i, p, /[ms]/); t += p[1] * 60 + p[2] } }
               END { printf "%.0f", t }' "$SCRATCH/times")
    echo "# elapsed: $SECONDS s (cpu $cpu s)"
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
# (It returns non-zero when CMD succeeds, also where set -e is off, as after
# "||" or in an "if".)
expect_failure () {
    local errfile=$1; shift
    if "$@" 2>"$errfile"; then
        cat "$errfile" >&2
        fail "\"$*\" succeeded but should have failed" || return 1
    fi
    cat "$errfile" >&2
}

# assert_one_line FILE: error output is exactly one line.
assert_one_line () {
    local n
    n=$(wc -l < "$1")
    [ "$n" -eq 1 ] || { sed 's/^/  | /' "$1" >&2; fail "$1 has $n lines, expected one"; }
}

# ran FILE: the steps ninja ran, from its "[n/m] description" lines in
# FILE, as "description" lines (none, and status 0, if it ran none).
ran () { grep -E '^\[[0-9]+/[0-9]+\] ' "$1" | sed 's/^\[[0-9]*\/[0-9]*\] //'; }

# as_nobody CMD…: CMD as uid and gid 65534, with no supplementary groups.
as_nobody () { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# again_as_nobody TEST: run the test file tests/TEST again as uid/gid 65534
# (a normal user: a user namespace, fakeroot, a bare-user repository), in
# a home of its own; for the *-unprivileged.sh twins of tests that run as
# root.  Skips what this machine cannot do.
again_as_nobody () {
    local test=$1
    [ "$(id -u)" = 0 ] || skip_all "not root: $test itself already runs unprivileged here"
    command -v setpriv > /dev/null || skip_all "setpriv (util-linux) is needed to drop to another user"
    as_nobody unshare --user --map-root-user true 2> /dev/null \
        || skip_all "unprivileged user namespaces are not available (kernel.unprivileged_userns_clone, user.max_user_namespaces)"
    as_nobody test -x "$APT2OSTREE" -a -r "$TOP_SRCDIR/tests/$test" \
        || skip_all "uid 65534 cannot read the build tree ($APT2OSTREE)"
    local home="$SCRATCH/nobody"
    mkdir -p "$home" && chown 65534:65534 "$home"
    chmod 755 "$SCRATCH"
    cd "$home"
    as_nobody env HOME="$home" TMPDIR="$home" APT2OSTREE="$APT2OSTREE" TOP_SRCDIR="$TOP_SRCDIR" \
        PATH="/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" bash "$TOP_SRCDIR/tests/$test"
}

# no_process_left MARK: no process on the host has MARK in its command
# line (those that do are listed, then killed).
no_process_left () {
    if pgrep -f -a -- "$1" > left; then
        pkill -9 -f -- "$1"
        cat left >&2
        fail "processes of the sandbox outlived it"
    fi
}

# listing DIR: every path below DIR (but a lost+found at its top, which
# mkfs makes) with its owner, mode, type and symlink target, one a line,
# sorted.
listing () {
    (cd "$1" && find . -path ./lost+found -prune -o -printf '%p %U:%G %m %y %l\n' | LC_ALL=C sort)
}

# dir_snapshot DIR: every entry under DIR (listing) and every file's
# sha256, so that two snapshots are equal only when DIR is byte-identical.
dir_snapshot () {
    listing "$1"
    (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum)
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

# _wait_for_file FILE: FILE exists within 10 s.
_wait_for_file () {
    local i
    for i in $(seq 200); do
        [ -e "$1" ] && return 0
        sleep 0.05
    done
    return 1
}

# start_httpd [OPTION...] ROOT: serve ROOT on 127.0.0.1 (tests/httpd.py,
# given OPTIONs such as --keep-alive) until the test file exits; sets
# HTTPD_URL (http://127.0.0.1:PORT) and HTTPD_LOG (the request log).  After
# private_net_start, the server listens in that network.
start_httpd () {
    local portfile="$SCRATCH/httpd.$$.$RANDOM.port"
    HTTPD_LOG="$portfile.log"
    : > "$HTTPD_LOG"
    "${_private_net_enter[@]}" python3 "$TOP_SRCDIR/tests/httpd.py" "${@:1:$#-1}" \
        "${@: -1}" "$portfile" "$HTTPD_LOG" &
    _httpd_pids="${_httpd_pids:-} $!"
    stop_at_exit $!
    _wait_for_file "$portfile"
    HTTPD_URL="http://127.0.0.1:$(cat "$portfile")"
    trap 'kill $_httpd_pids 2>/dev/null; cleanup_scratch' EXIT
}

# start_proxy [NAME=ADDRESS]...: a forward HTTP proxy on 127.0.0.1
# (tests/proxy.py, which connects to ADDRESS for host NAME) until the test
# file exits; sets PROXY_URL (http://127.0.0.1:PORT) and PROXY_LOG (one
# "GET URL" line for each request it forwarded).  After private_net_start,
# the proxy listens in that network.
start_proxy () {
    local portfile="$SCRATCH/proxy.$$.$RANDOM.port"
    PROXY_LOG="$portfile.log"
    : > "$PROXY_LOG"
    "${_private_net_enter[@]}" python3 "$TOP_SRCDIR/tests/proxy.py" "$portfile" "$PROXY_LOG" "$@" &
    stop_at_exit $!
    _wait_for_file "$portfile"
    PROXY_URL="http://127.0.0.1:$(cat "$portfile")"
}

# tls_certificates DIR NAME: in DIR, a certificate authority made now
# (ca.pem) and a server certificate it signed for NAME and 127.0.0.1
# (server.pem, server.key).
tls_certificates () {
    local dir=$1 name=$2
    mkdir -p "$dir"
    (
        cd "$dir" || exit 1
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
            -keyout ca.key -out ca.pem -subj "/CN=apt2ostree test CA" \
            -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign"
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -keyout server.key -out server.csr -subj "/CN=$name"
        printf '%s\n' "subjectAltName=DNS:$name,IP:127.0.0.1" "basicConstraints=CA:FALSE" \
            "extendedKeyUsage=serverAuth" > server.ext
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
            -extfile server.ext -out server.pem
    ) > "$dir/openssl.log" 2>&1 || { cat "$dir/openssl.log"; return 1; }
}

# start_tls_mirror ROOT NAME: nginx serving ROOT over https in the private
# network (private_net_start NAME first) until the test file exits, on
# port 443 with HTTP/2 and on port 8443 with HTTP/1.1 only, with a server
# certificate for NAME signed by a CA of the test's own: TLS_CA (its PEM
# file).  TLS_LOG gets one line per request: "CONNECTION REQUESTS-ON-IT
# PROTOCOL SESSION-REUSED STATUS URI" (nginx's $connection,
# $connection_requests, $server_protocol, $ssl_session_reused).
start_tls_mirror () {
    local root=$1 name=$2 dir="$SCRATCH/nginx"
    command -v nginx > /dev/null || skip_all "nginx is not installed (tools/setup installs it)"
    command -v openssl > /dev/null || skip_all "openssl is not installed (tools/setup installs it)"
    tls_certificates "$dir" "$name" || exit 1
    TLS_CA=$dir/ca.pem
    TLS_LOG=$dir/access.log
    : > "$TLS_LOG"
    mkdir -p "$dir/tmp"
    cat > "$dir/nginx.conf" <<EOF
user root;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 256; }
http {
    log_format connections '\$connection \$connection_requests \$server_protocol \$ssl_session_reused \$status \$request_uri';
    access_log $TLS_LOG connections;
    client_body_temp_path $dir/tmp;
    proxy_temp_path $dir/tmp;
    fastcgi_temp_path $dir/tmp;
    uwsgi_temp_path $dir/tmp;
    scgi_temp_path $dir/tmp;
    ssl_certificate $dir/server.pem;
    ssl_certificate_key $dir/server.key;
    keepalive_requests 10000;
    root $root;
    server { listen 127.0.0.1:443 ssl http2; server_name $name; }
    server { listen 127.0.0.1:8443 ssl; server_name $name; }
}
EOF
    "${_private_net_enter[@]}" nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" \
        -g 'daemon off;' > "$dir/nginx.out" 2>&1 &
    stop_at_exit $!
    _wait_for_file "$dir/nginx.pid" || { cat "$dir/nginx.out" "$dir/error.log"; exit 1; }
}

# --- a private network: loopback only, one name answered by tests/dnsd.py ---

_private_net_enter=()

# skip_unless_private_net: skip the whole test file unless commands can run
# in a network and mount namespace of their own (root and unshare).
skip_unless_private_net () {
    [ "$(id -u)" = 0 ] || skip_all "a private network (unshare --net --mount, bind mounts over /etc) needs root"
    local tool
    for tool in unshare nsenter ip mount python3; do
        command -v $tool > /dev/null || skip_all "$tool is not installed"
    done
    local why
    why=$(unshare --net --mount true 2>&1) \
        || skip_all "unshare --net --mount is not possible here: $why"
}

# private_net_start NAME: a network and mount namespace of the test file's
# own, kept until it exits, where only loopback is up and glibc's resolver
# (/etc/resolv.conf, /etc/hosts and /etc/nsswitch.conf bind-mounted over
# with files written here) asks tests/dnsd.py on 127.0.0.1:53, which
# answers NAME with 127.0.0.1: nothing leaves the machine.  DNS_LOG gets
# one line per query ("A NAME", "AAAA NAME").  Call it at the top of the
# file (not in a test body), after skip_unless_private_net; then
# start_httpd's servers listen there and in_private_net runs commands there.
private_net_start () {
    local name=$1 dir="$SCRATCH/private-net"
    mkdir -p "$dir"
    printf 'nameserver 127.0.0.1\n' > "$dir/resolv.conf"
    printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n' > "$dir/hosts"
    printf 'hosts: files dns\n' > "$dir/nsswitch.conf"
    # The holder sleeps in the namespace for as long as the file runs.
    unshare --net --mount sh -c '
        ip link set lo up || exit 1
        for f in resolv.conf hosts nsswitch.conf; do
            mount --bind "$1/$f" "/etc/$f" || exit 1
        done
        : > "$1/ready"
        exec sleep infinity' sh "$dir" > "$dir/holder.log" 2>&1 &
    local holder=$!
    stop_at_exit $holder
    _wait_for_file "$dir/ready" || skip_all "cannot set up a private network: $(cat "$dir/holder.log")"
    _private_net_enter=(nsenter --target "$holder" --net --mount)
    DNS_LOG="$dir/dns.log"
    : > "$DNS_LOG"
    "${_private_net_enter[@]}" python3 "$TOP_SRCDIR/tests/dnsd.py" "$name" "$DNS_LOG" "$dir/dns.ready" \
        > "$dir/dnsd.log" 2>&1 &
    stop_at_exit $!
    _wait_for_file "$dir/dns.ready" || skip_all "tests/dnsd.py did not start: $(cat "$dir/dnsd.log")"
}

# count_lines LINE FILE: how many lines of FILE are exactly LINE (e.g.
# "A NAME" in DNS_LOG: the lookups of NAME).
count_lines () { awk -v line="$1" '$0 == line { n++ } END { print n + 0 }' "$2"; }

# in_private_net CMD...: CMD in the private network (private_net_start), in
# the current directory, with no proxy from the environment.
in_private_net () {
    "${_private_net_enter[@]}" --wd="$PWD" env -u http_proxy -u HTTP_PROXY -u https_proxy \
        -u HTTPS_PROXY -u all_proxy -u ALL_PROXY -u no_proxy -u NO_PROXY "$@"
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
