/* leanrepo.h — a bare or bare-user OSTree repository opened without
 * libostree, for the one bare/bare-user unpack-deb path, run by the lean
 * front (cmd/main.c) and the commands module (ostreeunpack.c): its config checked
 * for keys this path does not know, its refs and commits read, and the
 * store's own transaction (barestore/txn.h) run over it.  Whatever this code
 * does not know (another mode, a config key it has not been taught, a ref
 * that is an alias, the lock taken, ...) is an UNPACK_ERROR_DEFER error:
 * the commands module does it then over libostree. */
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

/* unpack_run() of ARGS into the repository ARGS names, opened here: the
 * one bare/bare-user unpack path, which the lean front and the commands
 * module both run.  An UNPACK_ERROR_DEFER error, before anything the user
 * would see has happened, leaves the run to libostree (ostreeunpack.c). */
gboolean lean_repo_run (const UnpackArgs *args, UnpackFetch fetch, GError **error);

G_END_DECLS
