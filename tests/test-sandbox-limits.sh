#!/bin/bash
# A sandboxed command ends, and has limits: what it leaves running when it
# exits is killed, --timeout kills a command that never exits, and
# --memory-limit and --max-processes stop it where this host can enforce
# them (a cgroup, or an rlimit for a normal user), each with a one-line
# error.  Every command runs under "timeout 60", so a hang fails the test
# instead of hanging it.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/mod-lib.sh"

if [ "$(id -u)" = 0 ]; then MODE=root; else MODE=unprivileged; fi
say "mode: $MODE"
command -v bwrap > /dev/null || skip_all "bubblewrap is not installed (apt-get install bubblewrap)"
for tool in sleep seq python3; do
    [ -x "/usr/bin/$tool" ] || skip_all "/usr/bin/$tool is needed inside the sandbox (from the host's /usr)"
done

R="$SCRATCH/repo"
setup_base_repo "$R" || { echo "Bail out! cannot build the base tree"; exit 1; }
# The commands' processes are told apart by their sleep times, 9 U NN:
# U (this run's process id) keeps them apart from those of another run of
# this file at the same time (test-sandbox-limits-unprivileged.sh).
U=$$
# m ARG...: mod over the base tree, at /work with the host's /usr, under a
# deadline of its own ($LIMIT_ENV: more environment for it).
m () { timeout 60 env ${LIMIT_ENV:-} "$APT2OSTREE" --repo "$R" mod "$@"; }

test_expect_success 'a command that leaves a process behind ends with its own status, and nothing it started lives on' '
    expect_failure err m --ref bg base -- sh -c "sleep 9${U}17 & echo started; exit 3"
    assert_one_line err
    assert_file_has_content err "exited with status 3"
    no_process_left "sleep 9${U}17"
    m --ref bg base -- sh -c "sleep 9${U}18 > /dev/null 2>&1 & sleep 9${U}19 & echo ok > /work/etc/ok" > commit
    assert_streq "$(ostree --repo="$R" cat bg /etc/ok)" ok
    no_process_left "sleep 10001[89]"
    no_scratch_left "$R"
'

test_expect_success 'mod --timeout ends a command that never exits, in one line naming the timeout, and kills all it started' '
    expect_failure err m --ref never base --timeout 2 -- sh -c "sleep 9${U}21 & echo waiting; sleep 9${U}20"
    assert_one_line err
    assert_file_has_content err "ran past the 2 s timeout (--timeout)"
    assert_file_has_content err "last lines of output: waiting"
    assert_file_has_content err "OUT never not written"
    assert_not_has_file "$R/refs/heads/never"
    no_process_left "sleep 9${U}21"
    no_process_left "sleep 9${U}20"
    no_scratch_left "$R"
'

test_expect_success '$APT2OSTREE_TIMEOUT sets the deadline, the option wins over it, and 0 is none' '
    LIMIT_ENV=APT2OSTREE_TIMEOUT=1 expect_failure err m --ref env base -- sleep 9${U}22
    assert_file_has_content err "ran past the 1 s timeout"
    LIMIT_ENV=APT2OSTREE_TIMEOUT=1 m --ref env base --timeout 0 -- sh -c "sleep 2" > /dev/null
    no_process_left "sleep 9${U}22"
'

test_expect_success 'a bad --timeout, --memory-limit or --max-processes is refused in one line' '
    expect_failure err m --ref bad base --timeout soon -- true
    assert_one_line err
    assert_file_has_content err "\"soon\": expected a whole number"
    expect_failure err m --ref bad base --memory-limit 4Q -- true
    assert_one_line err
    assert_file_has_content err "memory limit \"4Q\": expected a size"
    expect_failure err m --ref bad base --max-processes -1 -- true
    assert_one_line err
    assert_not_has_file "$R/refs/heads/bad"
'

# What holds each limit on this host (-v says).
m --ref probe base -v --memory-limit 1G --max-processes 100 -- true > /dev/null 2> "$SCRATCH/probe"
held=$(sed -n "s/^apt2ostree mod: sandbox limits: //p" "$SCRATCH/probe")
say "limits here: $held"

if ! { [ "$MODE" = root ] && echo "$held" | grep -q "processes 100 (rlimit"; }; then
test_expect_success '--max-processes stops a process bomb with an error, not a hang' '
    expect_failure err m --ref bomb base --max-processes 50 -- sh -c "for i in \$(seq 500); do sleep 9${U}23 & done; wait"
    assert_one_line err
    assert_file_has_content err "Cannot fork"
    if echo "$held" | grep -q "processes 100 (cgroup"; then
        assert_file_has_content err "it reached its limit of 50 processes (--max-processes)"
    fi
    assert_not_has_file "$R/refs/heads/bomb"
    no_process_left "sleep 9${U}23"
'
else
test_skip '--max-processes stops a process bomb' "no pids cgroup can be made here ($held), and root ignores RLIMIT_NPROC"
fi

test_expect_success '--memory-limit stops a big allocation with an error, not a hang' '
    expect_failure err m --ref big base --memory-limit 128M -- python3 -c "b = bytearray(1 << 30); print(len(b))"
    assert_one_line err
    assert_not_file_has_content err "1073741824"
    if echo "$held" | grep -q "memory 1.0 GiB (cgroup"; then
        assert_file_has_content err "killed by signal 9 (Killed): it ran out of its memory limit of 128.0 MiB (--memory-limit)"
    else
        assert_file_has_content err "MemoryError"
    fi
    assert_not_has_file "$R/refs/heads/big"
'

# run_cgroups: the run cgroups on this machine whose process has gone,
# one directory a line (the name holds the process id: apt2ostree-run-PID-T).
run_cgroups () {
    find /sys/fs/cgroup -maxdepth 5 -name "apt2ostree-run-*" 2> /dev/null | sort | while read -r dir; do
        pid=${dir##*/apt2ostree-run-}; pid=${pid%%-*}
        [ -d "/proc/$pid" ] || echo "$dir"   # (kill -0 says EPERM of another user's)
    done
}

# (Other builds on this machine may run at the same time, and one killed
# leaves its cgroup to the next run to remove: only a directory made while
# this test runs and whose process has gone counts.)
test_expect_success 'a run leaves no cgroup behind, whether its command ends or is killed at its deadline' '
    run_cgroups > before
    m --ref cg base -- true > /dev/null
    expect_failure err m --ref cg2 base --timeout 1 -- sleep 9${U}24
    run_cgroups > after
    comm -13 before after > left
    cat left
    test ! -s left
'

test_done
