/* treerules.h — the Ninja rules of the tree commands, for a project's own
 * build ("apt2ostree ninja --rules"), and the names of the trees it makes
 * in between.
 *
 * Each rule writes one ref: $out is its ref file ($repo/refs/heads/$ref)
 * and its inputs are the ref files of the trees it reads, so a tree is a
 * target like any file.  Every rule has restat = 1: the commands leave a
 * ref file alone when the tree it would point at is the one it holds. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The rules file: one rule per tree command, A2O (the binary the edges
 * run, written as the $a2o default) at the top.  The same A2O gives the
 * same bytes. */
char *treerules_text (const char *a2o);

/* The prefix of every derived ref (treerules_derived_ref). */
#define TREERULES_DERIVED_PREFIX "derived/"

/* The ref a generator names the result of OPERATION over ARGS (N words,
 * as the command takes them) with, when the tree needs no name of its own:
 * "derived/OPERATION-" and the first 20 hex digits of the SHA-256 of
 * OPERATION and ARGS, each followed by a NUL byte.  NULL, with ERROR, when
 * OPERATION cannot be part of a ref name. */
char *treerules_derived_ref (const char *operation, const char *const *args, guint n,
                             GError **error);

G_END_DECLS
