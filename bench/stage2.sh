#!/bin/bash
# bench/stage2.sh — where stage 2 (apt2ostree configure) spends its time,
# for Debian minbase of each architecture in $ARCHES (default: this
# machine's and arm64, which runs under qemu-user on an amd64 machine):
#
#   1. stage 2 as a build runs it ("apt2ostree configure" over the stage-1
#      tree), untraced, $RUNS times (default 2): its wall time;
#   2. the same once more under strace (process system calls only), and from
#      that trace, per maintainer script run and per trigger run: its wall
#      time and how many programs it ran (successful execve, itself and
#      every descendant), then what the stage-2 script itself ran outside
#      dpkg (preinsts, the trigger database, cleaning), dpkg's own time
#      between scripts, and the sandbox around it all (checkout, bwrap,
#      commit of what changed);
#   3. what one exec costs in the image's sandbox: a shell loop running
#      /usr/bin/true, and one running "dpkg-query -W dpkg", $N times (default
#      200), less the same loop running nothing (native, or qemu-user's
#      start-up for a foreign image).
# strace attaches to every new process, which makes the traced run several
# times as long as the untraced one: read its figures as shares of stage 2
# and as counts, and (1) as what stage 2 takes.
#
# Run it as root from a build directory (it uses ./apt2ostree unless
# $APT2OSTREE is set), with strace installed and, for arm64, qemu-user-static
# registered (update-binfmts --enable qemu-aarch64).  It locks $SUITE
# (default bookworm) $VARIANT (default minbase) from the mirror the host's
# apt configuration names and builds it under $TMPDIR (default /var/tmp),
# removed afterwards; DEB_CACHE=DIR keeps the downloaded .debs in DIR (files
# named by sha256) from one run to the next.  KEEP=1 keeps the directory
# (the traces are ARCH/trace.txt).
set -eu
A2O=${APT2OSTREE:-$PWD/apt2ostree}
SUITE=${SUITE:-bookworm}
VARIANT=${VARIANT:-minbase}
RUNS=${RUNS:-2}
N=${N:-200}
host=$(dpkg --print-architecture)
[ "$host" = arm64 ] || host="$host arm64"
ARCHES=${ARCHES:-$host}
[ "$(id -u)" = 0 ] || { echo "bench/stage2.sh: run as root (stage 2 runs maintainer scripts as root)" >&2; exit 1; }
command -v strace > /dev/null || { echo "bench/stage2.sh: strace is not installed" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/var/tmp}/a2o-bench-stage2.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$dir"' EXIT
[ -z "${KEEP:-}" ] || echo "# kept in $dir"

now () { date +%s.%N; }
secs () { awk "BEGIN { printf \"%.2f\", $2 - $1 }"; }

# configure_secs NAME: one untraced stage 2 over stage1/img into bench/NAME.
configure_secs () {
    local t0 t1
    t0=$(now)
    "$A2O" --repo build/ostree configure --ref "bench/$1" stage1/img > "$1.out" 2>&1 \
        || { tail -n 20 "$1.out" >&2; echo "bench/stage2.sh: configure failed" >&2; exit 1; }
    t1=$(now)
    secs "$t0" "$t1"
}

# exec_ms: what one exec costs in the image's sandbox, in ms, timed inside
# it: a loop running /usr/bin/true N times, and one running
# "dpkg-query -W dpkg", each less the same loop running nothing.
exec_ms () {
    "$A2O" --repo build/ostree mod -v --chroot --ref bench/loop stage1/img -- /bin/sh -c '
        n=$1
        t0=$(date +%s%N); i=0; while [ $i -lt $n ]; do i=$((i + 1)); done
        t1=$(date +%s%N); i=0; while [ $i -lt $n ]; do /usr/bin/true; i=$((i + 1)); done
        t2=$(date +%s%N); i=0; while [ $i -lt $n ]; do dpkg-query -W dpkg > /dev/null; i=$((i + 1)); done
        t3=$(date +%s%N)
        echo "bench-loop: $t0 $t1 $t2 $t3"' sh "$N" > loop.out 2>&1 \
        || { cat loop.out >&2; echo "bench/stage2.sh: the exec loop failed" >&2; exit 1; }
    sed -n 's/^bench-loop: //p' loop.out | awk -v n="$N" '{ e = $2 - $1
        printf "/usr/bin/true %.1f, dpkg-query -W %.1f\n", ($3 - $2 - e) / n / 1e6, ($4 - $3 - e) / n / 1e6 }'
}

# analyse TRACE OUT: the table of (2) from strace's -f -ttt output; OUT is
# configure's own output, whose "NAME: preinst install" lines name the
# preinsts in the order they ran.
analyse () {
    awk -v out="$2" '
    function label(path, args,   name, n, a, i) {
        n = split(args, a, "\", \""); for (i = 1; i <= n; i++) gsub(/"/, "", a[i])
        if (path ~ /^\/var\/lib\/dpkg\/tmp\.ci\/preinst$/)
            return (++npre in pre ? pre[npre] : "?") " preinst install"
        if (path !~ /^\/var\/lib\/dpkg\/info\/.*\.(preinst|postinst|prerm|postrm|config)$/)
            return ""
        name = path; sub(/^\/var\/lib\/dpkg\/info\//, "", name); sub(/:[a-z0-9]+\./, ".", name)
        sub(/\.(preinst|postinst|prerm|postrm|config)$/, " &", name); sub(/ \./, " ", name)
        if (n >= 2 && a[2] == "triggered") return name " triggered " a[3]
        return name (n >= 2 ? " " a[2] : "")
    }
    # exec_done: one successful execve, in the order they happened; a child
    # may exec before strace reports the fork returning in its parent, so who
    # owns it is worked out at the END, from the whole trace.
    function exec_done(pid, ts, path, args) {
        execs[pid]++; ne++; epid[ne] = pid; ets[ne] = ts; epath[ne] = path; eargs[ne] = args
        eprog[ne] = path; sub(/.*\//, "", eprog[ne])
    }
    # script_run I: whether exec I starts a maintainer script or trigger run
    # (the outermost only: debconf runs a postinst again under its frontend)
    function script_run(i,   pid, q, l) {
        pid = epid[i]
        if (eargs[i] ~ /^"set -e\\nexport DEBIAN_FRONTEND/ || eargs[i] ~ /^"\/bin\/sh", "-c", "set -e\\nexport DEBIAN_FRONTEND/) { script = pid; s0 = ets[i] }
        if (eargs[i] ~ /"dpkg", "--configure", "-a"/) { dpkg = pid; d0 = ets[i] }
        for (q = pid; q != ""; q = parent[q]) if (q in lab) return
        l = label(epath[i], eargs[i])
        if (l == "") return
        lab[pid] = l; start[pid] = ets[i]
    }
    BEGIN {
        while ((getline line < out) > 0)
            if (match(line, /^apt2ostree configure: [^ ]+: preinst install$/)) {
                split(line, f, " "); pre[++np] = substr(f[3], 1, length(f[3]) - 1)
            }
    }
    NR == 1 { t_first = $2 }
    { pid = $1; ts = $2; t_last = ts
      if (!(pid in seen)) { seen[pid] = 1 } }
    $3 ~ /^(clone|clone3|fork|vfork)\(/ || $0 ~ /<\.\.\. (clone|clone3|fork|vfork) resumed>/ {
        # inside the sandbox PID namespace, --decode-pids=pidns gives the
        # child as strace sees it too: = 3 /* 20136 in strace...s PID NS */
        if (match($0, /\/\* [0-9]+ in strace.s PID NS \*\/$/)) { c = substr($0, RSTART + 3); sub(/ .*/, "", c); parent[c] = pid }
        else if (match($0, /\) = [0-9]+$/)) { c = substr($0, RSTART + 4); parent[c] = pid }
    }
    $3 ~ /^execve\(/ {
        path = $3; sub(/^execve\("/, "", path); sub(/".*/, "", path)
        args = $0; sub(/^[^[]*\[/, "", args); sub(/\], 0x.*$/, "", args)
        if ($0 ~ /<unfinished \.\.\.>$/) { ppath[pid] = path; pargs[pid] = args; next }
        if ($0 ~ /\) = 0$/) exec_done(pid, ts, path, args)
        next
    }
    /<\.\.\. execve resumed>/ {
        if ($0 ~ /\) = 0$/ && (pid in ppath)) exec_done(pid, ts, ppath[pid], pargs[pid])
        delete ppath[pid]; next
    }
    /\+\+\+ (exited with|killed by)/ { end[pid] = ts }
    END {
        for (i = 1; i <= ne; i++) script_run(i)
        # every exec belongs to its outermost script, else to dpkg, else to
        # the stage-2 script
        for (p in execs) {
            owner = ""; q = p
            for (; q != ""; q = parent[q]) if (q in lab) owner = q
            if (owner != "") { n[owner] += execs[p]; continue }
            for (q = p; q != "" && q != dpkg; q = parent[q]) ;
            if (q == dpkg && dpkg != "") n_dpkg += execs[p]
            else { for (q = p; q != "" && q != script; q = parent[q]) ;
                   if (q == script && script != "") n_script += execs[p]; else n_sandbox += execs[p] }
        }
        for (p in lab) {
            t = end[p] - start[p]; sum[lab[p]] += t; cnt[lab[p]] += n[p]; runs[lab[p]]++
            if (p == dpkg) continue
            for (q = parent[p]; q != "" && q != dpkg; q = parent[q]) ;
            if (q == dpkg) in_dpkg += t; else pre_t += t
        }
        # what the stage-2 script itself runs, by program
        for (i = 1; i <= ne; i++) {
            own = 0
            for (q = epid[i]; q != ""; q = parent[q]) if ((q in lab) || q == dpkg) own = 1
            for (q = epid[i]; q != "" && q != script; q = parent[q]) ;
            if (!own && q == script && script != "") byprog[eprog[i]]++
        }
        for (k in byprog) printf "%d %s\n", byprog[k], k | "sort -rn > own.txt"
        close("sort -rn > own.txt")
        for (l in sum) printf "%8.3f %6d %4d  %s\n", sum[l], cnt[l], runs[l], l | "sort -rn > scripts.txt"
        close("sort -rn > scripts.txt")
        d = end[dpkg] - d0; s = end[script] - s0; all = t_last - t_first
        printf "TOTALS %.3f %.3f %.3f %.3f %.3f %d %d %d\n", all, s, d, in_dpkg, pre_t, n_dpkg, n_script, n_sandbox
    }' "$1"
}

# bench_arch ARCH: every figure for one architecture, in $dir/ARCH.
bench_arch () {
    local arch=$1
    mkdir -p "$dir/$arch/build/cache" && cd "$dir/$arch"
    [ -z "${DEB_CACHE:-}" ] || { mkdir -p "$DEB_CACHE"; ln -s "$DEB_CACHE" build/cache/debs; }
    : > empty.txt
    "$A2O" lock empty.txt --suite "$SUITE" --variant "$VARIANT" --arch "$arch" -o img.lock.json > lock.out 2>&1 \
        || { cat lock.out >&2; exit 1; }
    "$A2O" build img.lock.json --ref img --builddir build > build.out 2>&1 \
        || { tail -n 20 build.out >&2; exit 1; }
    local npkg i plain="" traced t0 t1
    npkg=$(grep -c '"sha256": ' img.lock.json)
    for i in $(seq "$RUNS"); do plain="$plain $(configure_secs plain$i)"; done
    t0=$(now)
    strace -f -q -ttt -s 200 -e trace=process --seccomp-bpf --decode-pids=pidns -o trace.txt \
        "$A2O" --repo build/ostree configure -v --ref bench/traced stage1/img > traced.out 2>&1 \
        || { tail -n 20 traced.out >&2; exit 1; }
    t1=$(now)
    traced=$(secs "$t0" "$t1")
    set -- $(analyse trace.txt traced.out | sed -n 's/^TOTALS //p')
    local per_exec
    per_exec=$(exec_ms)
    cat <<EOF

$SUITE $VARIANT $arch: $npkg packages, $(awk '{ n += $3 } END { print n }' scripts.txt) maintainer script and trigger runs
 stage 2 untraced (s):$plain
 stage 2 traced: $traced s; all times below are from the trace
   sandbox (checkout, bwrap, commit)            $(awk "BEGIN { printf \"%7.2f s\", $1 - $2 }")  $8 execs
   preinsts (run by the stage-2 script)         $(awk "BEGIN { printf \"%7.2f s\", $5 }")
   the stage-2 script's own work                $(awk "BEGIN { printf \"%7.2f s\", $2 - $3 - $5 }")  $7 execs
   dpkg --configure -a                          $(awk "BEGIN { printf \"%7.2f s\", $3 }")  $6 exec (dpkg itself)
     in maintainer scripts and triggers         $(awk "BEGIN { printf \"%7.2f s\", $4 }")
 the stage-2 script's own execs, by program: $(head -n 8 own.txt | paste -sd, - | sed 's/,/, /g')
 maintainer scripts and triggers, longest first (seconds, execs, runs):
$(head -n "${TOP:-15}" scripts.txt | sed 's/^/   /')
 one exec in the sandbox, over $N runs (ms): $per_exec
EOF
    cd "$dir"
}

echo "# $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $SUITE $VARIANT; architectures: $ARCHES"
for arch in $ARCHES; do
    bench_arch "$arch"
done
