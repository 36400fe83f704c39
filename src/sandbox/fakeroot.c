/* fakeroot.c — fakeroot's daemon seeded from OSTree, for unprivileged mod. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sandbox/fakeroot.h"
#include "sandbox/upper.h"
#include "base/util.h"

/* Where libfakeroot is bound inside a chroot sandbox (/run is a tmpfs
 * there, so nothing of it reaches the tree). */
#define CHROOT_LIB_DIR "/run/apt2ostree-fakeroot"
#define FAKEROOT_LIB "libfakeroot-sysv.so"

typedef struct {
  guint32 uid;
  guint32 gid;
  guint32 mode;        /* full st_mode as OSTree has it */
  guint32 real_mode;   /* st_mode of the checkout, before the command */
  GVariant *xattrs;    /* OSTree's xattrs of the entry */
  GPtrArray *paths;    /* tree paths sharing this inode */
} LowerEntry;

typedef struct {
  guint32 uid;
  guint32 gid;
  guint32 mode;
} FakedEntry;

struct Fakeroot {
  OstreeRepo *repo;
  char *lower;
  char *upper;
  char *seed_path;
  char *save_path;
  char *lib_dir;        /* host directory of libfakeroot */
  char *faked;
  gboolean chroot_lib;  /* bind the library into the sandbox */
  GHashTable *lower_by_ino;   /* ino → LowerEntry */
  GHashTable *faked_by_ino;   /* ino → FakedEntry, after the command */
  GHashTable *upper_paths;    /* tree paths the upper directory held */
  dev_t overlay_dev;
  pid_t faked_pid;
};

static void
lower_entry_free (LowerEntry *e)
{
  g_clear_pointer (&e->xattrs, g_variant_unref);
  g_ptr_array_unref (e->paths);
  g_free (e);
}

void
fakeroot_free (Fakeroot *fr)
{
  if (fr == NULL)
    return;
  if (fr->faked_pid > 0)
    (void) kill (fr->faked_pid, SIGTERM);
  g_object_unref (fr->repo);
  g_free (fr->lower);
  g_free (fr->upper);
  g_free (fr->seed_path);
  g_free (fr->save_path);
  g_free (fr->lib_dir);
  g_free (fr->faked);
  g_hash_table_unref (fr->lower_by_ino);
  g_hash_table_unref (fr->faked_by_ino);
  g_hash_table_unref (fr->upper_paths);
  g_free (fr);
}

static guint64 *
ino_key (ino_t ino)
{
  guint64 *key = g_new (guint64, 1);
  *key = ino;
  return key;
}

/* What OSTree stores for a file of the checkout.  A regular file is the
 * bare-user object itself, whose user.ostreemeta xattr says it all; a
 * symlink was made by the checkout, so its object is read. */
static gboolean
read_object_meta (Fakeroot *fr, const char *host_path, GVariant *csum_v, LowerEntry *e,
                  GError **error)
{
  char buf[4096];
  ssize_t len = lgetxattr (host_path, "user.ostreemeta", buf, sizeof buf);
  if (len > 0)
    {
      g_autoptr(GBytes) bytes = g_bytes_new (buf, len);
      g_autoptr(GVariant) meta = g_variant_ref_sink (
          g_variant_new_from_bytes (G_VARIANT_TYPE ("(uuua(ayay))"), bytes, FALSE));
      g_variant_get (meta, "(uuu@a(ayay))", &e->uid, &e->gid, &e->mode, &e->xattrs);
      e->uid = GUINT32_FROM_BE (e->uid);
      e->gid = GUINT32_FROM_BE (e->gid);
      e->mode = GUINT32_FROM_BE (e->mode);
      return TRUE;
    }

  g_autofree char *csum = ostree_checksum_from_bytes_v (csum_v);
  g_autoptr(GFileInfo) info = NULL;
  g_autoptr(GVariant) xattrs = NULL;
  if (!ostree_repo_load_file (fr->repo, csum, NULL, &info, &xattrs, NULL, error))
    return FALSE;
  e->uid = g_file_info_get_attribute_uint32 (info, "unix::uid");
  e->gid = g_file_info_get_attribute_uint32 (info, "unix::gid");
  e->mode = g_file_info_get_attribute_uint32 (info, "unix::mode");
  e->xattrs = xattrs != NULL ? g_variant_ref_sink (g_steal_pointer (&xattrs))
                             : g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("(ayay)"),
                                                                        NULL, 0));
  return TRUE;
}

/* Walk the dirtree of the checkout and record, by inode, what OSTree says
 * of each entry.  One content object is one inode of the checkout. */
static gboolean
scan_tree (Fakeroot *fr, const char *contents, const char *meta, GString *path, GError **error)
{
  g_autofree char *host = g_strconcat (fr->lower, path->str, NULL);
  struct stat st;
  if (lstat (host, &st) < 0)
    return util_fail (error, "%s: %s", host, g_strerror (errno));

  g_autoptr(GVariant) dirmeta = NULL;
  if (!ostree_repo_load_variant (fr->repo, OSTREE_OBJECT_TYPE_DIR_META, meta, &dirmeta, error))
    return FALSE;
  LowerEntry *dir = g_new0 (LowerEntry, 1);
  g_variant_get (dirmeta, "(uuu@a(ayay))", &dir->uid, &dir->gid, &dir->mode, &dir->xattrs);
  dir->uid = GUINT32_FROM_BE (dir->uid);
  dir->gid = GUINT32_FROM_BE (dir->gid);
  dir->mode = GUINT32_FROM_BE (dir->mode);
  dir->real_mode = st.st_mode;
  dir->paths = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (dir->paths, g_strdup (path->len ? path->str : "/"));
  g_hash_table_replace (fr->lower_by_ino, ino_key (st.st_ino), dir);

  g_autoptr(GVariant) dirtree = NULL;
  if (!ostree_repo_load_variant (fr->repo, OSTREE_OBJECT_TYPE_DIR_TREE, contents, &dirtree, error))
    return FALSE;
  g_autoptr(GVariant) files = g_variant_get_child_value (dirtree, 0);
  g_autoptr(GVariant) dirs = g_variant_get_child_value (dirtree, 1);
  gsize len = path->len;

  GVariantIter iter;
  const char *name;
  g_autoptr(GVariant) csum_v = NULL;
  g_variant_iter_init (&iter, files);
  while (g_variant_iter_loop (&iter, "(&s@ay)", &name, &csum_v))
    {
      g_string_append_printf (path, "/%s", name);
      g_autofree char *file_host = g_strconcat (fr->lower, path->str, NULL);
      if (lstat (file_host, &st) < 0)
        return util_fail (error, "%s: %s", file_host, g_strerror (errno));
      LowerEntry *e = g_hash_table_lookup (fr->lower_by_ino, &(guint64) { st.st_ino });
      if (e == NULL)
        {
          e = g_new0 (LowerEntry, 1);
          e->real_mode = st.st_mode;
          e->paths = g_ptr_array_new_with_free_func (g_free);
          g_hash_table_replace (fr->lower_by_ino, ino_key (st.st_ino), e);
          if (!read_object_meta (fr, file_host, csum_v, e, error))
            return FALSE;
        }
      g_ptr_array_add (e->paths, g_strdup (path->str));
      g_string_truncate (path, len);
    }

  g_autoptr(GVariant) tree_v = NULL;
  g_autoptr(GVariant) meta_v = NULL;
  g_variant_iter_init (&iter, dirs);
  while (g_variant_iter_loop (&iter, "(&s@ay@ay)", &name, &tree_v, &meta_v))
    {
      g_autofree char *sub_contents = ostree_checksum_from_bytes_v (tree_v);
      g_autofree char *sub_meta = ostree_checksum_from_bytes_v (meta_v);
      g_string_append_printf (path, "/%s", name);
      if (!scan_tree (fr, sub_contents, sub_meta, path, error))
        return FALSE;
      g_string_truncate (path, len);
    }
  return TRUE;
}

static char *
find_lib_dir (void)
{
  glob_t g;
  char *dir = NULL;
  if (glob ("/usr/lib/*/libfakeroot/" FAKEROOT_LIB, 0, NULL, &g) == 0 && g.gl_pathc > 0)
    dir = g_path_get_dirname (g.gl_pathv[0]);
  else if (g_file_test ("/usr/lib/libfakeroot/" FAKEROOT_LIB, G_FILE_TEST_EXISTS))
    dir = g_strdup ("/usr/lib/libfakeroot");
  globfree (&g);
  return dir;
}

Fakeroot *
fakeroot_new (OstreeRepo *repo, const char *root_contents, const char *root_meta,
              const char *lower, const char *upper, const char *scratch,
              GError **error)
{
  g_autoptr(Fakeroot) fr = g_new0 (Fakeroot, 1);
  fr->repo = g_object_ref (repo);
  fr->lower = g_strdup (lower);
  fr->upper = g_strdup (upper);
  fr->seed_path = g_build_filename (scratch, "fakeroot.seed", NULL);
  fr->save_path = g_build_filename (scratch, "fakeroot.save", NULL);
  fr->lower_by_ino = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                            (GDestroyNotify) lower_entry_free);
  fr->faked_by_ino = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  fr->upper_paths = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  fr->faked = g_find_program_in_path ("faked-sysv");
  fr->lib_dir = find_lib_dir ();
  if (fr->faked == NULL || fr->lib_dir == NULL)
    {
      util_fail (error, "fakeroot (faked-sysv and %s) not found; install the \"fakeroot\" "
                 "package: mod needs it when not run as root", FAKEROOT_LIB);
      return NULL;
    }

  g_autoptr(GString) path = g_string_new ("");
  if (!scan_tree (fr, root_contents, root_meta, path, error))
    return NULL;
  return g_steal_pointer (&fr);
}

static gboolean
write_seed (Fakeroot *fr, GError **error)
{
  GString *seed = g_string_new ("");
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init (&iter, fr->lower_by_ino);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      const LowerEntry *e = value;
      if (e->uid == 0 && e->gid == 0 && (e->mode & 07777) == (e->real_mode & 07777))
        continue;  /* the sandbox shows it that way already */
      g_string_append_printf (seed, "dev=%llx,ino=%llu,mode=%llo,uid=%u,gid=%u,nlink=%u,rdev=0\n",
                              (unsigned long long) fr->overlay_dev,
                              (unsigned long long) *(guint64 *) key,
                              (unsigned long long) ((e->real_mode & S_IFMT) | (e->mode & 07777)),
                              e->uid, e->gid, e->paths->len);
    }
  gboolean ok = g_file_set_contents (fr->seed_path, seed->str, seed->len, error);
  g_string_free (seed, TRUE);
  return ok;
}

static void
faked_child_setup (gpointer data)
{
  (void) prctl (PR_SET_PDEATHSIG, SIGTERM);
}

/* Once the overlay is mounted: seed and start faked, give its key to the
 * command. */
static gboolean
on_mounted (Sandbox *sandbox, dev_t overlay_dev, gpointer user_data, GError **error)
{
  Fakeroot *fr = user_data;
  fr->overlay_dev = overlay_dev;
  if (!write_seed (fr, error))
    return FALSE;

  /* In the foreground, as our child, so that it ends when we do, however
   * we end (a daemon would outlive a killed run). */
  const char *argv[] = { fr->faked, "--foreground", "--load", "--save-file", fr->save_path, NULL };
  g_autoptr(GSubprocessLauncher) launcher =
      g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_subprocess_launcher_set_stdin_file_path (launcher, fr->seed_path);
  g_subprocess_launcher_set_child_setup (launcher, faked_child_setup, NULL, NULL);
  g_autoptr(GSubprocess) proc = g_subprocess_launcher_spawnv (launcher, argv, error);
  if (proc == NULL)
    return FALSE;
  g_autoptr(GDataInputStream) lines = g_data_input_stream_new (g_subprocess_get_stdout_pipe (proc));
  g_autoptr(GError) read_error = NULL;
  g_autofree char *out = g_data_input_stream_read_line_utf8 (lines, NULL, NULL, &read_error);
  if (read_error != NULL)
    return util_fail (error, "%s: %s", fr->faked, read_error->message);
  unsigned long key = 0;
  int pid = 0;
  if (out == NULL || sscanf (out, "%lu:%d", &key, &pid) != 2 || pid <= 0)
    return util_fail (error, "%s did not start (it said \"%s\"); check the \"fakeroot\" package",
                      fr->faked, out ? g_strstrip (out) : "");
  fr->faked_pid = pid;

  g_autofree char *key_str = g_strdup_printf ("%lu", key);
  g_autofree char *lib = g_build_filename (fr->chroot_lib ? CHROOT_LIB_DIR : fr->lib_dir,
                                           FAKEROOT_LIB, NULL);
  sandbox_setenv (sandbox, "FAKEROOTKEY", key_str);
  sandbox_setenv (sandbox, "LD_PRELOAD", lib);
  sandbox_setenv (sandbox, "FAKED_MODE", "unknown-is-root");
  /* The namespace maps only the caller: a real chown to anyone else fails
   * (EINVAL), so leave owners to the daemon. */
  sandbox_setenv (sandbox, "FAKEROOTDONTTRYCHOWN", "1");
  return TRUE;
}

gboolean
fakeroot_prepare (Fakeroot *fr, Sandbox *sandbox, GError **error)
{
  /* The tree: which root is it?  The ops say: an overlay on "/" is a chroot. */
  const GPtrArray *ops = sandbox_get_ops (sandbox);
  for (guint i = 0; i < ops->len; i++)
    {
      const SandboxOp *op = ops->pdata[i];
      if (op->type == SANDBOX_OP_OVERLAY && g_str_equal (op->dest, "/"))
        fr->chroot_lib = TRUE;
    }
  if (fr->chroot_lib)
    sandbox_add (sandbox, SANDBOX_OP_RO_BIND, fr->lib_dir, CHROOT_LIB_DIR);
  sandbox_set_share_ipc (sandbox, TRUE);  /* faked-sysv talks over SysV messages */
  sandbox_set_mounted_func (sandbox, on_mounted, fr);
  return TRUE;
}

/* fakeroot's save format: dev=HEX,ino=DEC,mode=OCT,uid=DEC,gid=DEC,nlink=DEC,rdev=DEC */
static gboolean
read_save_file (Fakeroot *fr, GError **error)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (fr->save_path, &text, NULL, error))
    return FALSE;
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      unsigned long long dev, ino, mode, uid, gid, nlink, rdev;
      if (sscanf (*l, "dev=%llx,ino=%llu,mode=%llo,uid=%llu,gid=%llu,nlink=%llu,rdev=%llu", &dev,
                  &ino, &mode, &uid, &gid, &nlink, &rdev) != 7)
        continue;
      if (dev != (unsigned long long) fr->overlay_dev)
        continue;
      FakedEntry *e = g_new0 (FakedEntry, 1);
      e->uid = uid;
      e->gid = gid;
      e->mode = mode;
      g_hash_table_replace (fr->faked_by_ino, ino_key (ino), e);
    }
  return TRUE;
}

/* Running, and not a zombie waiting to be reaped (GLib reaps our child). */
static gboolean
process_alive (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *stat = NULL;
  if (!g_file_get_contents (path, &stat, NULL, NULL))
    return FALSE;
  const char *end = strrchr (stat, ')');
  return end != NULL && end[1] == ' ' && end[2] != 'Z' && end[2] != 'X';
}

gboolean
fakeroot_finish (Fakeroot *fr, GError **error)
{
  if (fr->faked_pid <= 0)
    return TRUE;
  /* faked writes its database when it gets SIGTERM. */
  pid_t pid = fr->faked_pid;
  fr->faked_pid = 0;
  (void) kill (pid, SIGTERM);
  for (int i = 0; i < 1000 && process_alive (pid); i++)
    g_usleep (2000);
  if (process_alive (pid))
    return util_fail (error, "fakeroot's daemon (pid %d) does not stop", (int) pid);
  return read_save_file (fr, error);
}

/* The inode number the command saw for an upper entry: a copy-up keeps the
 * lower file's, which the overlay's origin xattr names by file handle. */
static gboolean
seen_ino (Fakeroot *fr, const char *path, const char *upper_path, const struct stat *st,
          guint64 *out_ino)
{
  char origin[256];
  ssize_t len = lgetxattr (upper_path, "user.overlay.origin", origin, sizeof origin);
  if (len < 0)
    {
      *out_ino = st->st_ino;  /* made in the upper directory */
      return TRUE;
    }
  /* struct ovl_fb: version, magic, len, flags, type, uuid[16], then the
   * filesystem's handle; compare it with the lower file's at this path. */
  g_autofree char *lower_path = g_strconcat (fr->lower, path, NULL);
  struct stat lst;
  if (lstat (lower_path, &lst) < 0)
    return FALSE;
  struct {
    struct file_handle fh;
    unsigned char bytes[128];
  } h;
  h.fh.handle_bytes = sizeof h.bytes;
  int mount_id;
  if (name_to_handle_at (AT_FDCWD, lower_path, &h.fh, &mount_id, 0) < 0)
    return FALSE;
  const gsize header = 5 + 16;
  if ((gsize) len != header + h.fh.handle_bytes || origin[4] != (char) h.fh.handle_type
      || memcmp (origin + header, h.fh.f_handle, h.fh.handle_bytes) != 0)
    return FALSE;  /* renamed from elsewhere */
  *out_ino = lst.st_ino;
  return TRUE;
}

/* REAL's xattrs (what the upper file has) plus BASE's (what OSTree stores
 * for the file it came from) that REAL does not name. */
static GVariant *
merge_xattrs (GVariant *base, GVariant *real)
{
  GVariantBuilder builder;
  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a(ayay)"));
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GVariant *lists[] = { real, base };
  for (guint l = 0; l < G_N_ELEMENTS (lists); l++)
    {
      if (lists[l] == NULL)
        continue;
      gsize n = g_variant_n_children (lists[l]);
      for (gsize i = 0; i < n; i++)
        {
          g_autoptr(GVariant) child = g_variant_get_child_value (lists[l], i);
          g_autoptr(GVariant) name_v = g_variant_get_child_value (child, 0);
          const char *name = g_variant_get_bytestring (name_v);
          if (g_hash_table_contains (seen, name))
            continue;
          g_hash_table_add (seen, g_strdup (name));
          g_variant_builder_add_value (&builder, child);
        }
    }
  return g_variant_ref_sink (g_variant_builder_end (&builder));
}

gboolean
fakeroot_upper_meta (const char *path, const char *upper_path, struct stat *st,
                     GVariant **xattrs, gpointer user_data, GError **error)
{
  Fakeroot *fr = user_data;
  g_hash_table_add (fr->upper_paths, g_strdup (path));

  guint64 ino = 0;
  gboolean known = seen_ino (fr, path, upper_path, st, &ino);
  const FakedEntry *faked = known ? g_hash_table_lookup (fr->faked_by_ino, &ino) : NULL;
  const LowerEntry *lower = known ? g_hash_table_lookup (fr->lower_by_ino, &ino) : NULL;

  guint32 uid = 0, gid = 0, perms = st->st_mode & 07777;
  GVariant *base_xattrs = NULL;
  g_autoptr(GVariant) ostreemeta = NULL;
  g_autoptr(GVariant) owned_xattrs = NULL;
  if (lower != NULL)
    {
      uid = lower->uid;
      gid = lower->gid;
      base_xattrs = lower->xattrs;
      /* bare-user checkouts drop what a user cannot set (setuid & co.):
       * unchanged real bits mean the stored mode still holds. */
      if ((st->st_mode & 07777) == (lower->real_mode & 07777))
        perms = lower->mode & 07777;
    }
  else if (!S_ISDIR (st->st_mode))
    {
      /* A lower file renamed here still carries OSTree's metadata. */
      char buf[4096];
      ssize_t len = lgetxattr (upper_path, "user.ostreemeta", buf, sizeof buf);
      if (len > 0)
        {
          g_autoptr(GBytes) bytes = g_bytes_new (buf, len);
          ostreemeta = g_variant_ref_sink (
              g_variant_new_from_bytes (G_VARIANT_TYPE ("(uuua(ayay))"), bytes, FALSE));
          guint32 m;
          g_variant_get (ostreemeta, "(uuu@a(ayay))", &uid, &gid, &m, &owned_xattrs);
          uid = GUINT32_FROM_BE (uid);
          gid = GUINT32_FROM_BE (gid);
          m = GUINT32_FROM_BE (m);
          if ((st->st_mode & 07777) == (m & 07777 & ~(S_ISUID | S_ISGID)))
            perms = m & 07777;
          base_xattrs = owned_xattrs;
        }
    }
  if (faked != NULL)
    {
      uid = faked->uid;
      gid = faked->gid;
      perms = faked->mode & 07777;
    }

  st->st_uid = uid;
  st->st_gid = gid;
  st->st_mode = (st->st_mode & S_IFMT) | perms;
  g_autoptr(GVariant) merged = merge_xattrs (base_xattrs, *xattrs);
  g_variant_unref (*xattrs);
  *xattrs = g_steal_pointer (&merged);
  return TRUE;
}

gboolean
fakeroot_apply_unchanged (Fakeroot *fr, OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root,
                          GCancellable *cancellable, GError **error)
{
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init (&iter, fr->faked_by_ino);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      const FakedEntry *faked = value;
      const LowerEntry *lower = g_hash_table_lookup (fr->lower_by_ino, key);
      if (lower == NULL)
        continue;
      if (faked->uid == lower->uid && faked->gid == lower->gid
          && (faked->mode & 07777) == (lower->mode & 07777))
        continue;
      for (guint i = 0; i < lower->paths->len; i++)
        {
          const char *path = lower->paths->pdata[i];
          if (g_hash_table_contains (fr->upper_paths, path))
            continue;
          g_autoptr(GError) local_error = NULL;
          if (!upper_set_file_owner (repo, sink, root, path, faked->uid, faked->gid, faked->mode,
                                     cancellable, &local_error))
            {
              if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
                continue;  /* deleted by the command */
              g_propagate_error (error, g_steal_pointer (&local_error));
              return FALSE;
            }
        }
    }
  return TRUE;
}
