#!/bin/bash
# The stage-2 scripts (src/sandbox/*.sh, built into the program) pass
# shellcheck as the POSIX sh the image's /bin/sh runs: each script as the
# program composes it (src/sandbox/stage2.c): the steps both begin with
# (stage2-begin.sh), its own steps, then the steps both end with
# (stage2-finish.sh).
. "$TOP_SRCDIR/tests/libtest.sh"

command -v shellcheck > /dev/null || skip_all "shellcheck is not installed (tools/setup installs it)"

S=$TOP_SRCDIR/src/sandbox
# The checks left out, each for a reason that holds for every line it
# would flag (a "# shellcheck disable" comment would change the script's
# bytes, which every image commit records):
#   SC2086, SC2231: the unquoted words are dpkg package names and paths
#     made of them; Debian names hold no space or glob character (the
#     lockfile's names are checked as dpkg checks them).
#   SC2013: "for l in $(grep -l ...)" reads file names of
#     /var/lib/dpkg/info, made of package names too.
EXCLUDE=SC2086,SC2231,SC2013

# check SCRIPT: the first steps, SCRIPT's, then the finishing steps, through
# shellcheck.
check () { cat "$S/stage2-begin.sh" "$1" "$S/stage2-finish.sh" | shellcheck --shell=sh --exclude="$EXCLUDE" -; }

for script in stage2.sh stage2-incremental.sh; do
    test_expect_success "shellcheck finds nothing in $script" '
        check "$S/$script"
    '
done

test_expect_success 'shellcheck refuses a stage-2 script that splits its arguments' '
    sed "s/for p in \"\\\$@\"; do/for p in \$@; do/" "$S/stage2.sh" > planted.sh
    ! cmp -s planted.sh "$S/stage2.sh"
    if check planted.sh > out; then false; fi
    cat out
    grep -q SC2068 out
'

test_done
