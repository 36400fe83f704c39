/* apt2ostree export — a tree out of the repository, as a directory or a tar
 * archive. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "image/ocilayers.h"
#include "store/direxport.h"
#include "store/fsimage.h"
#include "store/oci.h"
#include "store/tarball.h"
#include "store/treeread.h"
#include "cmd/cmd.h"
#include "store/repo.h"
#include "base/util.h"

/* The OCI platform of the image: its dpkg architecture (ARCH, else the
 * first line of var/lib/dpkg/arch in the tree). */
static gboolean
oci_platform (OstreeRepo *repo, RepoRev *rev, const char *arch, OciOptions *opts,
              GCancellable *cancellable, GError **error)
{
  g_autofree char *from_tree = NULL;
  if (arch == NULL)
    {
      g_autoptr(GFile) root = NULL;
      if (!ostree_repo_read_commit (repo, rev->commit, &root, NULL, cancellable, error))
        return FALSE;
      from_tree = treeread_text (root, "var/lib/dpkg/arch", cancellable, error);
      if (from_tree == NULL && error != NULL && *error != NULL)
        return FALSE;
      if (from_tree == NULL)
        return util_fail (error, "\"%s\" has no var/lib/dpkg/arch to take the image's architecture "
                          "from; give --arch", rev->name);
      from_tree[strcspn (from_tree, "\n")] = '\0';
      arch = from_tree;
    }
  if (!oci_platform_of_dpkg_arch (arch, &opts->architecture, &opts->variant))
    return util_fail (error, "architecture \"%s\" has no OCI name known to apt2ostree", arch);
  return TRUE;
}

gboolean
cmd_export (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
            GError **error)
{
  g_autofree char *dir = NULL;
  g_autofree char *tar = NULL;
  g_autofree char *oci = NULL;
  g_autofree char *tag = NULL;
  g_autofree char *arch = NULL;
  g_autofree char *squashfs = NULL;
  g_autofree char *ext4 = NULL;
  g_autofree char *size_text = NULL;
  g_autofree char *compression = NULL;
  g_autofree char *lockfile = NULL;
  g_autofree char *previous = NULL;
  int layers = -1;  /* not given */
  const GOptionEntry entries[] = {
    { "dir", 0, 0, G_OPTION_ARG_FILENAME, &dir,
      "Copy the tree to this new or empty directory", "DIR" },
    { "tar", 0, 0, G_OPTION_ARG_FILENAME, &tar,
      "Write the tree as a tar archive (.tar, .tar.gz, .tar.xz, .tar.zst, .tar.bz2; "
      "\"-\" for standard output)", "FILE" },
    { "oci", 0, 0, G_OPTION_ARG_FILENAME, &oci,
      "Write an OCI image: a layout in this new or empty directory, or an archive if it ends "
      "in .tar", "DIR|FILE.tar" },
    { "tag", 0, 0, G_OPTION_ARG_STRING, &tag, "With --oci: the image's tag (ref.name)", "NAME" },
    { "arch", 0, 0, G_OPTION_ARG_STRING, &arch,
      "With --oci: the dpkg architecture (default: the image's var/lib/dpkg/arch)", "ARCH" },
    { "layers", 0, 0, G_OPTION_ARG_INT, &layers,
      "With --oci: that many layers, the files grouped by the package that shipped them, what "
      "no package shipped in the top one (1-127; default: 1, the whole tree in one layer)", "N" },
    { "previous", 0, 0, G_OPTION_ARG_FILENAME, &previous,
      "With --oci: keep each package in its layer of this earlier image (an OCI layout "
      "export --oci --layers wrote), and its number of layers", "DIR" },
    { "lockfile", 0, 0, G_OPTION_ARG_FILENAME, &lockfile,
      "With --oci: the image's lockfile, whose SHA256 the image's labels give", "FILE" },
    { "squashfs", 0, 0, G_OPTION_ARG_FILENAME, &squashfs,
      "Write a squashfs image with mksquashfs (as root)", "FILE" },
    { "compression", 0, 0, G_OPTION_ARG_STRING, &compression,
      "With --squashfs: the compression (default: gzip)", "gzip|zstd|xz" },
    { "ext4", 0, 0, G_OPTION_ARG_FILENAME, &ext4,
      "Write an ext4 image with mkfs.ext4 -d (as root)", "FILE" },
    { "size", 0, 0, G_OPTION_ARG_STRING, &size_text,
      "With --ext4: the image's size (512M, 2G; default: the tree's with room to spare)", "SIZE" },
    { NULL }
  };
  if (!cmd_parse (inv, "REV (--dir DIR | --tar FILE |\n"
                  "                  --oci DIR|FILE.tar [--tag NAME] [--layers N | --previous DIR]\n"
                  "                  [--lockfile FILE] |\n"
                  "                  --squashfs FILE [--compression gzip|zstd|xz] |\n"
                  "                  --ext4 FILE [--size SIZE])",
                  "Get the tree of REV (a ref or commit) out of the repository, keeping\n"
                  "owners, modes and extended attributes.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 2)
    return cmd_usage_error (inv, error, argc < 2 ? "expected REV" : "expected one REV");
  if ((dir != NULL) + (tar != NULL) + (oci != NULL) + (squashfs != NULL) + (ext4 != NULL) != 1)
    return cmd_usage_error (inv, error, "give exactly one of --dir, --tar, --oci, --squashfs and --ext4");
  FsimageOptions fs = { .compression = compression };
  if (size_text != NULL && ext4 == NULL)
    return cmd_usage_error (inv, error, "--size goes with --ext4");
  if (size_text != NULL && !fsimage_parse_size (size_text, &fs.size, error))
    return FALSE;
  if (compression != NULL && squashfs == NULL)
    return cmd_usage_error (inv, error, "--compression goes with --squashfs");
  if (compression != NULL && !g_strv_contains (fsimage_compressions (), compression))
    {
      g_autofree char *choices = g_strjoinv ("|", (char **) fsimage_compressions ());
      return cmd_usage_error (inv, error, "--compression \"%s\": expected %s", compression, choices);
    }
  if ((tag != NULL || arch != NULL || layers != -1 || lockfile != NULL || previous != NULL)
      && oci == NULL)
    return cmd_usage_error (inv, error, "--tag, --arch, --layers, --previous and --lockfile go "
                            "with --oci");
  if (layers != -1 && previous != NULL)
    return cmd_usage_error (inv, error, "--previous keeps the earlier image's layers: give it or "
                            "--layers, not both");
  if (oci != NULL && layers == -1)
    layers = 1;
  if (oci != NULL && (layers < 1 || layers > OCILAYERS_MAX))
    return cmd_usage_error (inv, error, "--layers %d: expected 1 to %d", layers, OCILAYERS_MAX);

  g_autoptr(OstreeRepo) repo = NULL;
  g_autoptr(RepoRev) rev = cmd_open_rev (inv, argv[1], &repo, cancellable, error);
  if (rev == NULL)
    return FALSE;

  if (tar != NULL)
    return tarball_write_commit (repo, rev->commit, tar, cancellable, error);
  if (squashfs != NULL || ext4 != NULL)
    return fsimage_write_commit (repo, rev->commit, squashfs != NULL ? FSIMAGE_SQUASHFS : FSIMAGE_EXT4,
                                 squashfs != NULL ? squashfs : ext4, &fs, cancellable, error);
  if (oci != NULL)
    {
      OciOptions opts = { .tag = tag };
      if (!oci_platform (repo, rev, arch, &opts, cancellable, error))
        return FALSE;
      g_autoptr(OciPlan) plan = ocilayers_plan (repo, rev->commit, rev->name, (guint) layers,
                                                previous, lockfile, cancellable, error);
      if (plan == NULL)
        return FALSE;
      if (plan->without_tree > 0)
        fprintf (stderr, "apt2ostree export: warning: %s: %u packages have no package tree in the "
                 "repository; their files are in the top layer\n", rev->name, plan->without_tree);
      opts.layering = plan->layering;
      opts.annotations = (const char *const *) plan->annotations;
      return oci_write_commit (repo, rev->commit, oci, g_str_has_suffix (oci, ".tar"), &opts,
                               cancellable, error);
    }
  guint dropped = 0;
  if (!direxport_write (repo, rev, dir, &dropped, cancellable, error))
    return FALSE;
  if (dropped > 0)
    fprintf (stderr, "apt2ostree export: warning: %s: %u extended attributes outside user.* "
             "(or on symlinks) left out: only root can set them\n", dir, dropped);
  return TRUE;
}
