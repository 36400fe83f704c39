/* mod.h — run a command over a tree and commit what it changed (the
 * article's ostree_mod): check IN out by hardlinks, mount an overlay over
 * it, run the command in bubblewrap, and fold the overlay's upper directory
 * into IN to make OUT.  `apt2ostree mod` and `apt2ostree configure` call it. */
#pragma once

#include <ostree.h>

#include "sandbox/runlimits.h"

G_BEGIN_DECLS

/* Where the time went, in seconds. */
typedef struct {
  double checkout;   /* hardlink checkout of IN */
  double command;    /* sandbox setup, the command, sandbox teardown */
  double commit;     /* folding the upper directory into IN, writing OUT */
  double cleanup;    /* removing the scratch directory */
  double keep;       /* keep_checkout: bringing the checkout to OUT, keeping it */
} ModTimings;

typedef struct {
  const char *in;                /* ref or commit checksum */
  const char *out_ref;           /* NULL: nothing is committed (apt2ostree run) */
  gboolean chroot;               /* the tree is "/"; else it is /work over the host */
  const char *capture_subdir;    /* OUT is this directory of the result, or NULL */
  const char *workdir;           /* scratch parent, NULL: the repository's tmp/ */
  const char *const *binds;      /* SRC, DEST pairs, NULL-terminated (or NULL) */
  const char *const *ro_binds;   /* SRC, DEST pairs */
  const char *const *setenv;     /* VAR, VALUE pairs */
  gboolean network;
  gboolean keep_on_failure;      /* keep the scratch directory when the command fails */
  gboolean verbose;              /* the command's output also goes to stderr */
  gboolean terminal;             /* the command has the caller's stdin, stdout and
                                  * stderr (a shell); no log, no deadline */
  char **argv;                   /* the command */
  const char *description;       /* how errors name the command; NULL: its command line */
  GVariant *metadata;            /* more commit metadata (a{sv}) for OUT, or NULL */
  const char *subject;           /* OUT's subject; NULL: "apt2ostree mod IN ..." */
  gboolean keep_checkout;        /* with chroot, as root: take the checkout of IN that the
                                  * last run to OUT_REF kept, if it is one, and keep one of
                                  * OUT for the next (store/keptcheckout.h) */
  gboolean keep_same_tree;       /* OUT_REF keeps its commit when that is of the tree the
                                  * command leaves, though IN moved (apt2ostree mod: its
                                  * Ninja edge's restat) */
  ModTimings *timings;           /* filled in when not NULL */
  const RunLimits *limits;       /* deadline, memory, processes; NULL: none */
  /* What the command was doing when its deadline came, from its output so
   * far (" while configuring NAME (VERSION)"), or NULL; may be NULL. */
  char *(*progress) (const char *output);
  /* How the run names itself to the build that runs it (base/progress.h):
   * "NAME: checking out", "NAME: committing"; NULL: it says nothing. */
  const char *progress_name;
  /* Each piece of the command's output as it comes (sandbox.h), or NULL. */
  void (*output) (const char *data, gsize len, gpointer user_data);
  gpointer output_data;
  char **limits_held;            /* set to the limits and what held each (for --verbose:
                                  * "timeout 3600 s, memory 4.0 GiB (cgroup v2), ..."),
                                  * when not NULL */
} ModOptions;

/* The directory, inside the sandbox, where the tree is without --chroot. */
#define MOD_TREE_DIR "/work"

/* Run OPTIONS->argv over OPTIONS->in and commit the result to
 * OPTIONS->out_ref (the ref file is left alone when the commit is the one it
 * holds).  A command that fails writes nothing and is an error that gives
 * its exit status and its last lines of output. */
gboolean mod_run (OstreeRepo *repo, const ModOptions *options, char **out_commit,
                  GCancellable *cancellable, GError **error);

G_END_DECLS
