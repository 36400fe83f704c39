/* ocilayers.h — an image's OCI layers planned by package, and the labels
 * that say what the image is (store/oci.h writes them).
 *
 * A file's owner is the package whose tree (deb/NAME/VERSION/ARCH/…, left
 * in the repository by the build) holds that path with the content the
 * image has there; its source package's name, hashed (SHA256), picks one
 * of N-1 buckets, so a bucket's layer changes only when one of its
 * packages does, whatever else changes in the image.  Files no package
 * owns (the dpkg database, what maintainer scripts made or changed) go to
 * the top layer.  Buckets no package fell into are left out.
 *
 * With a previous image (an OCI layout that export --oci --layers wrote,
 * read as untrusted input), its lower layers are the buckets: each source
 * package its history lists stays in its layer, a new one is hashed among
 * them. */
#pragma once

#include <ostree.h>

#include "store/oci.h"

G_BEGIN_DECLS

typedef struct {
  OciLayering *layering;     /* NULL: one layer */
  GStrv annotations;         /* "KEY", "VALUE", …, for OciOptions */
  guint without_tree;        /* installed packages whose tree is not in the repository */
} OciPlan;

void ocilayers_plan_free (OciPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (OciPlan, ocilayers_plan_free)

/* The most layers a plan has (containerd takes at most 127). */
#define OCILAYERS_MAX 127

/* The plan for COMMIT (named NAME in errors) in N_LAYERS layers (1: one
 * layer, no package trees needed; more: the image must have a dpkg
 * database), or with PREVIOUS_DIR in as many as that image has.  The annotations: org.opencontainers.image.created and
 * .revision (the commit), apt2ostree.commit, apt2ostree.packages (how many
 * are installed, when the image has a dpkg database) and, with LOCKFILE,
 * apt2ostree.lockfile.sha256. */
OciPlan *ocilayers_plan (OstreeRepo *repo, const char *commit, const char *name, guint n_layers,
                         const char *previous_dir, const char *lockfile,
                         GCancellable *cancellable, GError **error);

G_END_DECLS
