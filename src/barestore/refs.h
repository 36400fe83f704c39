/* refs.h — ref files under refs/heads written the way a commit that must
 * survive a crash needs them: each new content staged as an O_TMPFILE in
 * the ref's directory (synced with the objects by the caller's syncfs()),
 * then linked in under a temporary name and renamed over the ref.  GLib
 * alone: the store's transactions (txn.c, repo.c) write refs with it. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct RefsBatch RefsBatch;

/* Refs of the repository REPO_DFD (REPO_PATH for messages). */
RefsBatch *refs_batch_new (int repo_dfd, const char *repo_path);
void refs_batch_free (RefsBatch *batch);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (RefsBatch, refs_batch_free)

/* Stage REF's new content "COMMIT\n".  FALSE when this code does not
 * write REF, which is then the caller's to write another way: its place
 * holds an alias (a symlink) or a directory, COMMIT is NULL (a deletion),
 * the file limit spares no more open files (128 are kept for the rest), or
 * anything fails here. */
gboolean refs_batch_stage (RefsBatch *batch, const char *ref, const char *commit);

/* How many refs a batch stages at most: what the file limit spares, 128
 * kept for the rest (0 with a limit of 256 or less). */
guint refs_max_staged (void);

/* Put every staged ref in place, in the order staged; then, as OSTree does
 * when it writes a ref, touch the repository (watchers look at its mtime). */
gboolean refs_batch_publish (RefsBatch *batch, GError **error);

/* Where REF's ref file is: REPO/refs/heads/REF, or refs/heads/REF (relative
 * to the repository's directory) when REPO is NULL.  REF is not checked. */
char *refs_file_path (const char *repo, const char *ref);

/* The commit the ref file refs/heads/REF of the repository REPO_DFD names:
 * *OUT_COMMIT NULL when there is none.  FALSE when REF's place is not a
 * plain file this code reads (an alias, a directory) or holds no checksum. */
gboolean refs_read (int repo_dfd, const char *ref, char **out_commit);

/* Is REF a valid ref name, by OSTree's rules?  The error names it. */
gboolean refs_check_name (const char *ref, GError **error);

/* The ref names listed in the file PATH, in order: names separated by
 * spaces, tabs or newlines, as a Ninja response file writes them (on one
 * line) or a person does (one a line).
 * The file is untrusted: a name that is not a valid ref name (a commit
 * checksum is one), a NUL byte, a file over 64 MiB or one that lists
 * nothing is a one-line error naming PATH and the line. */
char **refs_read_list (const char *path, GError **error);

G_END_DECLS
