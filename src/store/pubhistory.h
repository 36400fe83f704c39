/* pubhistory.h — the commit a ref gets when it is published with a
 * history (publish --history): the built commit's root tree and metadata
 * under a new commit whose parent is the one the destination's ref held
 * before, with a version and the built commit's checksum in its metadata,
 * as "ostree log" and "ostree admin upgrade" expect.  The built commit is
 * never changed: the build's refs stay reproducible. */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

/* The metadata key naming the built commit a published commit was made from. */
#define PUBHISTORY_BUILT_KEY "apt2ostree.built-commit"

typedef struct {
  char *ref;
  char *built;      /* the build repository's commit */
  char *previous;   /* the destination's commit before, or NULL: the first time */
  char *version;    /* the version the new commit records */
  char *published;  /* the new commit once written; previous when unchanged */
  gboolean unchanged; /* previous was made from built: nothing to write */
} PubHistoryEntry;

void pubhistory_entry_free (PubHistoryEntry *entry);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PubHistoryEntry, pubhistory_entry_free)

/* What publishing BUILT as REF into DEST with a history does: finds the
 * previous commit, whether it was made from BUILT, and the version
 * (VERSION, or by default the previous version plus one, 1 the first
 * time).  Writes nothing. */
PubHistoryEntry *pubhistory_plan (OstreeRepo *dest, const char *ref, const char *built,
                                  const char *version, GCancellable *cancellable, GError **error);

/* The built commit DEST's COMMIT was published from, or NULL when COMMIT
 * is a commit as built (or cannot be read). */
char *pubhistory_built_of (OstreeRepo *dest, const char *commit);

/* Write ENTRY's new commit into DEST (which holds the built commit and its
 * tree), inside DEST's open transaction; sets ENTRY->published. */
gboolean pubhistory_write (OstreeRepo *dest, PubHistoryEntry *entry, GCancellable *cancellable,
                           GError **error);

G_END_DECLS
