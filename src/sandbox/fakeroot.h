/* fakeroot.h — the unprivileged mode of mod: a fakeroot daemon whose
 * database is seeded with the owners and modes OSTree stores, so that a
 * command running as the (namespace) root over a bare-user checkout sees
 * root-owned files, and whose chown/chmod end up in the commit.
 *
 * fakeroot keys its database by (st_dev, st_ino) as the command sees them:
 * the overlay's st_dev (known once it is mounted) and, all layers being on
 * one filesystem, the lower file's st_ino, which overlayfs keeps across a
 * copy-up. */
#pragma once

#include <ostree.h>

#include "barestore/sink.h"

#include "sandbox/sandbox.h"

G_BEGIN_DECLS

typedef struct Fakeroot Fakeroot;

/* Read the owners and modes of LOWER, a checkout of the tree ROOT_CONTENTS +
 * ROOT_META of a bare-user repository, from OSTree's metadata.  Files go
 * in SCRATCH. */
Fakeroot *fakeroot_new (OstreeRepo *repo, const char *root_contents, const char *root_meta,
                        const char *lower, const char *upper,
                        const char *scratch, GError **error);
void fakeroot_free (Fakeroot *fakeroot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Fakeroot, fakeroot_free)

/* Have SANDBOX start the daemon once the overlay is mounted and preload
 * libfakeroot into the command. */
gboolean fakeroot_prepare (Fakeroot *fakeroot, Sandbox *sandbox, GError **error);

/* Stop the daemon and read what the command did to owners and modes. */
gboolean fakeroot_finish (Fakeroot *fakeroot, GError **error);

/* An UpperMetaFunc (USER_DATA is the Fakeroot): the owner, mode and xattrs
 * the command saw for an entry of the upper directory. */
gboolean fakeroot_upper_meta (const char *path, const char *upper_path, struct stat *st,
                              GVariant **xattrs, gpointer user_data, GError **error);

/* Owners and modes the command changed on files it did not otherwise
 * touch (no copy-up happened): apply them to ROOT. */
gboolean fakeroot_apply_unchanged (Fakeroot *fakeroot, OstreeRepo *repo, StoreSink *sink,
                                   OstreeMutableTree *root,
                                   GCancellable *cancellable, GError **error);

G_END_DECLS
