/* unpack.h — what `apt2ostree unpack-deb` does, over any repository that
 * can give a StoreSink: its options, its jobs (one package, or a --batch
 * list), and the run (a ref already holding the package is kept; a .deb is
 * verified before anything is written; the refs are written last, all
 * together).  GLib alone: run over leanrepo.c for a bare or bare-user
 * repository (by the lean front, cmd/main.c, and the commands module
 * alike), over libostree for what that defers (ostreeunpack.c). */
#pragma once

#include <glib.h>

#include "base/cmdline.h"
#include "deb/deb.h"

G_BEGIN_DECLS

/* The repository a run writes to. */
typedef struct UnpackRepo UnpackRepo;
struct UnpackRepo {
  /* The commit the ref REF (exactly that ref) points at: *OUT_COMMIT, NULL
   * when there is none. */
  gboolean (*read_ref) (UnpackRepo *repo, const char *ref, char **out_commit, GError **error);
  /* The commit object CHECKSUM, or NULL when it cannot be read. */
  GVariant *(*load_commit) (UnpackRepo *repo, const char *checksum);
  /* Begin the write transaction (called once, when the first package is
   * to be unpacked) and give the sink its objects go to. */
  StoreSink *(*begin) (UnpackRepo *repo, GError **error);
  /* Point REF at COMMIT when the transaction finishes (its file is left
   * alone when it does already). */
  gboolean (*set_ref) (UnpackRepo *repo, const char *ref, const char *commit, GError **error);
  /* Finish the transaction: objects on disk, then the refs. */
  gboolean (*finish) (UnpackRepo *repo, GError **error);
};

/* The path of the .deb URL names, in CACHE_DIR (fetch_cached()'s rules). */
typedef char *(*UnpackFetch) (const char *url, const char *cache_dir, const char *sha256,
                              gint64 size, GError **error);

typedef struct {
  GPtrArray *jobs;        /* what to unpack, in order */
  char *cache;            /* --cache */
  char *repo;             /* the repository's path, as given */
  gboolean merged_usr;
  gboolean batch;         /* --batch: print "COMMIT REF" lines */
} UnpackArgs;

void unpack_args_clear (UnpackArgs *args);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (UnpackArgs, unpack_args_clear)

/* Parse unpack-deb's command line (ARGV[0] is "unpack-deb"). */
gboolean unpack_args_parse (CmdInvocation *inv, int argc, char **argv, UnpackArgs *args,
                            GError **error);

/* Unpack every job into REPO and print the commits (and, on standard
 * error, the entries that were skipped). */
gboolean unpack_run (UnpackRepo *repo, const UnpackArgs *args, UnpackFetch fetch, GError **error);

/* The error (UNPACK_ERROR_DEFER) by which the lean front's repository or
 * fetch says "not here: run the commands module", before anything the user
 * would see has happened. */
#define UNPACK_ERROR (unpack_error_quark ())
GQuark unpack_error_quark (void);
#define UNPACK_ERROR_DEFER 1

G_END_DECLS
