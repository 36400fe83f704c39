/* diskimage.c — a deployable image as a bootable raw disk; see
 * diskimage.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/scratch.h"
#include "base/tool.h"
#include "base/util.h"
#include "image/diskimage.h"
#include "store/treeread.h"

#define MIB (1024 * 1024)
#define ESP_MIB 64
/* The type GUIDs of an EFI system partition and of a Linux file system. */
#define GPT_ESP "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
#define GPT_LINUX "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
/* The file libostree's syslinux backend rewrites on every deployment. */
#define LOADER_CFG "loader/syslinux.cfg"

gboolean
diskimage_parse_bootloader (const char *text, DiskimageBootloader *out, GError **error)
{
  if (g_str_equal (text, "grub-efi"))
    *out = DISKIMAGE_GRUB_EFI;
  else if (g_str_equal (text, "extlinux"))
    *out = DISKIMAGE_EXTLINUX;
  else
    return util_fail (error, "--bootloader \"%s\": expected grub-efi or extlinux", text);
  return TRUE;
}

/* What the disk is made of, worked out before anything is written. */
typedef struct {
  const char *commit;
  char *refspec;        /* the deployment's origin: REMOTE:REF, REF, or the commit */
  char *osname;
  char *root_uuid, *boot_uuid, *esp_volid, *disk_guid;
  char *part_guids[3];  /* the partitions': EFI, /boot, root */
  char *work;           /* the scratch directory */
  char *sysroot;        /* WORK/sysroot: the root partition's files */
  char *bootfs;         /* WORK/boot: the /boot partition's files */
  guint64 esp_mib, boot_mib, root_mib;
} Disk;

static void
disk_clear (Disk *disk)
{
  g_free (disk->refspec);
  g_free (disk->osname);
  g_free (disk->root_uuid);
  g_free (disk->boot_uuid);
  g_free (disk->esp_volid);
  g_free (disk->disk_guid);
  for (guint i = 0; i < G_N_ELEMENTS (disk->part_guids); i++)
    g_free (disk->part_guids[i]);
  g_free (disk->work);
  g_free (disk->sysroot);
  g_free (disk->bootfs);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Disk, disk_clear)

/* An identifier for WHAT on the disk of COMMIT: the same commit, the same one. */
static char *
uuid_for (const char *commit, const char *what)
{
  g_autofree char *seed = g_strconcat (commit, ":", what, NULL);
  g_autofree char *hex = g_compute_checksum_for_string (G_CHECKSUM_SHA256, seed, -1);
  return util_uuid_from_hex (hex, '4');
}

/* --- the image ----------------------------------------------------------- */

static gboolean
has_type (GFile *root, const char *path, GFileType type)
{
  g_autoptr(GFile) file = g_file_resolve_relative_path (root, path);
  return g_file_query_file_type (file, G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, NULL) == type;
}

/* Whether ROOT has usr/lib/modules/KVER/vmlinuz for some KVER. */
static gboolean
has_kernel (GFile *root, GCancellable *cancellable)
{
  g_autoptr(GFile) modules = g_file_resolve_relative_path (root, "usr/lib/modules");
  g_autoptr(GFileEnumerator) it =
    g_file_enumerate_children (modules, G_FILE_ATTRIBUTE_STANDARD_NAME,
                               G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, cancellable, NULL);
  GFileInfo *info;
  while (it != NULL && g_file_enumerator_iterate (it, &info, NULL, cancellable, NULL) && info != NULL)
    {
      g_autofree char *path = g_build_filename ("usr/lib/modules", g_file_info_get_name (info),
                                                "vmlinuz", NULL);
      if (has_type (root, path, G_FILE_TYPE_REGULAR))
        return TRUE;
    }
  return FALSE;
}

/* The image's os-release ID when it makes a good stateroot name, else
 * "debian". */
static char *
image_osname (GFile *root, GCancellable *cancellable)
{
  g_autofree char *text = treeread_text (root, "usr/lib/os-release", cancellable, NULL);
  g_auto(GStrv) lines = g_strsplit (text != NULL ? text : "", "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      if (!g_str_has_prefix (*l, "ID="))
        continue;
      g_autofree char *id = g_strdup (*l + 3);
      g_strstrip (id);
      if (id[0] == '"' && strlen (id) >= 2 && id[strlen (id) - 1] == '"')
        {
          id[strlen (id) - 1] = '\0';
          memmove (id, id + 1, strlen (id));
        }
      gboolean good = id[0] != '\0' && id[0] != '.';
      for (const char *c = id; *c != '\0'; c++)
        good = good && (g_ascii_islower (*c) || g_ascii_isdigit (*c) || strchr ("._-", *c) != NULL);
      if (good)
        return g_steal_pointer (&id);
    }
  return g_strdup ("debian");
}

/* REV must be a deployable image: /usr/etc and a kernel in
 * /usr/lib/modules/KVER, as "ostree admin deploy" needs them. */
static gboolean
check_image (OstreeRepo *repo, RepoRev *rev, const DiskimageOptions *opts, Disk *disk,
             GCancellable *cancellable, GError **error)
{
  g_autoptr(GFile) root = NULL;
  if (!ostree_repo_read_commit (repo, rev->commit, &root, NULL, cancellable, error))
    return FALSE;
  if (!has_type (root, "usr/etc", G_FILE_TYPE_DIRECTORY) || !has_kernel (root, cancellable))
    return util_fail (error, "\"%s\" is not a deployable image (it needs /usr/etc and "
                      "/usr/lib/modules/KVER/vmlinuz): make it one with \"apt2ostree deployable\" "
                      "or \"apt2ostree build --deployable\"", rev->name);
  disk->osname = opts->osname != NULL ? g_strdup (opts->osname) : image_osname (root, cancellable);
  gboolean by_commit = g_str_equal (rev->name, rev->commit);
  if (opts->remote_name != NULL && by_commit)
    return util_fail (error, "\"%s\" is a commit: with --remote, name the image by the ref the "
                      "remote publishes, which the device upgrades from", rev->name);
  disk->refspec = opts->remote_name != NULL ? g_strconcat (opts->remote_name, ":", rev->name, NULL)
                                            : g_strdup (rev->name);
  return TRUE;
}

/* --- the sysroot ---------------------------------------------------------- */

static gboolean
make_dir (const char *parent, const char *name, mode_t mode, GError **error)
{
  g_autofree char *path = g_build_filename (parent, name, NULL);
  if ((mkdir (path, mode) != 0 && errno != EEXIST) || chmod (path, mode) != 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  return TRUE;
}

static gboolean
make_link (const char *target, const char *path, GError **error)
{
  if (symlink (target, path) != 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  return TRUE;
}

/* The sysroot's top directories (as "ostree admin init-fs"), the
 * repository and the deploy directory (libostree), and the boot loader
 * files libostree's syslinux backend starts from: /boot/loader ->
 * loader.0 holding a syslinux.cfg that has no entry yet. */
static gboolean
init_fs (OstreeSysroot *sysroot, const char *path, GCancellable *cancellable, GError **error)
{
  static const struct { const char *name; mode_t mode; } dirs[] = {
    { "boot", 0755 }, { "dev", 0755 }, { "home", 0755 }, { "proc", 0755 }, { "run", 0755 },
    { "sys", 0755 }, { "root", 0700 }, { "tmp", 01777 },
    { "boot/loader.0", 0755 }, { "boot/syslinux", 0755 }, { "boot/extlinux", 0755 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    if (!make_dir (path, dirs[i].name, dirs[i].mode, error))
      return FALSE;
  g_autoptr(GError) local_error = NULL;
  if (!ostree_sysroot_ensure_initialized (sysroot, cancellable, &local_error))
    return util_fail (error, "initializing the sysroot: %s", local_error->message);
  g_autofree char *cfg = g_build_filename (path, "boot/loader.0/syslinux.cfg", NULL);
  static const char text[] =
    "# libostree rewrites this file on every deployment (sysroot.bootloader=syslinux).\n";
  if (!g_file_set_contents (cfg, text, -1, &local_error))
    return util_fail (error, "%s: %s", cfg, local_error->message);
  g_autofree char *loader = g_build_filename (path, "boot/loader", NULL);
  g_autofree char *syslinux = g_build_filename (path, "boot/syslinux/syslinux.cfg", NULL);
  g_autofree char *extlinux = g_build_filename (path, "boot/extlinux/extlinux.conf", NULL);
  return make_link ("loader.0", loader, error)
         && make_link ("../" LOADER_CFG, syslinux, error)
         && make_link ("../" LOADER_CFG, extlinux, error);
}

/* The sysroot repository's config: the syslinux boot loader backend, and
 * the remote the device upgrades from. */
static gboolean
configure_repo (const char *sysroot, const DiskimageOptions *opts, GCancellable *cancellable,
                GError **error)
{
  g_autofree char *path = g_build_filename (sysroot, "ostree/repo", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(OstreeRepo) repo = ostree_repo_new (file);
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_open (repo, cancellable, &local_error))
    return util_fail (error, "%s: %s", path, local_error->message);
  g_autoptr(GKeyFile) config = ostree_repo_copy_config (repo);
  g_key_file_set_string (config, "sysroot", "bootloader", "syslinux");
  if (!ostree_repo_write_config (repo, config, &local_error))
    return util_fail (error, "%s: writing its config: %s", path, local_error->message);
  if (opts->remote_name == NULL)
    return TRUE;
  g_auto(GVariantBuilder) options;
  g_variant_builder_init (&options, G_VARIANT_TYPE ("a{sv}"));
  for (const char *const *o = opts->remote_options; o != NULL && *o != NULL; o++)
    {
      g_auto(GStrv) kv = g_strsplit (*o, "=", 2);
      if (kv[0][0] == '\0' || kv[1] == NULL)
        return util_fail (error, "--remote-option \"%s\": expected KEY=VALUE", *o);
      g_variant_builder_add (&options, "{sv}", kv[0], g_variant_new_string (kv[1]));
    }
  if (!ostree_repo_remote_change (repo, NULL, OSTREE_REPO_REMOTE_CHANGE_ADD, opts->remote_name,
                                  opts->remote_url, g_variant_builder_end (&options),
                                  cancellable, &local_error))
    return util_fail (error, "--remote %s=%s: %s", opts->remote_name, opts->remote_url,
                      local_error->message);
  return TRUE;
}

/* The commit pulled from the build's repository into the sysroot's, under
 * the origin's refspec (so that the device's pruning drops it once an
 * upgrade replaces it). */
static gboolean
pull_commit (OstreeRepo *from, OstreeRepo *to, const Disk *disk, GCancellable *cancellable,
             GError **error)
{
  g_autofree char *uri = g_file_get_uri (ostree_repo_get_path (from));
  const char *refs[] = { disk->commit, NULL };
  g_auto(GVariantBuilder) options;
  g_variant_builder_init (&options, G_VARIANT_TYPE ("a{sv}"));
  g_variant_builder_add (&options, "{sv}", "refs", g_variant_new_strv (refs, -1));
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_pull_with_options (to, uri, g_variant_builder_end (&options), NULL,
                                      cancellable, &local_error))
    return util_fail (error, "copying %s into the sysroot: %s", disk->commit, local_error->message);
  g_autofree char *remote = NULL;
  g_autofree char *ref = NULL;
  if (!ostree_parse_refspec (disk->refspec, &remote, &ref, &local_error)
      || !ostree_repo_set_ref_immediate (to, remote, ref, disk->commit, cancellable, &local_error))
    return util_fail (error, "setting %s in the sysroot: %s", disk->refspec, local_error->message);
  return TRUE;
}

/* The deployment's /etc/fstab: / and /boot by UUID. */
static gboolean
write_fstab (const char *deployment, const Disk *disk, GError **error)
{
  g_autofree char *path = g_build_filename (deployment, "etc/fstab", NULL);
  g_autofree char *text =
    g_strdup_printf ("# Written by apt2ostree disk-image: the partitions of this disk.\n"
                     "UUID=%s / ext4 defaults 0 1\n"
                     "UUID=%s /boot ext4 defaults 0 2\n", disk->root_uuid, disk->boot_uuid);
  g_autoptr(GError) local_error = NULL;
  if (!g_file_set_contents (path, text, -1, &local_error))
    return util_fail (error, "%s: %s", path, local_error->message);
  return TRUE;
}

/* The kernel arguments: the root partition, read-write, then the caller's. */
static GPtrArray *
kernel_args (const DiskimageOptions *opts, const Disk *disk)
{
  GPtrArray *args = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (args, g_strconcat ("root=UUID=", disk->root_uuid, NULL));
  g_ptr_array_add (args, g_strdup ("rw"));
  for (const char *const *a = opts->kargs; a != NULL && *a != NULL; a++)
    g_ptr_array_add (args, g_strdup (*a));
  g_ptr_array_add (args, NULL);
  return args;
}

/* Deploy the commit as "ostree admin deploy --os=OSNAME --karg=…" does,
 * then leave the deployment directory mutable: it is copied into a file
 * system and the scratch directory removed. */
static gboolean
deploy (OstreeRepo *repo, OstreeSysroot *sysroot, const DiskimageOptions *opts, const Disk *disk,
        GCancellable *cancellable, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(OstreeDeployment) deployment = NULL;
  g_autoptr(GKeyFile) origin = NULL;
  g_autoptr(GPtrArray) kargs = kernel_args (opts, disk);
  if (!ostree_sysroot_load (sysroot, cancellable, &local_error)
      || !ostree_sysroot_init_osname (sysroot, disk->osname, cancellable, &local_error)
      || !ostree_sysroot_load (sysroot, cancellable, &local_error))
    return util_fail (error, "preparing the sysroot for \"%s\": %s", disk->osname,
                      local_error->message);
  if (!pull_commit (repo, ostree_sysroot_repo (sysroot), disk, cancellable, error))
    return FALSE;
  origin = ostree_sysroot_origin_new_from_refspec (sysroot, disk->refspec);
  if (!ostree_sysroot_deploy_tree (sysroot, disk->osname, disk->commit, origin, NULL,
                                   (char **) kargs->pdata, &deployment, cancellable, &local_error)
      || !ostree_sysroot_simple_write_deployment (sysroot, disk->osname, deployment, NULL,
                                                  OSTREE_SYSROOT_SIMPLE_WRITE_DEPLOYMENT_FLAGS_NONE,
                                                  cancellable, &local_error))
    return util_fail (error, "deploying %s: %s", disk->refspec, local_error->message);
  g_autofree char *relpath = ostree_sysroot_get_deployment_dirpath (sysroot, deployment);
  g_autofree char *dir = g_build_filename (disk->sysroot, relpath, NULL);
  gboolean ok = write_fstab (dir, disk, error);
  if (!ostree_sysroot_deployment_set_mutable (sysroot, deployment, TRUE, cancellable, &local_error)
      && ok)
    return util_fail (error, "%s: %s", dir, local_error->message);
  return ok;
}

/* The sysroot in DISK->sysroot with the image deployed, its /boot moved to
 * DISK->bootfs (an empty /boot left as the mount point). */
static gboolean
make_sysroot (OstreeRepo *repo, const DiskimageOptions *opts, Disk *disk,
              GCancellable *cancellable, GError **error)
{
  if (!make_dir (disk->work, "sysroot", 0755, error))
    return FALSE;
  g_autoptr(GFile) file = g_file_new_for_path (disk->sysroot);
  g_autoptr(OstreeSysroot) sysroot = ostree_sysroot_new (file);
  if (!init_fs (sysroot, disk->sysroot, cancellable, error)
      || !configure_repo (disk->sysroot, opts, cancellable, error)
      || !deploy (repo, sysroot, opts, disk, cancellable, error))
    return FALSE;
  g_autofree char *boot = g_build_filename (disk->sysroot, "boot", NULL);
  if (rename (boot, disk->bootfs) != 0)
    return util_fail (error, "%s: %s", boot, g_strerror (errno));
  return make_dir (disk->sysroot, "boot", 0755, error);
}

/* --- sizes ---------------------------------------------------------------- */

/* The bytes the files under PATH take (hard links counted once). */
static gboolean
add_usage (const char *path, GHashTable *seen, guint64 *bytes, GError **error)
{
  struct stat st;
  if (lstat (path, &st) != 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  if (st.st_nlink > 1 && !S_ISDIR (st.st_mode))
    {
      g_autofree char *key = g_strdup_printf ("%ju:%ju", (uintmax_t) st.st_dev, (uintmax_t) st.st_ino);
      if (!g_hash_table_add (seen, g_steal_pointer (&key)))
        return TRUE;
    }
  *bytes += ((guint64) st.st_size + 4095) / 4096 * 4096 + 256;
  if (!S_ISDIR (st.st_mode))
    return TRUE;
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  if (dir == NULL)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  for (const char *name; (name = g_dir_read_name (dir)) != NULL;)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (!add_usage (child, seen, bytes, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
usage_mib (const char *path, guint64 *mib, GError **error)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint64 bytes = 0;
  if (!add_usage (path, seen, &bytes, error))
    return FALSE;
  *mib = (bytes + MIB - 1) / MIB;
  return TRUE;
}

/* The partitions' sizes: /boot holds three kernels and initramfs (two
 * deployments and the next one while it is written), the root what it
 * holds with room for ext4's own; the rest of --size goes to the root, and
 * without --size the root gets twice what it needs (room for an upgrade),
 * 1 GiB at least.  1 MiB before the first partition, 1 MiB at the end
 * for the GPT's backup. */
static gboolean
plan_sizes (const DiskimageOptions *opts, const char *name, Disk *disk, GError **error)
{
  guint64 boot_used, root_used;
  if (!usage_mib (disk->bootfs, &boot_used, error) || !usage_mib (disk->sysroot, &root_used, error))
    return FALSE;
  disk->esp_mib = opts->bootloader == DISKIMAGE_GRUB_EFI ? ESP_MIB : 0;
  disk->boot_mib = MAX (256, boot_used * 3 + 64);
  guint64 root_min = root_used + root_used / 8 + 128;
  guint64 fixed = 2 + disk->esp_mib + disk->boot_mib;
  if (opts->size == 0)
    {
      disk->root_mib = MAX (2 * root_min, 1024);
      return TRUE;
    }
  guint64 total = opts->size / MIB;
  if (total < fixed + root_min)
    return util_fail (error, "--size %" G_GUINT64_FORMAT "M is too small for \"%s\": its disk "
                      "needs %" G_GUINT64_FORMAT "M at least (EFI %" G_GUINT64_FORMAT "M, /boot %"
                      G_GUINT64_FORMAT "M, root %" G_GUINT64_FORMAT "M)", total, name,
                      fixed + root_min, disk->esp_mib, disk->boot_mib, root_min);
  disk->root_mib = total - fixed;
  return TRUE;
}

/* --- the partitions -------------------------------------------------------- */

static gboolean
sized_file (const char *path, guint64 mib, GError **error)
{
  util_autofd int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || ftruncate (fd, (off_t) (mib * MIB)) != 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  return TRUE;
}

static gboolean
make_ext4 (const char *dir, const char *image, guint64 mib, const char *label, const char *uuid,
           const char *step, GError **error)
{
  if (!sized_file (image, mib, error))
    return FALSE;
  g_autofree char *extended = g_strdup_printf ("hash_seed=%s,root_owner=0:0,nodiscard", uuid);
  const char *argv[] = { "mkfs.ext4", "-q", "-F", "-b", "4096", "-L", label, "-U", uuid,
                         "-E", extended, "-d", dir, image, NULL };
  return tool_run (argv, NULL, NULL, "e2fsprogs", step, NULL, error);
}

/* GRUB for x86-64 UEFI whose embedded config finds the /boot partition,
 * reads the syslinux.cfg libostree keeps there and boots its default
 * entry (no TIMEOUT: at once). */
static gboolean
make_grub (const Disk *disk, const char *efi, GError **error)
{
  g_autofree char *cfg_path = g_build_filename (disk->work, "grub.cfg", NULL);
  g_autofree char *cfg =
    g_strdup_printf ("insmod part_gpt\n"   /* search looks only where a loaded module reads */
                     "insmod ext2\n"
                     "search --no-floppy --fs-uuid --set=root %s\n"
                     "syslinux_configfile -r ($root)/ ($root)/" LOADER_CFG "\n"
                     "boot\n"
                     "echo \"apt2ostree: no deployment booted from /boot/" LOADER_CFG "\"\n"
                     "sleep 10\n", disk->boot_uuid);
  g_autoptr(GError) local_error = NULL;
  if (!g_file_set_contents (cfg_path, cfg, -1, &local_error))
    return util_fail (error, "%s: %s", cfg_path, local_error->message);
  g_autofree char *memdisk_cfg = g_strconcat ("boot/grub/grub.cfg=", cfg_path, NULL);
  g_autofree char *output = g_strconcat ("--output=", efi, NULL);
  const char *argv[] = { "grub-mkstandalone", "--format=x86_64-efi", output, "--locales=",
                         "--fonts=", "--themes=", memdisk_cfg, NULL };
  return tool_run (argv, NULL, NULL, "grub-efi-amd64-bin", "making the GRUB EFI image", NULL,
                   error);
}

static gboolean
make_esp (const Disk *disk, const char *image, GError **error)
{
  g_autofree char *efi = g_build_filename (disk->work, "BOOTX64.EFI", NULL);
  if (!make_grub (disk, efi, error))
    return FALSE;
  (void) unlink (image);
  g_autofree char *kib = g_strdup_printf ("%" G_GUINT64_FORMAT, disk->esp_mib * 1024);
  const char *mkfs[] = { "mkfs.vfat", "-C", "-F", "32", "-n", "EFI", "-i", disk->esp_volid,
                         image, kib, NULL };
  const char *mmd[] = { "mmd", "-i", image, "::/EFI", "::/EFI/BOOT", NULL };
  const char *mcopy[] = { "mcopy", "-i", image, efi, "::/EFI/BOOT/BOOTX64.EFI", NULL };
  const char *env[] = { "MTOOLS_SKIP_CHECK=1", NULL };
  return tool_run (mkfs, NULL, NULL, "dosfstools", "making the EFI system partition", NULL, error)
         && tool_run (mmd, env, NULL, "mtools", "making the EFI system partition", NULL, error)
         && tool_run (mcopy, env, NULL, "mtools", "copying GRUB to the EFI system partition",
                      NULL, error);
}

/* The partition table of DISK_PATH (a file of the disk's size). */
static gboolean
partition (const Disk *disk, const char *disk_path, GError **error)
{
  g_autoptr(GString) script = g_string_new ("label: gpt\nunit: sectors\n");
  g_string_append_printf (script, "label-id: %s\n", disk->disk_guid);
  guint64 start = 1;
  if (disk->esp_mib > 0)
    {
      g_string_append_printf (script, "start=%" G_GUINT64_FORMAT ", size=%" G_GUINT64_FORMAT
                              ", type=" GPT_ESP ", uuid=%s, name=\"EFI\"\n", start * 2048,
                              disk->esp_mib * 2048, disk->part_guids[0]);
      start += disk->esp_mib;
    }
  g_string_append_printf (script, "start=%" G_GUINT64_FORMAT ", size=%" G_GUINT64_FORMAT
                          ", type=" GPT_LINUX ", uuid=%s, name=\"boot\"\n", start * 2048,
                          disk->boot_mib * 2048, disk->part_guids[1]);
  start += disk->boot_mib;
  g_string_append_printf (script, "start=%" G_GUINT64_FORMAT ", size=%" G_GUINT64_FORMAT
                          ", type=" GPT_LINUX ", uuid=%s, name=\"root\"\n", start * 2048,
                          disk->root_mib * 2048, disk->part_guids[2]);
  g_autofree char *script_path = g_build_filename (disk->work, "sfdisk.txt", NULL);
  g_autoptr(GError) local_error = NULL;
  if (!g_file_set_contents (script_path, script->str, (gssize) script->len, &local_error))
    return util_fail (error, "%s: %s", script_path, local_error->message);
  const char *argv[] = { "sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", disk_path, NULL };
  return tool_run (argv, NULL, script_path, "fdisk", "writing the partition table", NULL, error);
}

/* IMAGE written into DISK_PATH at START_MIB, its holes kept. */
static gboolean
place (const char *image, const char *disk_path, guint64 start_mib, const char *step,
       GError **error)
{
  g_autofree char *in = g_strconcat ("if=", image, NULL);
  g_autofree char *out = g_strconcat ("of=", disk_path, NULL);
  g_autofree char *seek = g_strdup_printf ("seek=%" G_GUINT64_FORMAT, start_mib);
  const char *argv[] = { "dd", in, out, "bs=1M", seek, "conv=notrunc,sparse", "status=none", NULL };
  return tool_run (argv, NULL, NULL, "coreutils", step, NULL, error);
}

/* The partitions made as files in the scratch directory, then the disk. */
static gboolean
make_disk (const Disk *disk, const char *disk_path, GError **error)
{
  g_autofree char *esp = g_build_filename (disk->work, "esp.img", NULL);
  g_autofree char *boot = g_build_filename (disk->work, "boot.img", NULL);
  g_autofree char *root = g_build_filename (disk->work, "root.img", NULL);
  if ((disk->esp_mib > 0 && !make_esp (disk, esp, error))
      || !make_ext4 (disk->bootfs, boot, disk->boot_mib, "boot", disk->boot_uuid,
                     "making the /boot partition", error)
      || !make_ext4 (disk->sysroot, root, disk->root_mib, "root", disk->root_uuid,
                     "making the root partition", error))
    return FALSE;
  guint64 boot_start = 1 + disk->esp_mib, root_start = boot_start + disk->boot_mib;
  return sized_file (disk_path, root_start + disk->root_mib + 1, error)
         && partition (disk, disk_path, error)
         && (disk->esp_mib == 0 || place (esp, disk_path, 1, "placing the EFI system partition", error))
         && place (boot, disk_path, boot_start, "placing the /boot partition", error)
         && place (root, disk_path, root_start, "placing the root partition", error);
}

/* --- all of it -------------------------------------------------------------- */

static gboolean
check_output (const DiskimageOptions *opts, GError **error)
{
  struct stat st;
  if (lstat (opts->output, &st) == 0 && !opts->force)
    return util_fail (error, "%s exists: give --force to replace it", opts->output);
  if (lstat (opts->output, &st) == 0 && S_ISDIR (st.st_mode))
    return util_fail (error, "%s is a directory", opts->output);
  if (getuid () != 0)
    return util_fail (error, "a disk image keeps the files' owners in its sysroot, which needs "
                      "root: run as root");
  return TRUE;
}

gboolean
diskimage_write (OstreeRepo *repo, RepoRev *rev, const DiskimageOptions *opts,
                 GCancellable *cancellable, GError **error)
{
  g_auto(Disk) disk = { .commit = rev->commit };
  if (!check_output (opts, error) || !check_image (repo, rev, opts, &disk, cancellable, error))
    return FALSE;
  disk.root_uuid = uuid_for (rev->commit, "root");
  disk.boot_uuid = uuid_for (rev->commit, "boot");
  disk.disk_guid = uuid_for (rev->commit, "disk");
  static const char *const parts[] = { "EFI partition", "boot partition", "root partition" };
  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    disk.part_guids[i] = uuid_for (rev->commit, parts[i]);
  g_autofree char *volid = uuid_for (rev->commit, "esp");
  disk.esp_volid = g_strndup (volid, 8);

  g_autofree char *parent = g_path_get_dirname (opts->output);
  g_autoptr(Scratch) scratch = scratch_new (parent, ".apt2ostree-disk", error);
  if (scratch == NULL)
    return FALSE;
  disk.work = g_strdup (scratch->path);
  disk.sysroot = g_build_filename (disk.work, "sysroot", NULL);
  disk.bootfs = g_build_filename (disk.work, "boot", NULL);
  g_autofree char *tmp = g_build_filename (disk.work, "disk.img", NULL);
  gboolean ok = make_sysroot (repo, opts, &disk, cancellable, error)
                && plan_sizes (opts, rev->name, &disk, error)
                && make_disk (&disk, tmp, error);
  if (ok && rename (tmp, opts->output) != 0)
    ok = util_fail (error, "%s: %s", opts->output, g_strerror (errno));
  (void) scratch_remove (scratch, NULL);
  return ok;
}
