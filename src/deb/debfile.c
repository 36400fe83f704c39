/* debfile.c — a .deb's container, read with libarchive: the ar archive and
 * the tar members streamed from it through their decompressor, every
 * compressed stream checked to its end.  What the entries mean is the
 * caller's (deb.c: the tree, debmeta.c: the dpkg metadata). */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <string.h>
#include <zlib.h>

#include "deb/debfile.h"
#include "base/util.h"

static void
archive_free_read (struct archive *a)
{
  archive_read_free (a);
}
typedef struct archive ArchiveRead;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ArchiveRead, archive_free_read)

typedef struct {
  const char *name;                 /* the .deb, for messages */
  const DebFileReader *reader;
  gpointer user_data;
} DebFile;

static gboolean
file_fail (DebFile *f, GError **error, const char *format, ...) G_GNUC_PRINTF (3, 4);

/* "FILE: MESSAGE" */
static gboolean
file_fail (DebFile *f, GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  return util_fail (error, "%s: %s", f->name, message);
}

/* A tar member of the ar archive, read through two more libarchive
 * readers: the decompressor (the "raw" format behind every filter Debian
 * uses), which pulls the compressed blocks from the ar reader, and the tar
 * reader, which pulls the decompressed blocks from it.  Two, so that the
 * decompressor can be read to its end once the tar reader has its last
 * entry: libarchive's tar reader stops at the end-of-archive blocks, and
 * the check of the compressed stream (xz, zstd and bzip2 check their data
 * as it ends) would go unread.  libarchive does not check gzip's CRC at
 * all: it is checked here, against the stream's trailer. */
typedef struct {
  struct archive *outer;       /* the ar reader */
  struct archive *z;           /* the decompressor */
  gboolean gzip;               /* the member is gzip-compressed */
  guint8 tail[8];              /* the last 8 bytes of the compressed member */
  gsize tail_len;
  uLong crc;                   /* CRC-32 of the decompressed bytes (gzip) */
  guint64 size;                /* how many */
} Member;

/* The next data block of FROM for the reader TO: its size, 0 at the end,
 * or -1 with FROM's error set on TO. */
static la_ssize_t
pass_block (struct archive *from, struct archive *to, const void **buffer)
{
  size_t size;
  la_int64_t offset;
  int r = archive_read_data_block (from, buffer, &size, &offset);
  if (r == ARCHIVE_EOF)
    return 0;
  if (r != ARCHIVE_OK)
    {
      archive_set_error (to, archive_errno (from), "%s", archive_error_string (from));
      return -1;
    }
  return size;
}

static la_ssize_t
member_read (struct archive *z, void *client_data, const void **buffer)
{
  Member *m = client_data;
  la_ssize_t size = pass_block (m->outer, z, buffer);
  if (size <= 0)
    return size;
  /* Keep the last 8 bytes: the gzip trailer (CRC-32, size). */
  const guint8 *data = *buffer;
  if ((gsize) size >= sizeof m->tail)
    {
      memcpy (m->tail, data + size - sizeof m->tail, sizeof m->tail);
      m->tail_len = sizeof m->tail;
    }
  else
    {
      gsize keep = MIN (m->tail_len, sizeof m->tail - size);
      memmove (m->tail, m->tail + m->tail_len - keep, keep);
      memcpy (m->tail + keep, data, size);
      m->tail_len = keep + size;
    }
  return size;
}

static la_ssize_t
decompressed_read (struct archive *a, void *client_data, const void **buffer)
{
  Member *m = client_data;
  la_ssize_t size = pass_block (m->z, a, buffer);
  if (size <= 0)
    return size;
  if (m->gzip)
    m->crc = crc32 (m->crc, *buffer, size);
  m->size += size;
  return size;
}

/* The decompressor of the member being read from M->outer. */
static struct archive *
member_open_z (DebFile *f, Member *m, const char *member, GError **error)
{
  g_autoptr(ArchiveRead) z = archive_read_new ();
  archive_read_support_format_raw (z);
  archive_read_support_filter_none (z);
  archive_read_support_filter_gzip (z);
  archive_read_support_filter_xz (z);
  archive_read_support_filter_lzma (z);
  archive_read_support_filter_bzip2 (z);
  archive_read_support_filter_zstd (z);
  struct archive_entry *entry;
  if (archive_read_open (z, m, NULL, member_read, NULL) != ARCHIVE_OK
      || archive_read_next_header (z, &entry) != ARCHIVE_OK)
    return file_fail (f, error, "%s: %s", member, archive_error_string (z)), NULL;
  return g_steal_pointer (&z);
}

/* The tar reader over M->z. */
static struct archive *
member_open_tar (DebFile *f, Member *m, const char *member, GError **error)
{
  g_autoptr(ArchiveRead) a = archive_read_new ();
  archive_read_support_format_tar (a);
  archive_read_support_format_gnutar (a);
  if (archive_read_open (a, m, NULL, decompressed_read, NULL) != ARCHIVE_OK)
    return file_fail (f, error, "%s: %s", member, archive_error_string (a)), NULL;
  return g_steal_pointer (&a);
}

/* After the last tar entry: the rest of the decompressed stream (the tar
 * padding) read, so the decompressor checks the end of its stream; for
 * gzip, the CRC and size in the trailer compared with what came out. */
static gboolean
member_check_end (DebFile *f, Member *m, struct archive *a, const char *member, GError **error)
{
  const void *buf;
  la_ssize_t n;
  while ((n = decompressed_read (a, m, &buf)) > 0)
    ;
  if (n < 0)
    return file_fail (f, error, "%s is corrupt: %s", member, archive_error_string (a));
  if (m->gzip)
    {
      guint32 crc, size;
      memcpy (&crc, m->tail, 4);
      memcpy (&size, m->tail + 4, 4);
      if (m->tail_len < 8 || GUINT32_FROM_LE (crc) != (guint32) m->crc
          || GUINT32_FROM_LE (size) != (guint32) m->size)
        return file_fail (f, error, "%s is corrupt: its data does not match the gzip trailer's "
                          "CRC-32 and size", member);
    }
  return TRUE;
}

/* The member's tar entries, one after the other, until EOF: FUNC with
 * F's user data. */
static gboolean
member_foreach_entry (DebFile *f, struct archive *outer, const char *member,
                      DebFileEntryFunc func, GError **error)
{
  Member m = { .outer = outer, .crc = crc32 (0, NULL, 0) };
  g_autoptr(ArchiveRead) z = member_open_z (f, &m, member, error);
  if (z == NULL)
    return FALSE;
  m.z = z;
  m.gzip = archive_filter_code (z, 0) == ARCHIVE_FILTER_GZIP;
  g_autoptr(ArchiveRead) a = member_open_tar (f, &m, member, error);
  if (a == NULL)
    return FALSE;
  for (;;)
    {
      struct archive_entry *entry;
      int r = archive_read_next_header (a, &entry);
      if (r == ARCHIVE_EOF)
        break;
      if (r < ARCHIVE_WARN)
        return file_fail (f, error, "%s is corrupt: %s", member, archive_error_string (a));
      if (!func (f->user_data, member, a, entry, error))
        return FALSE;
    }
  if (!member_check_end (f, &m, a, member, error))
    return FALSE;
  /* The compressed stream must end cleanly too. */
  if (archive_read_close (a) != ARCHIVE_OK)
    return file_fail (f, error, "%s is corrupt: %s", member, archive_error_string (a));
  if (archive_read_close (z) != ARCHIVE_OK)
    return file_fail (f, error, "%s is corrupt: %s", member, archive_error_string (z));
  return TRUE;
}

static gboolean
check_debian_binary (DebFile *f, struct archive *a, GError **error)
{
  char buf[64] = "";
  la_ssize_t n = archive_read_data (a, buf, sizeof buf - 1);
  if (n < 0)
    return file_fail (f, error, "not a Debian package: %s", archive_error_string (a));
  buf[n] = '\0';
  if (!g_str_has_prefix (buf, "2."))
    {
      g_strdelimit (buf, "\n", ' ');
      return file_fail (f, error, "unsupported .deb format \"%s\" (debian-binary must say 2.x)",
                       g_strstrip (buf));
    }
  return TRUE;
}

static gboolean
member_is (const char *name, const char *base)
{
  static const char *const exts[] = { "", ".gz", ".xz", ".zst", ".bz2", ".lzma", NULL };
  if (!g_str_has_prefix (name, base))
    return FALSE;
  return g_strv_contains (exts, name + strlen (base));
}

gboolean
debfile_read (const char *path, const char *name, const DebFileReader *reader,
              gpointer user_data, GError **error)
{
  DebFile file = { name, reader, user_data };
  DebFile *f = &file;
  g_autoptr(ArchiveRead) ar = archive_read_new ();
  archive_read_support_format_ar (ar);
  if (archive_read_open_filename (ar, path, 64 * 1024) != ARCHIVE_OK)
    return file_fail (f, error, "not a Debian package (%s)", archive_error_string (ar));

  gboolean seen_binary = FALSE, seen_control = FALSE, seen_data = FALSE;
  for (guint index = 0;; index++)
    {
      struct archive_entry *entry;
      int r = archive_read_next_header (ar, &entry);
      if (r == ARCHIVE_EOF)
        break;
      if (r < ARCHIVE_WARN)
        {
          if (index == 0)
            return file_fail (f, error, "not a Debian package (%s)", archive_error_string (ar));
          return file_fail (f, error, "corrupt ar archive: %s", archive_error_string (ar));
        }
      g_autofree char *member = g_strdup (archive_entry_pathname (entry));
      if (member == NULL)
        return file_fail (f, error, "corrupt ar archive: a member without a name");
      if (g_str_has_suffix (member, "/"))  /* GNU ar terminates names with "/" */
        member[strlen (member) - 1] = '\0';

      if (index == 0)
        {
          if (!g_str_equal (member, "debian-binary"))
            return file_fail (f, error, "not a Debian package (the first member is \"%s\", not "
                              "debian-binary)", member);
          if (!check_debian_binary (f, ar, error))
            return FALSE;
          seen_binary = TRUE;
        }
      else if (member[0] == '_')
        continue;  /* reserved for local additions; dpkg ignores them too */
      else if (!seen_control && member_is (member, "control.tar"))
        {
          if (!member_foreach_entry (f, ar, member, f->reader->control_entry, error))
            return FALSE;
          if (!f->reader->control_done (f->user_data, error))
            return FALSE;
          seen_control = TRUE;
        }
      else if (seen_control && !seen_data && member_is (member, "data.tar"))
        {
          if (!member_foreach_entry (f, ar, member, f->reader->data_entry, error))
            return FALSE;
          seen_data = TRUE;
        }
      else
        return file_fail (f, error, "unexpected member \"%s\" in the ar archive (expected "
                          "debian-binary, control.tar, data.tar in that order)", member);
    }
  if (!seen_binary)
    return file_fail (f, error, "not a Debian package (an empty ar archive)");
  if (!seen_control)
    return file_fail (f, error, "truncated or corrupt package: no control.tar member");
  if (!seen_data)
    return file_fail (f, error, "truncated or corrupt package: no data.tar member");
  return TRUE;
}
