/* leanrepo.h — a bare or bare-user OSTree repository opened without
 * libostree, for the lean unpack-deb path (cmd/main.c): its config checked
 * for keys this path does not know, its refs and commits read, and the
 * store's own transaction (store/txn.h) run over it.  Whatever this code
 * does not know (another mode, a config key it has not been taught, a ref
 * that is an alias, the lock taken, ...) is an UNPACK_ERROR_DEFER error:
 * the commands module, with libostree, does it then. */
#pragma once

#include <glib.h>

#include "deb/unpack.h"

G_BEGIN_DECLS

typedef struct LeanRepo LeanRepo;

LeanRepo *lean_repo_open (const char *path, GError **error);
void lean_repo_free (LeanRepo *repo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LeanRepo, lean_repo_free)

/* The repository as unpack_run() takes it. */
UnpackRepo *lean_repo_unpack_repo (LeanRepo *repo);

G_END_DECLS
