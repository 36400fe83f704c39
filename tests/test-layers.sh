#!/bin/bash
# The layers of src/ (src/README.md): every include goes down or sideways,
# never up, as each folder's README.md allows; the checker catches a file
# that breaks that.
. "$TOP_SRCDIR/tests/libtest.sh"

check=$TOP_SRCDIR/tools/check-layers

test_expect_success 'every #include in src/ goes to a layer its folder may use' '
    "$check" "$TOP_SRCDIR/src"
'

# A folder a move left behind in a build tree, holding only .deps/, is no
# layer (so a merged rename does not fail an in-tree build's check).
test_expect_success 'a folder without source files is not a layer' '
    cp -r "$TOP_SRCDIR/src" copy-moved
    mkdir -p copy-moved/oldname/.deps
    "$check" copy-moved
'

# A copy of src/ with one violation planted per case: the checker must name it.
while IFS='|' read -r name inject expect; do
    [ -n "$name" ] || continue
    test_expect_success "the checker refuses $name" '
        cp -r "$TOP_SRCDIR/src" copy
        eval "$inject"
        if "$check" copy > out; then false; fi
        cat out
        grep -F -- "$expect" out
    '
done <<'CASES'
an include of an upper layer|sed -i '1a #include "cmd/cmd.h"' copy/store/repo.c|copy/store/repo.c:2: store/ includes "cmd/cmd.h"
an include that names no folder|sed -i '1a #include "repo.h"' copy/base/util.c|"repo.h" names no folder
a source file outside every folder|touch copy/loose.c|copy/loose.c: a source file outside every layer folder
a header private to another folder|sed -i '1a #include "barestore/writer.h"' copy/deb/deb.c|copy/deb/deb.c:2: deb/ includes "barestore/writer.h" (private to barestore/)
libostree in the GLib-only store|sed -i '1a #include <ostree.h>' copy/barestore/refs.c|copy/barestore/refs.c:2: barestore/ includes libostree (its README says: No libostree.)
a folder without a README|mkdir copy/extra && touch copy/extra/x.c && : > copy/extra/README.md|copy/extra/: no README.md
CASES

test_done
