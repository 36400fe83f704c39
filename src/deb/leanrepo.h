/* leanrepo.h — a bare or bare-user OSTree repository written without
 * libostree, for the lean unpack-deb path (cmd/main.c): its config read
 * and checked, its lock, its refs and commits read, a transaction whose
 * objects the writer (writer.c) makes and whose refs refs.c writes, in the
 * order and with the guarantees repo.c's transactions give.  Whatever this
 * code does not know (another mode, a config key it has not been taught, a
 * ref that is an alias, the lock taken, ...) is an UNPACK_ERROR_DEFER
 * error: the commands module, with libostree, does it then. */
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
