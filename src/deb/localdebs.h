/* localdebs.h — local .deb files as a source "lock" resolves from, as apt
 * reads "apt install ./x.deb": a directory of .debs with no index (lock
 * --debs DIR, an L4T BSP's nv_tegra/l4t_deb_packages), or the .debs a
 * package list names.  Each .deb's control file is read and checked as
 * dpkg checks it; a Packages index is made from them (each stanza the
 * control file's, plus Filename, Size and SHA256), which the resolver reads
 * as it reads an archive's. */
#pragma once

#include <glib.h>

#include "apt/lock.h"
#include "apt/lockinput.h"

G_BEGIN_DECLS

typedef struct {
  char *path;           /* as given (relative to the current directory) */
  char *name, *version, *architecture;
  char *stanza;         /* the control file's fields, one stanza */
  gint64 size;
  char *sha256;
} LocalDeb;

void local_deb_free (LocalDeb *deb);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LocalDeb, local_deb_free)

/* Read the .deb at PATH: its control file (up to control.tar's end; the
 * build checks data.tar when it unpacks), size and sha256.  Errors name
 * PATH. */
LocalDeb *local_deb_read (const char *path, GError **error);

/* Every "*.deb" of DIR (not its subdirectories), sorted by file name; no
 * .deb at all, or two that are the same package (name, version and
 * architecture), is an error naming DIR. */
GPtrArray *local_debs_read_dir (const char *dir, GError **error);

/* The source NAME of DEBS (LocalDeb*) with PIN_PRIORITY: their Packages
 * index written into INDEX_DIR (named by its sha256), each Filename the
 * .deb's path relative to the directory of LOCK_PATH (the lockfile being
 * written); DIR_RECORDED (or NULL) is the directory as the lockfile
 * records it. */
LockLocalSource *local_debs_source (const char *name, int pin_priority, const char *dir_recorded,
                                    GPtrArray *debs, const char *lock_path,
                                    const char *index_dir, GError **error);

/* What the resolver is asked for to get exactly DEB: "NAME=VERSION", with
 * ":ARCH" when it is neither ARCH (the image's) nor "all". */
char *local_deb_request (LocalDeb *deb, const char *arch);

/* The local .debs "lock" resolves from, into LOCAL (cleared by the
 * caller): the local sources PREVIOUS records (the lockfile being updated,
 * or NULL; their directories relative to BASE_DIR), then DIRS
 * (LockDebsDir*), then the .debs ENTRIES (the request's packages,
 * relative to BASE_DIR) name, read into the source "local", each entry rewritten
 * relative to OUTPUT (the lockfile being written) and asked of the
 * resolver as NAME=VERSION (ARCH: the image's).  Their Packages indices go
 * into INDEX_DIR. */
gboolean local_debs_to_lock (Lockfile *previous, GPtrArray *dirs, char **entries,
                             const char *base_dir, const char *arch, const char *output,
                             const char *index_dir, LockLocal *local, GError **error);

G_END_DECLS
