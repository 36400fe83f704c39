#!/bin/bash
# bench/cache.sh — a build from a shared cache (build --cache-url) against a
# cold build and against mmdebstrap, in the same run on the same machine:
#
#   1. machine A: lock Debian minbase ($SUITE, default bookworm) from the
#      mirror the host's apt configuration names, build it cold with
#      --cache-url (the cache is empty: every tree is built) and publish
#      its repository into a directory served on 127.0.0.1;
#   2. machine B: an empty build directory (no repository, no .deb cache)
#      and a mirror that does not answer builds the same lockfile with
#      --cache-url: every tree is pulled, no dpkg runs;
#   3. mmdebstrap --variant=minbase of the same release;
#   4. bytes: what B fetched from the cache server against the .debs' size.
#
# B fetches with $APT2OSTREE_CACHE_CONNECTIONS connections (default 32);
# CONNECTIONS="8 32 64" runs B again with each.  RTT="10 30" runs B again
# as if the cache were that many milliseconds away (bench/delay-proxy.py
# between B and the server): a cache in another building or region, where
# what counts is how many requests are in flight, not the CPU.
#
# The cache is served the way a team would serve it, by a static web server:
# SERVER=nginx (the default when nginx is installed: apt-get install
# nginx-light), or SERVER=python, the tests' tests/httpd.py (a thread and a
# connection per request), which costs B several seconds of its own.
#
# Run it as root from a build directory (it uses ./apt2ostree unless
# $APT2OSTREE is set).  It needs the network; it writes under $TMPDIR
# (default /var/tmp) and removes what it wrote.  Prints ratios: the
# machines are shared and noisy, seconds alone say little.
set -eu
A2O=${APT2OSTREE:-$PWD/apt2ostree}
TOP_SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "bench/cache.sh: run as root (stage 2 and mmdebstrap --mode=root)" >&2; exit 1; }
command -v mmdebstrap > /dev/null || { echo "bench/cache.sh: mmdebstrap is not installed" >&2; exit 1; }
SUITE=${SUITE:-bookworm}
if [ -z "${SERVER:-}" ]; then
    SERVER=python
    command -v nginx > /dev/null && SERVER=nginx
fi
case $SERVER in
    nginx) command -v nginx > /dev/null || { echo "bench/cache.sh: SERVER=nginx: nginx is not installed (apt-get install nginx-light)" >&2; exit 1; } ;;
    python) ;;
    *) echo "bench/cache.sh: SERVER=$SERVER: expected nginx or python" >&2; exit 1 ;;
esac
. "$TOP_SRCDIR/tests/libsources.sh"

dir=$(mktemp -d "${TMPDIR:-/var/tmp}/a2o-bench-cache.XXXXXX")
server=
proxy=
trap '[ -z "$server" ] || kill "$server" 2>/dev/null; [ -z "$proxy" ] || kill "$proxy" 2>/dev/null
      [ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
unset SOURCE_DATE_EPOCH
cd "$dir"

. "$TOP_SRCDIR/bench/libbench.sh"

# The cache's server on 127.0.0.1, its port in ./port; each path it is
# asked for goes to requests.log.
serve_nginx () {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' > port
    mkdir nginx
    cat > nginx/nginx.conf <<EOF
daemon off;
master_process off;
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/error.log;
events { worker_connections 256; }
http {
  log_format path '\$uri';
  access_log $dir/requests.log path;
  client_body_temp_path $dir/nginx;
  proxy_temp_path $dir/nginx;
  fastcgi_temp_path $dir/nginx;
  uwsgi_temp_path $dir/nginx;
  scgi_temp_path $dir/nginx;
  sendfile on;
  server { listen 127.0.0.1:$(cat port); root $dir/srv; }
}
EOF
    nginx -c "$dir/nginx/nginx.conf" -p "$dir/nginx" &
    server=$!
    for _ in $(seq 100); do [ -s nginx/nginx.pid ] && break; sleep 0.05; done
}
mkdir srv
if [ "$SERVER" = nginx ]; then
    serve_nginx
else
    python3 "$TOP_SRCDIR/tests/httpd.py" srv port requests.log &
    server=$!
    for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
fi
URL="http://127.0.0.1:$(cat port)/repo"

host_sources_for "$SUITE" > mm.sources
: > min.txt
"$A2O" lock min.txt --suite "$SUITE" --variant minbase -o min.lock.json > lock.log
n=$(grep -c '"sha256": ' min.lock.json)
source=$(sed -n 's/.*"name": "\([^"]*\)".*/\1/p' min.lock.json | head -n 1)

# Each timed step starts after a sync: no step pays for writing back what
# the one before it wrote (a syncfs in a build flushes the whole file
# system, and machine B would not hold A's unwritten data).
# 1. machine A
sync
timed a.build "$A2O" build min.lock.json --ref min --builddir a --cache-url "$URL"
"$A2O" --repo a/ostree publish --to srv/repo > publish.log
commit_a=$(cat a/ostree/refs/heads/min)

# 2. machine B
# build_b NAME URL [COMMAND...]: B's build into ./NAME from the cache at
# URL, its mirror one that does not answer, timed into NAME.build (run
# under COMMAND when given).
build_b () {
    local name=$1 url=$2
    shift 2
    sync
    timed "$name.build" "$@" "$A2O" build min.lock.json --ref min --builddir "$name" \
        --cache-url "$url" --mirror "$source=http://127.0.0.1:1/"
}
: > requests.log
# (B's CPU time too, when GNU time is there.)
cpu=()
[ ! -x /usr/bin/time ] || cpu=(/usr/bin/time -o b.cpu -f "%U s user, %S s system")
build_b b "$URL" "${cpu[@]}"
commit_b=$(cat b/ostree/refs/heads/min)
[ "$commit_a" = "$commit_b" ] || { echo "bench/cache.sh: B's image $commit_b is not A's $commit_a" >&2; exit 1; }
misses=$(grep -c "building it" b.build.log || true)
cp requests.log b.requests.log
# B again with each number of connections in $CONNECTIONS (e.g. "8 32 64").
for c in ${CONNECTIONS:-}; do
    build_b "b$c" "$URL" env APT2OSTREE_CACHE_CONNECTIONS="$c"
done

# B again through a proxy that delays by each round trip in $RTT (ms).
for r in ${RTT:-}; do
    rm -f "proxy$r.port"
    python3 "$TOP_SRCDIR/bench/delay-proxy.py" "proxy$r.port" "$(cat port)" "$r" &
    proxy=$!
    for _ in $(seq 100); do [ -s "proxy$r.port" ] && break; sleep 0.05; done
    build_b "b-rtt$r" "http://127.0.0.1:$(cat "proxy$r.port")/repo"
    kill "$proxy"
    proxy=
done

# 3. mmdebstrap
sync
timed mm mmdebstrap --quiet --variant=minbase --mode=root "$SUITE" mm.tar mm.sources

# 4. bytes
requests=$(wc -l < b.requests.log)
fetched=$(sed 's|^/||' b.requests.log | while read -r p; do
    [ -f "srv/$p" ] && stat -c %s "srv/$p"; done | awk '{ s += $1 } END { print s + 0 }')
debs=$(sed -n 's/.*"size": \([0-9]*\).*/\1/p' min.lock.json | awk '{ s += $1 } END { print s + 0 }')

echo "bench/cache.sh: Debian $SUITE minbase, $n packages, image $commit_b, cache served by $SERVER"
printf '  %-44s %8s s\n' "A: cold build (lock excluded)" "$(cat a.build)" \
    "B: build from the cache" "$(cat b.build)" "mmdebstrap --variant=minbase" "$(cat mm)"
echo "  B / A (cold):            $(calc "$(cat b.build) / $(cat a.build)")   (goal: at most 0.15)"
echo "  B / mmdebstrap:          $(calc "$(cat b.build) / $(cat mm)")"
for c in ${CONNECTIONS:-}; do
    echo "  B with $c connection(s):  $(cat "b$c.build") s, B / A $(calc "$(cat "b$c.build") / $(cat a.build)")"
done
for r in ${RTT:-}; do
    echo "  B with a $r ms round trip: $(cat "b-rtt$r.build") s, B / A $(calc "$(cat "b-rtt$r.build") / $(cat a.build)")"
done
[ ! -s b.cpu ] || echo "  B's CPU time:            $(cat b.cpu)"
echo "  trees B built itself:    $misses"
echo "  bytes B fetched / .debs: $(calc "$fetched / $debs")   ($fetched / $debs, $requests requests)"
