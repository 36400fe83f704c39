#!/usr/bin/env python3
"""Make a hostile dirtree in an OSTree archive repository, for the tests.

    hostile-dirtree.py REPO REF OLD NEW DIRTREE...

In the dirtree object DIRTREE (the first one given), the entry named OLD
is renamed NEW (a name of the same length, so the serialized layout does
not change: the entries may end up out of order, or a file and a
directory may share a name).  The other DIRTREEs are its parents, from
the nearest to the root: each gets its child's new checksum, and so does
the commit REF names, which REF then names.  Only bytes of equal length
are replaced, so no GVariant needs to be written.
"""
import hashlib
import os
import sys

repo, ref, old, new = sys.argv[1:5]
chain = sys.argv[5:]
assert len(old) == len(new), "OLD and NEW must be of the same length"


def path(checksum, kind):
    return os.path.join(repo, "objects", checksum[:2], checksum[2:] + "." + kind)


def rewrite(checksum, kind, before, after):
    """The object CHECKSUM with its one BEFORE replaced by AFTER, stored;
    its new checksum."""
    data = open(path(checksum, kind), "rb").read()
    assert data.count(before) == 1, "%s: %r is not there once" % (checksum, before)
    data = data.replace(before, after)
    new_sum = hashlib.sha256(data).hexdigest()
    os.makedirs(os.path.dirname(path(new_sum, kind)), exist_ok=True)
    with open(path(new_sum, kind), "wb") as f:
        f.write(data)
    return new_sum


child = chain[0]
changed = rewrite(child, "dirtree", old.encode() + b"\0", new.encode() + b"\0")
for parent in chain[1:]:
    changed, child = rewrite(parent, "dirtree", bytes.fromhex(child), bytes.fromhex(changed)), parent
ref_path = os.path.join(repo, "refs", "heads", ref)
commit = open(ref_path).read().strip()
commit = rewrite(commit, "commit", bytes.fromhex(child), bytes.fromhex(changed))
with open(ref_path, "w") as f:
    f.write(commit + "\n")
