/* fuzz-deb.c — libFuzzer harness for the .deb reader (src/deb/deb.c): the input
 * is a .deb file, unpacked twice (merged /usr off and on) into a StoreSink that
 * only computes each object's checksum, so no repository is needed.  An
 * input that is not an ar archive is taken as a data.tar and wrapped in a
 * .deb with a fixed control.tar, so that mutations work on tar headers and
 * member names directly rather than on compressed bytes. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <string.h>
#include <sys/stat.h>

#include "deb/deb.h"
#include "fuzz-util.h"
#include "barestore/objects.h"
#include "base/util.h"

static char *
checksum_of (GBytes *header, const guint8 *data, gsize size)
{
  return objects_content_checksum (header, data, size);
}

static char *
sink_regular (StoreSink *sink, GHashTable *headers, guint32 uid, guint32 gid, guint32 mode,
              GVariant *xattrs, const guint8 *data, gsize size, GError **error)
{
  g_autoptr(GBytes) header = objects_regular_header (headers, uid, gid, mode, xattrs, error);
  if (header == NULL)
    return NULL;
  return checksum_of (header, data, size);
}

/* Drain the stream as a repository would, checking the promised size. */
static char *
sink_regular_stream (StoreSink *sink, guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs,
                     guint64 size, ObjectWriterRead read, gpointer user_data, GError **error)
{
  g_autoptr(GBytes) header = objects_regular_header (NULL, uid, gid, mode, xattrs, error);
  if (header == NULL)
    return NULL;
  g_autoptr(GChecksum) sha = g_checksum_new (G_CHECKSUM_SHA256);
  g_checksum_update (sha, g_bytes_get_data (header, NULL), g_bytes_get_size (header));
  g_autofree guint8 *buf = g_malloc (64 * 1024);
  guint64 done = 0;
  for (;;)
    {
      gssize n = read (user_data, buf, 64 * 1024, error);
      if (n < 0)
        return NULL;
      if (n == 0)
        break;
      done += n;
      if (done > size)
        return util_fail (error, "longer than its header says"), NULL;
      g_checksum_update (sha, buf, n);
    }
  if (done != size)
    return util_fail (error, "truncated"), NULL;
  return g_strdup (g_checksum_get_string (sha));
}

static char *
sink_symlink (StoreSink *sink, guint32 uid, guint32 gid, const char *target, GVariant *xattrs,
              GError **error)
{
  g_autoptr(GBytes) header = objects_file_header (uid, gid, S_IFLNK | 0777, target, xattrs, error);
  if (header == NULL)
    return NULL;
  return checksum_of (header, NULL, 0);
}

static char *
sink_metadata (StoreSink *sink, ObjectsType type, GVariant *object, GError **error)
{
  g_autoptr(GVariant) owned = g_variant_ref_sink (object);
  g_autoptr(GVariant) normal = g_variant_get_normal_form (owned);
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, g_variant_get_data (normal),
                                      g_variant_get_size (normal));
}

static StoreSink checksum_sink = {
  .regular = sink_regular,
  .regular_stream = sink_regular_stream,
  .symlink = sink_symlink,
  .metadata = sink_metadata,
};

static GBytes *control_tar;

/* An uncompressed control.tar holding one control file. */
static GBytes *
make_control_tar (void)
{
  static const char control[] = "Package: fuzz\nVersion: 1:1.0-1\nArchitecture: amd64\n"
                                "Multi-Arch: same\nDescription: fuzz\n";
  static guint8 buf[16 * 1024];
  size_t used = 0;
  struct archive *a = archive_write_new ();
  archive_write_set_format_ustar (a);
  archive_write_add_filter_none (a);
  archive_write_set_bytes_in_last_block (a, 1);
  struct archive_entry *entry = archive_entry_new ();
  archive_entry_set_pathname (entry, "./control");
  archive_entry_set_filetype (entry, AE_IFREG);
  archive_entry_set_perm (entry, 0644);
  archive_entry_set_size (entry, sizeof control - 1);
  if (archive_write_open_memory (a, buf, sizeof buf, &used) != ARCHIVE_OK
      || archive_write_header (a, entry) != ARCHIVE_OK
      || archive_write_data (a, control, sizeof control - 1) != (la_ssize_t) (sizeof control - 1)
      || archive_write_close (a) != ARCHIVE_OK)
    {
      g_printerr ("fuzz-deb: cannot make control.tar: %s\n", archive_error_string (a));
      abort ();
    }
  archive_entry_free (entry);
  archive_write_free (a);
  return g_bytes_new (buf, used);
}

static void
append_member (GByteArray *out, const char *name, const guint8 *data, gsize size)
{
  char header[61];
  g_snprintf (header, sizeof header, "%-16s%-12u%-6u%-6u%-8o%-10" G_GSIZE_FORMAT "`\n", name, 0, 0,
              0, 0100644, size);
  g_byte_array_append (out, (const guint8 *) header, 60);
  g_byte_array_append (out, data, size);
  if (size % 2 != 0)
    g_byte_array_append (out, (const guint8 *) "\n", 1);
}

/* The .deb around DATA_TAR. */
static GByteArray *
wrap_data_tar (const uint8_t *data_tar, size_t size)
{
  GByteArray *deb = g_byte_array_new ();
  g_byte_array_append (deb, (const guint8 *) "!<arch>\n", 8);
  append_member (deb, "debian-binary", (const guint8 *) "2.0\n", 4);
  append_member (deb, "control.tar", g_bytes_get_data (control_tar, NULL),
                 g_bytes_get_size (control_tar));
  append_member (deb, "data.tar", data_tar, size);
  return deb;
}

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_init ();
  control_tar = make_control_tar ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr(GByteArray) wrapped = NULL;
  if (size < 8 || memcmp (data, "!<arch>\n", 8) != 0)
    {
      wrapped = wrap_data_tar (data, size);
      data = wrapped->data;
      size = wrapped->len;
    }
  const char *path = fuzz_write_file ("input.deb", data, size);
  for (int merged_usr = 0; merged_usr <= 1; merged_usr++)
    {
      DebUnpackOptions opts = { .merged_usr = merged_usr, .display_name = "input.deb" };
      g_autofree char *commit = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(DebInfo) info = deb_unpack (&checksum_sink, path, &opts, 0, &commit, &error);
      fuzz_assert ((info != NULL) == (error == NULL), "deb_unpack sets an error exactly when it fails");
      fuzz_report (error);
      if (info == NULL)
        continue;
      fuzz_assert (commit != NULL && strlen (commit) == 64, "a commit checksum");
      g_autofree char *ref = deb_ref_name (info->package, info->version, info->architecture,
                                           commit);
      fuzz_assert (strspn (ref, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/")
                   == strlen (ref), "a package's ref name holds only ref-safe characters");
      g_autoptr(GVariant) meta = g_variant_ref_sink (deb_commit_metadata (info));
      fuzz_assert (g_variant_is_of_type (meta, G_VARIANT_TYPE_VARDICT), "commit metadata is a{sv}");
    }
  return 0;
}
