/* diskimage.h — a deployable image (image/deployable.h) as a raw disk a
 * device boots from, made without loop devices or mounts:
 *
 * - a GPT partition table (sfdisk) with, for GRUB, an EFI system partition
 *   holding EFI/BOOT/BOOTX64.EFI, a standalone GRUB (grub-mkstandalone,
 *   Debian's grub-efi-amd64-bin), FAT made by mkfs.vfat and filled by
 *   mtools; a /boot partition; the root partition with the OSTree sysroot;
 * - the sysroot made with libostree's OstreeSysroot API, as "ostree admin
 *   init-fs", "os-init" and "deploy" do: the image deployed with its kernel
 *   arguments (root=UUID=… rw, then the caller's), the remote (when given)
 *   in the sysroot repository's config and the deployment's origin naming
 *   REMOTE:REF, so "ostree admin upgrade" on the device pulls from it;
 * - the boot loader configuration follows every later deployment (upgrade,
 *   rollback) with no boot loader package in the image: the sysroot's
 *   bootloader is "syslinux", whose libostree backend rewrites
 *   /boot/loader/syslinux.cfg on every deploy (/boot/syslinux/syslinux.cfg
 *   and /boot/extlinux/extlinux.conf, which Jetson-style boards read, link
 *   to it); GRUB's embedded config finds the /boot partition by its UUID,
 *   turns that file into GRUB commands (syslinux_configfile) and boots its
 *   default entry;
 * - the deployment's /etc/fstab mounts / and /boot by UUID, which a device
 *   needs for its upgrades to reach the boot partition;
 * - the file systems' UUIDs and the partition table's GUIDs come from the
 *   commit checksum: the same ref gives the same identifiers.
 *
 * The partitions are made as files (mkfs.ext4 -d, mkfs.vfat + mcopy) in a
 * scratch directory beside the output and placed with dd conv=notrunc; the
 * disk is written under a temporary name and renamed over the output at
 * the end, so a failure leaves nothing there.  Each program's failure is
 * one line naming it and the step.  Needs root (the sysroot keeps the
 * files' owners). */
#pragma once

#include <ostree.h>

#include "store/repo.h"

G_BEGIN_DECLS

typedef enum {
  DISKIMAGE_GRUB_EFI,   /* x86-64 UEFI: an EFI system partition with GRUB */
  DISKIMAGE_EXTLINUX,   /* no EFI partition: firmware that reads extlinux.conf */
} DiskimageBootloader;

typedef struct {
  const char *output;                 /* the disk image's path */
  guint64 size;                       /* bytes; 0: the tree's size with room for an upgrade */
  const char *const *kargs;           /* more kernel arguments, or NULL */
  const char *remote_name;            /* or NULL: no remote, the origin names the ref alone */
  const char *remote_url;
  const char *const *remote_options;  /* KEY=VALUE for the remote's config, or NULL */
  const char *osname;                 /* or NULL: the image's os-release ID, else "debian" */
  DiskimageBootloader bootloader;
  gboolean force;                     /* replace an existing output */
} DiskimageOptions;

/* Write the disk for REV (a deployable image in REPO) as OPTS say. */
gboolean diskimage_write (OstreeRepo *repo, RepoRev *rev, const DiskimageOptions *opts,
                          GCancellable *cancellable, GError **error);

/* "grub-efi" or "extlinux" as a DiskimageBootloader. */
gboolean diskimage_parse_bootloader (const char *text, DiskimageBootloader *out, GError **error);

G_END_DECLS
