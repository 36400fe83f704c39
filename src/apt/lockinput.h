/* lockinput.h — what "apt2ostree lock" is asked: its option values made
 * into a LockRequest, from a package list or from the request a lockfile
 * records (--update); the --debs directories; the lockfile the new one
 * replaces (for the change list); the warning for unchecked sources. */
#pragma once

#include <glib.h>

#include "apt/lock.h"
#include "apt/lockfile.h"
#include "apt/sources.h"

G_BEGIN_DECLS

/* The option values of "lock", as given (each NULL or FALSE when not). */
typedef struct {
  char *output;
  char *sources_path;
  char *arch;
  char *variant;
  char *cache;
  char *merged_usr;
  char *suite;
  char **components;        /* --components, split at commas */
  char **mirrors;
  char **debs;
  char **path_filters;      /* --path-exclude and --path-include, in the order
                             * given, as dpkg.cfg lines */
  gboolean recommends;
  gboolean update;
  gboolean record_uris;
} LockArgs;

void lock_args_clear (LockArgs *args);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (LockArgs, lock_args_clear)

/* One --debs directory: its .debs as the local source NAME. */
typedef struct {
  char *name;
  int pin_priority;
  char *dir;
} LockDebsDir;

void lock_debs_dir_free (LockDebsDir *dir);

/* What is locked: the request, and the lockfile it was read from (with
 * --update) or the package list it holds (without). */
typedef struct {
  LockRequest req;          /* borrows from the fields below and the LockArgs */
  Lockfile *previous;       /* the lockfile --update reads, or NULL */
  char **packages;
  char *architecture;       /* the image's, without --update */
  char *sources_path;       /* the sources file to read; NULL: the host's */
  char *sources_file;       /* the sources file as the request records it */
  char *output;             /* the lockfile to write */
  char *cache;              /* where verified indices are kept */
  GPtrArray *debs_dirs;     /* LockDebsDir*: the --debs directories */
  SourcesList *sources;     /* the sources to lock from */
} LockInput;

void lock_input_clear (LockInput *in);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (LockInput, lock_input_clear)

/* The input of a lock of PATH (a package list, or with ARGS->update the
 * lockfile to update), into IN (cleared by the caller), its sources
 * loaded.  A bad option value (an --arch, a --debs) is a G_OPTION_ERROR,
 * without the hint to --help the caller adds. */
gboolean lock_input_load (const LockArgs *args, const char *path, LockInput *in,
                          GError **error);

/* The lockfile at PATH that LOCK is about to replace, when there is one and
 * it differs; NULL too when it cannot be read: it is replaced either way,
 * and only the change list is left out. */
Lockfile *lock_input_replaced (const char *path, Lockfile *lock);

/* One line on stderr for each source of LOCK read without a signature
 * check. */
void lock_warn_trusted (Lockfile *lock);

G_END_DECLS
