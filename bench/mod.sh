#!/bin/bash
# bench/mod.sh [FILES] — what `apt2ostree mod` costs over a tree of about
# FILES (default 10000) generated files, for a command that changes one file
# (`touch /work/one-file`: the host's touch, the tree at /work), split into
# checkout, command and commit; against `ostree checkout` + `ostree commit
# --link-checkout-speedup` of the same tree in the same run.
#
# Run it from a build directory (it uses ./apt2ostree unless $APT2OSTREE is
# set), as root (bare repository) or as a normal user (bare-user).
set -eu
N=${1:-10000}
A2O=${APT2OSTREE:-$PWD/apt2ostree}
RUNS=${RUNS:-5}
dir=$(mktemp -d "${TMPDIR:-/var/tmp}/a2o-bench-mod.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"

echo "# generating a tree of $N files (100 per directory)"
python3 - "$N" <<'PY'
import os, sys
n = int(sys.argv[1])
for i in range(n):
    d = "tree/d%03d" % (i // 100)
    os.makedirs(d, exist_ok=True)
    with open("%s/f%05d" % (d, i), "w") as f:
        f.write("file %d\n" % i)
PY
"$A2O" --repo repo init
ostree --repo=repo commit -b in --tree=dir=tree --owner-uid=0 --owner-gid=0 --no-xattrs > /dev/null
export SOURCE_DATE_EPOCH=0

now () { date +%s.%N; }
calc () { awk "BEGIN { printf \"%.6f\\n\", $1 }"; }
median () { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

for r in $(seq "$RUNS"); do
    # apt2ostree mod: its own split (checkout, command, commit, cleanup)
    "$A2O" --repo repo mod -v --ref out in -- touch /work/one-file 2> mod.err > /dev/null
    sed -n 's/^apt2ostree mod: checkout \([0-9.]*\) s, command \([0-9.]*\) s, commit \([0-9.]*\) s, cleanup \([0-9.]*\) s$/\1 \2 \3 \4/p' mod.err >> mod.times
    t0=$(now)
    "$A2O" --repo repo mod --ref out in -- touch /work/one-file > /dev/null
    t1=$(now)
    calc "$t1 - $t0" >> mod.total

    # ostree: checkout by hardlinks, the same change, commit reusing the
    # checkout's devino cache
    rm -rf co
    t0=$(now)
    if [ "$(id -u)" = 0 ]; then ostree --repo=repo checkout in co; else ostree --repo=repo checkout -U in co; fi
    t1=$(now)
    touch co/one-file
    t2=$(now)
    ostree --repo=repo commit -b out-ostree --tree=dir=co --link-checkout-speedup \
        --timestamp=@0 > /dev/null
    t3=$(now)
    rm -rf co
    t4=$(now)
    echo "$(calc "$t1 - $t0") $(calc "$t3 - $t2") $(calc "$t4 - $t3")" >> ostree.times
done

m_checkout=$(awk '{ print $1 }' mod.times | median)
m_command=$(awk '{ print $2 }' mod.times | median)
m_commit=$(awk '{ print $3 }' mod.times | median)
m_cleanup=$(awk '{ print $4 }' mod.times | median)
m_total=$(median < mod.total)
o_checkout=$(awk '{ print $1 }' ostree.times | median)
o_commit=$(awk '{ print $2 }' ostree.times | median)
o_cleanup=$(awk '{ print $3 }' ostree.times | median)
o_total=$(calc "$o_checkout + $o_commit + $o_cleanup")

echo "# $N files, median of $RUNS runs, seconds ($(id -un), $(ostree --version | sed -n 's/^ Version: //p' | tr -d "'") ostree)"
printf "apt2ostree mod:   checkout %.3f  command %.3f  commit %.3f  cleanup %.3f  total (wall) %.3f\n" \
    "$m_checkout" "$m_command" "$m_commit" "$m_cleanup" "$m_total"
printf "ostree checkout+commit --link-checkout-speedup: checkout %.3f  commit %.3f  rm %.3f  total %.3f\n" \
    "$o_checkout" "$o_commit" "$o_cleanup" "$o_total"
printf "ratio mod/ostree (total): %.2f   commit step alone: %.2f\n" \
    "$(calc "$m_total / $o_total")" "$(calc "$m_commit / $o_commit")"
