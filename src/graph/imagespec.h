/* imagespec.h — one image of a build as the command line names it,
 * LOCKFILE[=REF], and the refs that image's build writes besides REF.
 * "ninja", "build" and "prune" read their LOCKFILE arguments here, so the
 * default ref and the names of the stage refs have one definition. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  char *lockfile;   /* the path as given */
  char *ref;        /* the image's ref: as given after "=", else the default */
} ImageSpec;

void imagespec_free (ImageSpec *spec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ImageSpec, imagespec_free)

/* The image ref a lockfile gives by default: its file name without
 * ".lock.json" (or ".json"): "boards/a.lock.json" gives "a". */
char *imagespec_default_ref (const char *lockfile_path);

/* ARG split into *OUT_LOCKFILE and *OUT_REF (NULL when ARG gives none):
 * at the last "=" (a ref holds none), unless ARG names an existing file. */
void imagespec_split (const char *arg, char **out_lockfile, char **out_ref);

/* "LOCKFILE" or "LOCKFILE=REF", split at the last "=" (a ref holds none);
 * an ARG that names an existing file is a LOCKFILE, "=" or not.  The ref
 * must be a valid ref name; the error names ARG. */
ImageSpec *imagespec_parse (const char *arg, GError **error);

/* Each of the N ARGS parsed (ImageSpec*, in order).  Two arguments that
 * give the same ref are an error naming both. */
GPtrArray *imagespec_parse_all (const char *const *args, int n, GError **error);

/* The refs the build of image IMAGE writes before its ref IMAGE:
 * stage1/IMAGE (stage 1); before-configure/IMAGE (stage 1 with the
 * --before-configure trees over it); configured/IMAGE (stage 2, when
 * --after-configure trees go over it into IMAGE); hooks/IMAGE/WHICH-N
 * (the Nth --WHICH directory, imported). */
char *imagespec_stage1_ref (const char *image);
char *imagespec_before_configure_ref (const char *image);
char *imagespec_configured_ref (const char *image);
char *imagespec_hook_ref (const char *image, const char *which, guint n);
/* The configured image before "deployable" rearranges it into IMAGE
 * (build --deployable): before-deployable/IMAGE. */
char *imagespec_before_deployable_ref (const char *image);

/* The image whose build writes REF, when REF is one of the refs above
 * (not the image ref itself, which is any name), else NULL. */
char *imagespec_image_of_stage_ref (const char *ref);

G_END_DECLS
