/* imagediff.h — what changed between two images, package-aware: packages
 * added, removed, upgraded and downgraded (Debian's version order), each
 * with the source it came from when a lockfile says; and, between two
 * trees, the files that changed grouped by the package that owns them (the
 * .list files of the dpkg database in the trees), with the files no package
 * owns (written by maintainer scripts) in a group of their own. */
#pragma once

#include <ostree.h>

#include "apt/lockfile.h"

G_BEGIN_DECLS

typedef struct {
  char *name, *architecture, *version;
  char *source;          /* the lockfile's source name, or NULL (a ref) */
  char *sha256;          /* the lockfile's .deb SHA256, or NULL (a ref) */
} ImagePackage;

/* One side: a lockfile's packages or an image's installed ones. */
typedef struct {
  char *label;           /* as given on the command line */
  GPtrArray *packages;   /* ImagePackage*, by name then architecture */
  GFile *root;           /* the tree, or NULL for a lockfile */
} ImageSide;

void image_side_free (ImageSide *side);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ImageSide, image_side_free)

ImageSide *image_side_from_lockfile (Lockfile *lock, const char *label);
ImageSide *image_side_from_ref (OstreeRepo *repo, const char *ref, GCancellable *cancellable,
                                GError **error);

typedef enum {
  IMAGE_CHANGE_ADDED,
  IMAGE_CHANGE_REMOVED,
  IMAGE_CHANGE_UPGRADED,
  IMAGE_CHANGE_DOWNGRADED,
  IMAGE_CHANGE_REBUILT,      /* the same version, another .deb (lockfiles only) */
} ImageChangeKind;

typedef struct {
  ImageChangeKind kind;
  const ImagePackage *before, *after;  /* NULL when added / removed */
} ImagePackageChange;

/* The package changes from A to B (ImagePackageChange*, by name then
 * architecture); a package whose version and source are the same is not
 * listed. */
GPtrArray *image_diff_packages (ImageSide *a, ImageSide *b);

typedef struct {
  char change;           /* 'A' added, 'D' deleted, 'M' modified */
  char *path;            /* "/usr/bin/x" */
  char *owner;           /* "NAME:ARCH" of the package that ships it, or NULL */
} ImageFileChange;

void image_file_change_free (ImageFileChange *change);

/* Files and symbolic links that differ between the trees of A and B
 * (ImageFileChange*, by owner (none last) then path); directories are left
 * out. */
GPtrArray *image_diff_files (ImageSide *a, ImageSide *b, GCancellable *cancellable, GError **error);

/* "upgraded", … */
const char *image_change_kind_name (ImageChangeKind kind);

/* CHANGES as text: one line per package ("upgraded   NAME:ARCH OLD (SOURCE)
 * -> NEW (SOURCE)"), then the counts; what "diff" prints and "lock
 * --update" too, fit for a commit message. */
char *image_diff_packages_text (GPtrArray *changes);

/* FILES (image_diff_files()) as text: a line "OWNER:" for each package,
 * then "  A /path" (A, D or M) for each of its files. */
char *image_diff_files_text (GPtrArray *files);

/* CHANGES and FILES (or NULL) as "diff --json" prints them: {"packages":
 * [{change, name, architecture, before, after}], "files": [{change, path,
 * package}]}, pretty-printed, with a final newline. */
char *image_diff_to_json (GPtrArray *changes, GPtrArray *files);

G_END_DECLS
