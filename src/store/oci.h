/* oci.h — a tree as an OCI image (image-spec 1.0): an image layout
 * directory, or that layout as a tar archive (what "skopeo copy
 * oci-archive:" and "podman load" read).
 *
 * One layer, the tree's tar (tarball.h: owners, modes, extended attributes
 * such as file capabilities), or the layers a caller planned (OciLayering:
 * lower layers that hold the files a plan assigns them, a top layer with
 * the rest and every directory), each gzip-compressed without a name or
 * time in its header; a config with the architecture (and variant), os
 * "linux", PATH, "created" equal to the commit's timestamp, a history
 * entry per layer and the annotations as labels; a manifest with the
 * annotations; index.json naming it, with the tag as
 * org.opencontainers.image.ref.name.  Every byte follows from the commit
 * and the options: the same ref gives the same files, and the same
 * archive. */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

/* A file of the image that goes to a lower layer: where, and the content
 * it must have there (else it goes to the top layer). */
typedef struct {
  guint layer;
  char checksum[OSTREE_SHA256_STRING_LEN + 1];
} OciOwned;

/* The layers of an image below its top layer. */
typedef struct {
  guint n_layers;
  gint64 *mtimes;       /* each layer's entries' time */
  char **comments;      /* each layer's history comment */
  GHashTable *owned;    /* path "/usr/bin/a" -> OciOwned*; others go to the top layer */
} OciLayering;

void oci_layering_free (OciLayering *layering);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (OciLayering, oci_layering_free)

typedef struct {
  const char *architecture;  /* OCI's (Go's) name: "amd64", "arm64", "arm", "386"… */
  const char *variant;       /* "v8", "v7"…, or NULL */
  const char *tag;           /* the ref name in index.json, or NULL */
  const OciLayering *layering;  /* NULL: one layer */
  const char *const *annotations;  /* "KEY", "VALUE", …, NULL; or NULL */
} OciOptions;

/* Write COMMIT's tree as an OCI image to DEST: a new or empty directory, or
 * with AS_TAR a tar archive written under a temporary name and renamed into
 * place.  Nothing is left behind on failure. */
gboolean oci_write_commit (OstreeRepo *repo, const char *commit, const char *dest,
                           gboolean as_tar, const OciOptions *opts, GCancellable *cancellable,
                           GError **error);

/* The OCI architecture and variant of a dpkg architecture ("arm64" ->
 * "arm64", "v8"; "armhf" -> "arm", "v7"), or FALSE when it has none. */
gboolean oci_platform_of_dpkg_arch (const char *dpkg_arch, const char **out_arch,
                                    const char **out_variant);

G_END_DECLS
