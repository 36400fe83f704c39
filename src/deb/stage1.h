/* stage1.h — stage 1: package trees made by unpack-deb, in install order,
 * combined into one tree with a dpkg database in which every package is
 * unpacked (metadata only: tree.h's combine, dpkgdb.h's database, dpkg's
 * path filters). */
#pragma once

#include <ostree.h>

#include "barestore/sink.h"

G_BEGIN_DECLS

/* Commit metadata of a stage-1 commit: the packages' dpkg names
 * ("name" or "name:arch"), in install order (type "as"). */
#define STAGE1_META_PACKAGES "apt2ostree.packages"

/* The stage-1 tree of REVS (RepoRev*, in install order) for the dpkg
 * architecture ARCH, with dpkg's path filter RULES (pathfilter.h; NULL for
 * none), inside an open transaction of REPO.  *OUT_METADATA: the commit
 * metadata it needs (STAGE1_META_PACKAGES, the hard-link groups).  Each
 * entry OSTree cannot store (a device node, fifo or socket a package
 * ships) adds a line to SKIPPED ("PACKAGE: PATH (KIND) is not in the
 * image"). */
OstreeMutableTree *stage1_combine (OstreeRepo *repo, StoreSink *sink, GPtrArray *revs,
                                   const char *arch,
                                   const char *const *rules, GPtrArray *skipped,
                                   GVariant **out_metadata, GCancellable *cancellable,
                                   GError **error);

G_END_DECLS
