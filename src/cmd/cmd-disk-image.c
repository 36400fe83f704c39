/* apt2ostree disk-image — a deployable image as a bootable raw disk (see
 * image/diskimage.h). */
#include "config.h"

#include <stdio.h>

#include "cmd/cmd.h"
#include "image/diskimage.h"
#include "store/fsimage.h"

gboolean
cmd_disk_image (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                GError **error)
{
  g_autofree char *output = NULL;
  g_autofree char *size_text = NULL;
  g_auto(GStrv) kargs = NULL;
  g_autofree char *remote = NULL;
  g_auto(GStrv) remote_options = NULL;
  g_autofree char *osname = NULL;
  g_autofree char *bootloader = NULL;
  gboolean force = FALSE;
  const GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the disk image to this file", "FILE" },
    { "size", 0, 0, G_OPTION_ARG_STRING, &size_text,
      "The disk's size (4G, 8192M; default: the image's with room for an upgrade)", "SIZE" },
    { "karg", 0, 0, G_OPTION_ARG_STRING_ARRAY, &kargs,
      "A kernel argument after root=UUID=… rw (repeatable), e.g. console=ttyS0", "ARG" },
    { "remote", 0, 0, G_OPTION_ARG_STRING, &remote,
      "The remote the device upgrades from; the deployment's origin is NAME:REF", "NAME=URL" },
    { "remote-option", 0, 0, G_OPTION_ARG_STRING_ARRAY, &remote_options,
      "An option of the remote's config (repeatable), e.g. gpg-verify=false", "KEY=VALUE" },
    { "os", 0, 0, G_OPTION_ARG_STRING, &osname,
      "The stateroot's name (default: the image's os-release ID)", "NAME" },
    { "bootloader", 0, 0, G_OPTION_ARG_STRING, &bootloader,
      "grub-efi (default: an EFI system partition with GRUB, x86-64) or extlinux (no EFI "
      "partition: firmware that reads /boot/extlinux/extlinux.conf)", "NAME" },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force, "Replace FILE when it exists", NULL },
    { NULL }
  };
  if (!cmd_parse (inv, "REF -o FILE [--size SIZE] [--karg ARG]… [--remote NAME=URL]",
                  "Make a bootable raw disk image of the deployable image REF: a GPT\n"
                  "partition table, an EFI system partition with GRUB, /boot and the root\n"
                  "partition holding the OSTree sysroot with REF deployed.  The boot loader\n"
                  "follows later deployments (upgrade, rollback).  As root.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 2)
    return cmd_usage_error (inv, error, argc < 2 ? "expected REF" : "expected one REF");
  if (output == NULL)
    return cmd_usage_error (inv, error, "-o FILE is required");
  DiskimageOptions opts = { .output = output, .kargs = (const char *const *) kargs,
                            .remote_options = (const char *const *) remote_options,
                            .osname = osname, .force = force };
  if (size_text != NULL && !fsimage_parse_size (size_text, &opts.size, error))
    return FALSE;
  if (bootloader != NULL && !diskimage_parse_bootloader (bootloader, &opts.bootloader, error))
    return FALSE;
  g_auto(GStrv) name_url = remote != NULL ? g_strsplit (remote, "=", 2) : NULL;
  if (remote != NULL && (name_url[1] == NULL || *name_url[0] == '\0' || *name_url[1] == '\0'))
    return cmd_usage_error (inv, error, "--remote \"%s\": expected NAME=URL", remote);
  if (remote_options != NULL && remote == NULL)
    return cmd_usage_error (inv, error, "--remote-option goes with --remote");
  if (remote != NULL)
    {
      opts.remote_name = name_url[0];
      opts.remote_url = name_url[1];
    }

  g_autoptr(OstreeRepo) repo = NULL;
  g_autoptr(RepoRev) rev = cmd_open_rev (inv, argv[1], &repo, cancellable, error);
  if (rev == NULL)
    return FALSE;
  if (!diskimage_write (repo, rev, &opts, cancellable, error))
    return FALSE;
  printf ("%s: %s deployed\n", output, rev->commit);
  return TRUE;
}
