/* deployable.c — an image rearranged as an OSTree deployment; see
 * deployable.h. */
#include "config.h"

#include <string.h>

#include "base/deb822.h"
#include "base/debpolicy.h"
#include "base/util.h"
#include "image/deployable.h"
#include "image/imagedb.h"
#include "image/sysusers.h"
#include "store/repo.h"
#include "store/tree.h"

#define FACTORY "usr/share/factory/var"
#define SYSIMAGE "usr/lib/sysimage"
#define TMPFILES "usr/lib/tmpfiles.d/apt2ostree-factory.conf"
#define SYSUSERS "usr/lib/sysusers.d/apt2ostree-image.conf"

/* The tmpfiles.d file being written: its text, and the paths under /var it
 * has a line for (systemd-tmpfiles takes one line per path and warns of a
 * second). */
typedef struct {
  GString *text;
  GHashTable *paths;
} Tmpfiles;

static void
tmpfiles_clear (Tmpfiles *tmpfiles)
{
  if (tmpfiles->text != NULL)
    g_string_free (tmpfiles->text, TRUE);
  g_clear_pointer (&tmpfiles->paths, g_hash_table_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Tmpfiles, tmpfiles_clear)

/* The packages dpkg has installed, by name. */
static GHashTable *
installed_packages (OstreeRepo *repo, OstreeMutableTree *root, const char *name,
                    GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) stanzas = imagedb_read_status_mtree (repo, root, name, cancellable, error);
  if (stanzas == NULL)
    return NULL;
  g_autoptr(GPtrArray) packages = imagedb_packages (stanzas, IMAGEDB_INSTALLED, name, error);
  if (packages == NULL)
    return NULL;
  GHashTable *installed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < packages->len; i++)
    g_hash_table_add (installed, deb822_first_line (packages->pdata[i], "package"));
  return installed;
}

static gboolean
require_boot_packages (OstreeRepo *repo, OstreeMutableTree *root, const char *name,
                       GCancellable *cancellable, GError **error)
{
  g_autoptr(GHashTable) installed = installed_packages (repo, root, name, cancellable, error);
  if (installed == NULL)
    return FALSE;
  static const char *const needed[] = { "ostree-boot", "dracut" };
  for (guint i = 0; i < G_N_ELEMENTS (needed); i++)
    if (!g_hash_table_contains (installed, needed[i]))
      return util_fail (error, "\"%s\" has no %s installed: a deployable image needs ostree-boot "
                        "and dracut in its package list (their initramfs runs "
                        "ostree-prepare-root)", name, needed[i]);
  return TRUE;
}

/* The names in directory PATH of ROOT (files and subdirectories), sorted;
 * empty when PATH is missing. */
static GPtrArray *
dir_names (OstreeMutableTree *root, const char *path, gboolean dirs, GError **error)
{
  g_autoptr(OstreeMutableTree) dir = NULL;
  if (!tree_lookup (root, path, NULL, &dir, error))
    return NULL;
  if (dir == NULL)
    return g_ptr_array_new_with_free_func (g_free);
  /* Copies: the caller moves entries of this directory. */
  g_autoptr(GPtrArray) keys = util_sorted_keys (dirs ? ostree_mutable_tree_get_subdirs (dir)
                                                     : ostree_mutable_tree_get_files (dir));
  GPtrArray *names = g_ptr_array_new_full (keys->len, g_free);
  for (guint i = 0; i < keys->len; i++)
    g_ptr_array_add (names, g_strdup (keys->pdata[i]));
  return names;
}

/* The names in directory PATH of ROOT: its files, then its
 * subdirectories, each sorted; empty when PATH is missing. */
static GPtrArray *
dir_entries (OstreeMutableTree *root, const char *path, GError **error)
{
  g_autoptr(GPtrArray) names = dir_names (root, path, FALSE, error);
  g_autoptr(GPtrArray) dirs = names != NULL ? dir_names (root, path, TRUE, error) : NULL;
  if (dirs == NULL)
    return NULL;
  g_ptr_array_extend_and_steal (names, g_steal_pointer (&dirs));
  return g_steal_pointer (&names);
}

static gboolean
exists (OstreeMutableTree *root, const char *path)
{
  g_autofree char *file = NULL;
  g_autoptr(OstreeMutableTree) dir = NULL;
  return tree_lookup (root, path, &file, &dir, NULL) && (file != NULL || dir != NULL);
}

/* The one kernel version with both /boot/vmlinuz-KVER and
 * /usr/lib/modules/KVER. */
static char *
find_kernel (OstreeMutableTree *root, const char *name, GError **error)
{
  g_autoptr(GPtrArray) boot = dir_names (root, "boot", FALSE, error);
  if (boot == NULL)
    return NULL;
  g_autoptr(GPtrArray) found = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < boot->len; i++)
    {
      const char *file = boot->pdata[i];
      if (!g_str_has_prefix (file, "vmlinuz-"))
        continue;
      g_autofree char *modules = g_strconcat ("usr/lib/modules/", file + strlen ("vmlinuz-"), NULL);
      if (exists (root, modules))
        g_ptr_array_add (found, g_strdup (file + strlen ("vmlinuz-")));
    }
  if (found->len == 0)
    return util_fail (error, "\"%s\" has no kernel (/boot/vmlinuz-KVER with /usr/lib/modules/KVER): "
                      "add a linux-image package to its package list", name), NULL;
  if (found->len > 1)
    return util_fail (error, "\"%s\" has %u kernels (%s and %s …): a deployment boots one; keep one "
                      "linux-image package", name, found->len, (char *) found->pdata[0],
                      (char *) found->pdata[1]), NULL;
  return g_strdup (found->pdata[0]);
}

static gboolean
move (OstreeRepo *repo, OstreeMutableTree *root, const char *src, const char *dst,
      GCancellable *cancellable, GError **error)
{
  return tree_move (repo, root, src, dst, cancellable, error);
}

static gboolean
mkdirs (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root, const char *path, guint32 mode,
        GCancellable *cancellable, GError **error)
{
  TreeMkdirOptions opts = { .uid = 0, .gid = 0, .mode = mode, .parents = TRUE };
  return tree_mkdir (sink, root, path, &opts, cancellable, error);
}

/* The owner and mode of directory PATH. */
static gboolean
dir_meta (OstreeRepo *repo, OstreeMutableTree *root, const char *path, guint32 *uid, guint32 *gid,
          guint32 *mode, GError **error)
{
  g_autoptr(OstreeMutableTree) dir = NULL;
  if (!tree_lookup (root, path, NULL, &dir, error))
    return FALSE;
  const char *checksum = dir != NULL ? ostree_mutable_tree_get_metadata_checksum (dir) : NULL;
  g_autoptr(GVariant) meta = NULL;
  if (checksum == NULL)
    return util_fail (error, "/%s: no directory metadata", path);
  if (!ostree_repo_load_variant (repo, OSTREE_OBJECT_TYPE_DIR_META, checksum, &meta, error))
    return FALSE;
  g_variant_get (meta, "(uuu@a(ayay))", uid, gid, mode, NULL);
  *uid = GUINT32_FROM_BE (*uid);
  *gid = GUINT32_FROM_BE (*gid);
  *mode = GUINT32_FROM_BE (*mode) & 07777;
  return TRUE;
}

/* The target of the symbolic link PATH, or NULL (no error) when PATH is not
 * one. */
static char *
link_target (OstreeRepo *repo, OstreeMutableTree *root, const char *path,
             GCancellable *cancellable, GError **error)
{
  g_autofree char *checksum = NULL;
  if (!tree_lookup (root, path, &checksum, NULL, error) || checksum == NULL)
    return NULL;
  g_autoptr(GFileInfo) info = NULL;
  if (!ostree_repo_load_file (repo, checksum, NULL, &info, NULL, cancellable, error))
    return NULL;
  if (g_file_info_get_file_type (info) != G_FILE_TYPE_SYMBOLIC_LINK)
    return NULL;
  return g_strdup (g_file_info_get_symlink_target (info));
}

/* A byte a tmpfiles.d field holds as it is. */
static gboolean
plain_byte (guchar c)
{
  return g_ascii_isalnum (c) || strchr ("/._-+@:,=~", c) != NULL;
}

/* PATH as tmpfiles.d's path field: names come from packages, so one with
 * other bytes than a plain few is quoted, '"' and '\\' escaped inside, and
 * '%' doubled (tmpfiles expands specifiers).  systemd 252 reads no C
 * escapes in that field, so a control character (a line break ends the
 * line) cannot be written: an error naming the path. */
static gboolean
append_path (GString *out, const char *path, GError **error)
{
  const guchar *p;
  gboolean plain = TRUE;
  for (p = (const guchar *) path; *p != '\0'; p++)
    {
      if (*p < 0x20 || *p == 0x7f)
        {
          g_autofree char *shown = util_shown_path (path);
          return util_fail (error, "/var/%s: a control character in the name, which a tmpfiles.d "
                            "line cannot hold", shown);
        }
      plain = plain && plain_byte (*p) && *p != '%';
    }
  if (plain)
    return g_string_append (out, path), TRUE;
  g_string_append_c (out, '"');
  for (p = (const guchar *) path; *p != '\0'; p++)
    {
      if (*p == '%')
        g_string_append_c (out, '%');
      else if (*p == '"' || *p == '\\')
        g_string_append_c (out, '\\');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
  return TRUE;
}

/* S as tmpfiles.d's argument field, which reads C escapes: every byte but
 * a plain few as "\xHH", '%' doubled. */
static void
append_argument (GString *out, const char *s)
{
  for (const guchar *p = (const guchar *) s; *p != '\0'; p++)
    {
      if (*p == '%')
        g_string_append (out, "%%");
      else if (plain_byte (*p))
        g_string_append_c (out, *p);
      else
        g_string_append_printf (out, "\\x%02x", *p);
    }
}

/* One tmpfiles.d line "TYPE /var/PATH FIELDS [ARGUMENT]", once per path. */
static gboolean
tmpfiles_line (Tmpfiles *tmpfiles, const char *type, const char *path, const char *fields,
               const char *argument, GError **error)
{
  if (g_hash_table_contains (tmpfiles->paths, path))
    return TRUE;
  g_autofree char *var_path = g_strconcat ("/var/", path, NULL);
  g_hash_table_add (tmpfiles->paths, g_strdup (path));
  g_string_append_printf (tmpfiles->text, "%s ", type);
  if (!append_path (tmpfiles->text, var_path, error))
    return FALSE;
  g_string_append_printf (tmpfiles->text, " %s", fields);
  if (argument != NULL)
    {
      g_string_append_c (tmpfiles->text, ' ');
      append_argument (tmpfiles->text, argument);
    }
  g_string_append_c (tmpfiles->text, '\n');
  return TRUE;
}

/* Without merged /usr (bionic) the modules are in /lib/modules, a
 * directory: OSTree looks in /usr/lib/modules, so they move there and
 * /lib/modules becomes a link to them (for modprobe). */
static gboolean
modules_into_usr (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root, const char *name,
                  GCancellable *cancellable, GError **error)
{
  g_autoptr(OstreeMutableTree) lib = NULL;
  g_autoptr(OstreeMutableTree) dir = NULL;
  if (!tree_lookup (root, "lib", NULL, &lib, error))
    return FALSE;
  if (lib == NULL)
    return TRUE;  /* /lib is a link (merged /usr) */
  if (!tree_lookup (root, "lib/modules", NULL, &dir, error))
    return FALSE;
  if (dir == NULL)
    return TRUE;
  if (exists (root, "usr/lib/modules"))
    return util_fail (error, "\"%s\" has both /lib/modules and /usr/lib/modules as directories; "
                      "a deployment keeps one", name);
  return mkdirs (repo, sink, root, "usr/lib", 0755, cancellable, error)
         && move (repo, root, "lib/modules", "usr/lib/modules", cancellable, error)
         && tree_symlink (sink, root, "../usr/lib/modules", "lib/modules", cancellable, error);
}

/* Add to DIVERTED ("/SRC", "/DST" pairs) every file below SRC (a file
 * or a directory) with the name it will have below DST. */
static gboolean
record_moved (OstreeMutableTree *root, const char *src, const char *dst, GPtrArray *diverted,
              GError **error)
{
  g_autofree char *file = NULL;
  g_autoptr(OstreeMutableTree) dir = NULL;
  if (!tree_lookup (root, src, &file, &dir, error))
    return FALSE;
  if (file != NULL)
    {
      g_ptr_array_add (diverted, g_strconcat ("/", src, NULL));
      g_ptr_array_add (diverted, g_strconcat ("/", dst, NULL));
      return TRUE;
    }
  if (dir == NULL)
    return TRUE;
  g_autoptr(GPtrArray) names = dir_entries (root, src, error);
  if (names == NULL)
    return FALSE;
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *sub_src = g_strconcat (src, "/", (char *) names->pdata[i], NULL);
      g_autofree char *sub_dst = g_strconcat (dst, "/", (char *) names->pdata[i], NULL);
      if (!record_moved (root, sub_src, sub_dst, diverted, error))
        return FALSE;
    }
  return TRUE;
}

/* Kernel, initramfs, config, System.map and device trees into
 * usr/lib/modules/KVER/. */
static gboolean
move_kernel (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root, const char *name,
             GPtrArray *diverted,
             GCancellable *cancellable, GError **error)
{
  if (!modules_into_usr (repo, sink, root, name, cancellable, error))
    return FALSE;
  g_autofree char *kver = find_kernel (root, name, error);
  if (kver == NULL)
    return FALSE;
  g_autofree char *dir = g_strconcat ("usr/lib/modules/", kver, NULL);
  g_autofree char *initrd = g_strconcat ("boot/initrd.img-", kver, NULL);
  if (!exists (root, initrd))
    return util_fail (error, "\"%s\" has no initramfs /%s: dracut (or initramfs-tools) did not make "
                      "one for kernel %s", name, initrd, kver);
  const char *moves[][2] = { { "vmlinuz-", "vmlinuz" }, { "initrd.img-", "initramfs.img" },
                             { "config-", "config" }, { "System.map-", "System.map" } };
  for (guint i = 0; i < G_N_ELEMENTS (moves); i++)
    {
      g_autofree char *src = g_strconcat ("boot/", moves[i][0], kver, NULL);
      g_autofree char *dst = g_strconcat (dir, "/", moves[i][1], NULL);
      if (exists (root, src) && !exists (root, dst)
          && (!record_moved (root, src, dst, diverted, error)
              || !move (repo, root, src, dst, cancellable, error)))
        return FALSE;
    }

  /* Debian's /vmlinuz, /initrd.img (and .old) links point into /boot,
   * which a deployment leaves to the boot loader. */
  static const char *const top_links[] = { "vmlinuz", "vmlinuz.old", "initrd.img", "initrd.img.old" };
  for (guint i = 0; i < G_N_ELEMENTS (top_links); i++)
    {
      g_autoptr(GError) local_error = NULL;
      g_autofree char *target = link_target (repo, root, top_links[i], cancellable, &local_error);
      if (local_error != NULL)
        return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
      if (target != NULL && (g_str_has_prefix (target, "boot/") || g_str_has_prefix (target, "/boot/"))
          && !tree_remove (root, top_links[i], FALSE, FALSE, error))
        return FALSE;
    }

  g_autofree char *dtb = g_strconcat (dir, "/dtb", NULL);
  g_autofree char *debian_dtbs = g_strconcat ("usr/lib/linux-image-", kver, NULL);
  g_autofree char *boot_dtbs = g_strconcat ("boot/dtbs/", kver, NULL);
  /* Debian's directory stays reachable where dpkg put it (/usr is there
   * on the device, /boot is the boot loader's). */
  if (exists (root, debian_dtbs))
    {
      g_autofree char *link = g_strconcat ("modules/", kver, "/dtb", NULL);
      return move (repo, root, debian_dtbs, dtb, cancellable, error)
             && tree_symlink (sink, root, link, debian_dtbs, cancellable, error);
    }
  if (exists (root, boot_dtbs))
    return record_moved (root, boot_dtbs, dtb, diverted, error)
           && move (repo, root, boot_dtbs, dtb, cancellable, error);
  g_autoptr(GPtrArray) boot = dir_names (root, "boot", FALSE, error);
  if (boot == NULL)
    return FALSE;
  for (guint i = 0; i < boot->len; i++)
    {
      const char *file = boot->pdata[i];
      if (!g_str_has_suffix (file, ".dtb"))
        continue;
      g_autofree char *src = g_strconcat ("boot/", file, NULL);
      g_autofree char *dst = g_strconcat (dtb, "/", file, NULL);
      if (!mkdirs (repo, sink, root, dtb, 0755, cancellable, error)
          || !record_moved (root, src, dst, diverted, error)
          || !move (repo, root, src, dst, cancellable, error))
        return FALSE;
    }
  return TRUE;
}

/* Each file moved out of /boot, told to dpkg as a local diversion
 * ("/boot/vmlinuz-KVER" diverted to "/usr/lib/modules/KVER/vmlinuz"):
 * on the device /boot is the boot loader's, so without it dpkg --verify
 * and dpkg -S would look for them where they are not.  Refused when the
 * image diverts one of them already. */
static gboolean
write_diversions (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root, const char *name,
                  GPtrArray *diverted,
                  GCancellable *cancellable, GError **error)
{
  if (diverted->len == 0)
    return TRUE;
  const char *path = "var/lib/dpkg/diversions";
  g_autoptr(GBytes) bytes = NULL;
  if (!tree_read_file (repo, root, path, &bytes, cancellable, error))
    return FALSE;
  g_autoptr(GString) text = g_string_new ("");
  if (bytes != NULL)
    {
      g_string_append_len (text, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
      if (text->len > 0 && text->str[text->len - 1] != '\n')
        g_string_append_c (text, '\n');
    }
  g_auto(GStrv) lines = g_strsplit (text->str, "\n", -1);
  guint n_lines = g_strv_length (lines);
  for (guint i = 0; i < diverted->len; i += 2)
    {
      for (guint l = 0; l < n_lines; l += 3)
        if (g_str_equal (lines[l], diverted->pdata[i]))
          return util_fail (error, "\"%s\" diverts %s already: deployable cannot record its move "
                            "out of /boot", name, (char *) diverted->pdata[i]);
      g_string_append_printf (text, "%s\n%s\n:\n", (char *) diverted->pdata[i],
                              (char *) diverted->pdata[i + 1]);
    }
  g_autofree char *written = sink->regular (sink, NULL, 0, 0, 0644, NULL,
                                            (const guint8 *) text->str, text->len, error);
  return written != NULL && tree_replace_file (root, path, written, error);
}

/* The lines that make /var/DST at boot from PATH, entry by entry: "d" for
 * a directory (its owner and mode), "C" for a file (copied from PATH when
 * missing), "L" for a symbolic link.  None replaces what the device has, so
 * its own state stays, and an upgrade's new entries appear on its first
 * boot. */
static gboolean
entry_lines (OstreeRepo *repo, OstreeMutableTree *root, const char *path, const char *dst,
             Tmpfiles *tmpfiles, GCancellable *cancellable, GError **error)
{
  g_autofree char *checksum = NULL;
  if (!tree_lookup (root, path, &checksum, NULL, error))
    return FALSE;
  if (checksum != NULL)
    {
      g_autoptr(GError) local_error = NULL;
      g_autofree char *target = link_target (repo, root, path, cancellable, &local_error);
      g_autofree char *from = g_strconcat ("/", path, NULL);
      if (local_error != NULL)
        return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
      return tmpfiles_line (tmpfiles, target != NULL ? "L" : "C", dst, "- - - -",
                            target != NULL ? target : from, error);
    }
  guint32 uid, gid, mode;
  if (!dir_meta (repo, root, path, &uid, &gid, &mode, error))
    return FALSE;
  g_autofree char *owner = g_strdup_printf ("%04o %u %u -", mode, uid, gid);
  if (!tmpfiles_line (tmpfiles, "d", dst, owner, NULL, error))
    return FALSE;
  g_autoptr(GPtrArray) names = dir_entries (root, path, error);
  if (names == NULL)
    return FALSE;
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *sub = g_strconcat (path, "/", (char *) names->pdata[i], NULL);
      g_autofree char *sub_dst = g_strconcat (dst, "/", (char *) names->pdata[i], NULL);
      if (!entry_lines (repo, root, sub, sub_dst, tmpfiles, cancellable, error))
        return FALSE;
    }
  return TRUE;
}

/* Move SRC (a file, link or directory) to FACTORY/DST and add the lines
 * that make /var/DST from it at boot.  An empty directory gets its "d" line
 * only and a link its "L" line (/var/run -> /run): neither needs a copy.
 * SRC itself is removed. */
static gboolean
to_factory (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root, const char *src,
            const char *dst,
            Tmpfiles *tmpfiles, GCancellable *cancellable, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *target = link_target (repo, root, src, cancellable, &local_error);
  if (local_error != NULL)
    return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
  g_autoptr(GPtrArray) files = dir_names (root, src, FALSE, error);
  g_autoptr(GPtrArray) dirs = files != NULL ? dir_names (root, src, TRUE, error) : NULL;
  if (dirs == NULL)
    return FALSE;
  g_autoptr(OstreeMutableTree) dir = NULL;
  if (!tree_lookup (root, src, NULL, &dir, error))
    return FALSE;
  if (target != NULL || (dir != NULL && files->len + dirs->len == 0))
    return entry_lines (repo, root, src, dst, tmpfiles, cancellable, error)
           && tree_remove (root, src, TRUE, FALSE, error);
  g_autofree char *to = g_strconcat (FACTORY, "/", dst, NULL);
  return mkdirs (repo, sink, root, FACTORY, 0755, cancellable, error)
         && move (repo, root, src, to, cancellable, error)
         && entry_lines (repo, root, to, dst, tmpfiles, cancellable, error);
}

/* What describes the image rather than the device: the dpkg database
 * (status, info/, triggers/, diversions, statoverride, alternatives/) and
 * debconf's.  They move read-only into /usr, so each deployment carries
 * its own, and /var reaches them through links made at every boot ("L+"
 * replaces what an older image's boot left there); the targets are
 * relative so that tools run with --root or --admindir over a mounted
 * deployment resolve them inside it. */
static const char *const image_databases[][3] = {
  /* under /var, under SYSIMAGE, the link's target */
  { "lib/dpkg", "dpkg", "../../" SYSIMAGE "/dpkg" },
  { "cache/debconf", "debconf", "../../" SYSIMAGE "/debconf" },
};

static gboolean
databases_into_usr (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root, const char *name,
                    Tmpfiles *tmpfiles,
                    GCancellable *cancellable, GError **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (image_databases); i++)
    {
      g_autofree char *src = g_strconcat ("var/", image_databases[i][0], NULL);
      g_autofree char *dst = g_strconcat (SYSIMAGE, "/", image_databases[i][1], NULL);
      g_autoptr(OstreeMutableTree) dir = NULL;
      if (!tree_lookup (root, src, NULL, &dir, error))
        return FALSE;
      if (dir == NULL)
        continue;  /* no debconf: nothing to keep (a file there gets its line as any other) */
      if (exists (root, dst))
        return util_fail (error, "\"%s\" has both /%s and /%s: a deployable image keeps one",
                          name, src, dst);
      if (!mkdirs (repo, sink, root, SYSIMAGE, 0755, cancellable, error)
          || !move (repo, root, src, dst, cancellable, error)
          || !tmpfiles_line (tmpfiles, "L+", image_databases[i][0], "- - - -",
                             image_databases[i][2], error))
        return FALSE;
    }
  return TRUE;
}

/* /var's contents to the factory copy; /var stays, empty. */
static gboolean
factory_var (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root, Tmpfiles *tmpfiles,
             GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) names = dir_names (root, "var", TRUE, error);
  g_autoptr(GPtrArray) files = names != NULL ? dir_names (root, "var", FALSE, error) : NULL;
  if (files == NULL)
    return FALSE;
  g_ptr_array_extend_and_steal (names, g_steal_pointer (&files));
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *src = g_strconcat ("var/", (char *) names->pdata[i], NULL);
      if (!to_factory (repo, sink, root, src, names->pdata[i], tmpfiles, cancellable, error))
        return FALSE;
    }
  return mkdirs (repo, sink, root, "var", 0755, cancellable, error);
}

/* The state directories as links into /var, OSTree's layout. */
static gboolean
state_links (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root, Tmpfiles *tmpfiles,
             GCancellable *cancellable, GError **error)
{
  static const char *const links[][3] = {
    /* path, link target, its place under /var */
    { "home", "var/home", "home" }, { "root", "var/roothome", "roothome" },
    { "opt", "var/opt", "opt" }, { "srv", "var/srv", "srv" },
    { "mnt", "var/mnt", "mnt" }, { "usr/local", "../var/usrlocal", "usrlocal" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (links); i++)
    {
      g_autofree char *file = NULL;
      g_autoptr(OstreeMutableTree) dir = NULL;
      if (!tree_lookup (root, links[i][0], &file, &dir, error))
        return FALSE;
      if (file != NULL)
        continue;  /* already a link (or a file): left as the image has it */
      if (!to_factory (repo, sink, root, links[i][0], links[i][2], tmpfiles, cancellable, error)
          || !tree_symlink (sink, root, links[i][1], links[i][0], cancellable, error))
        return FALSE;
    }
  if (exists (root, "media") && !tree_remove (root, "media", TRUE, FALSE, error))
    return FALSE;
  return tree_symlink (sink, root, "run/media", "media", cancellable, error)
         && (exists (root, "ostree") || tree_symlink (sink, root, "sysroot/ostree", "ostree",
                                                      cancellable, error))
         && mkdirs (repo, sink, root, "sysroot", 0755, cancellable, error);
}

static gboolean
write_tmpfiles (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root, Tmpfiles *tmpfiles,
                GCancellable *cancellable, GError **error)
{
  g_string_prepend (tmpfiles->text,
                    "# Made by \"apt2ostree deployable\": /var is made at boot.  The image's\n"
                    "# dpkg and debconf databases are in /" SYSIMAGE ", reached by links;\n"
                    "# what the packages put elsewhere in /var is made entry by entry when\n"
                    "# missing, files copied from /" FACTORY ".\n");
  if (!mkdirs (repo, sink, root, "usr/lib/tmpfiles.d", 0755, cancellable, error))
    return FALSE;
  g_autofree char *checksum = sink->regular (sink, NULL, 0, 0, 0644, NULL,
                                             (const guint8 *) tmpfiles->text->str,
                                             tmpfiles->text->len, error);
  return checksum != NULL && tree_replace_file (root, TMPFILES, checksum, error);
}

/* The text of the file PATH of ROOT, or NULL (and no error) when missing. */
static char *
read_text (OstreeRepo *repo, OstreeMutableTree *root, const char *path, GCancellable *cancellable,
           GError **error)
{
  g_autoptr(GBytes) bytes = NULL;
  if (!tree_read_file (repo, root, path, &bytes, cancellable, error) || bytes == NULL)
    return NULL;
  gsize size;
  const char *data = g_bytes_get_data (bytes, &size);
  if (memchr (data, '\0', size) != NULL)
    return (util_fail (error, "/%s: a NUL byte", path), NULL);
  return g_strndup (data, size);
}

/* The image's users and groups (/usr/etc/passwd, /usr/etc/group) as a
 * sysusers.d file (see sysusers.h); nothing when the image has neither. */
static gboolean
write_sysusers (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root, const char *name,
                GCancellable *cancellable, GError **error)
{
  g_autoptr(GError) local = NULL;
  g_autofree char *passwd = read_text (repo, root, "usr/etc/passwd", cancellable, &local);
  g_autofree char *group = local == NULL
                             ? read_text (repo, root, "usr/etc/group", cancellable, &local)
                             : NULL;
  if (local != NULL)
    return util_fail (error, "\"%s\": %s", name, local->message);
  if (passwd == NULL && group == NULL)
    return TRUE;
  g_autofree char *text = sysusers_from_accounts (passwd != NULL ? passwd : "", "/etc/passwd",
                                                  group != NULL ? group : "", "/etc/group", &local);
  if (text == NULL)
    return util_fail (error, "\"%s\": %s", name, local->message);
  if (!mkdirs (repo, sink, root, "usr/lib/sysusers.d", 0755, cancellable, error))
    return FALSE;
  g_autofree char *checksum = sink->regular (sink, NULL, 0, 0, 0644, NULL, (const guint8 *) text,
                                             strlen (text), error);
  return checksum != NULL && tree_replace_file (root, SYSUSERS, checksum, error);
}

gboolean
deployable_apply (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root, const char *name,
                  GCancellable *cancellable, GError **error)
{
  if (exists (root, "usr/etc"))
    return util_fail (error, "\"%s\" already has /usr/etc: it is deployable already", name);
  g_autoptr(GPtrArray) diverted = g_ptr_array_new_with_free_func (g_free);
  if (!require_boot_packages (repo, root, name, cancellable, error)
      || !move_kernel (repo, sink, root, name, diverted, cancellable, error)
      || !write_diversions (repo, sink, root, name, diverted, cancellable, error)
      || !move (repo, root, "etc", "usr/etc", cancellable, error)
      || !write_sysusers (repo, sink, root, name, cancellable, error))
    return FALSE;
  g_auto(Tmpfiles) tmpfiles = { g_string_new (""), g_hash_table_new_full (g_str_hash, g_str_equal,
                                                                         g_free, NULL) };
  return databases_into_usr (repo, sink, root, name, &tmpfiles, cancellable, error)
         && factory_var (repo, sink, root, &tmpfiles, cancellable, error)
         && state_links (repo, sink, root, &tmpfiles, cancellable, error)
         && write_tmpfiles (repo, sink, root, &tmpfiles, cancellable, error);
}
