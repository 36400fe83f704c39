# libbench.sh — what the benchmark scripts share.  Source it from one.
#
#   timed NAME CMD...   run CMD, its output in NAME.log, its wall time (s) in NAME
#   calc EXPR           EXPR with two decimals
#   kib PATH...         disk used, in KiB
#   slow_edges LOG      how many .deb edges (fetch + unpack) of ninja's log
#                       LOG took 5 s or more (the last run of each)

now () { date +%s.%N; }
calc () { awk "BEGIN { printf \"%.2f\\n\", $1 }"; }
timed () {
    local name=$1; shift
    local t0 t1
    t0=$(now)
    "$@" > "$name.log" 2>&1 || { tail -n 20 "$name.log" >&2; echo "${0##*/}: $* failed" >&2; exit 1; }
    t1=$(now)
    calc "$t1 - $t0" > "$name"
}
kib () { du -sk "$@" | awk '{ s += $1 } END { print s }'; }
slow_edges () {
    awk 'NR > 1 && $4 ~ /refs\/heads\/deb\// { t[$4] = $2 - $1 }
         END { n = 0; for (o in t) if (t[o] >= 5000) n++; print n }' "$1"
}
