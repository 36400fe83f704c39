/* debfile.h — a .deb's container: the ar archive (debian-binary, then
 * control.tar and data.tar, each uncompressed or compressed with gzip, xz,
 * lzma, bzip2 or zstd; members named "_..." are skipped, as dpkg skips
 * them) and the entries of its two tar members, handed to the caller as
 * they are decompressed.  The end of each compressed stream is checked
 * (xz, zstd and bzip2 check their data as it ends; gzip's CRC-32 and size
 * are checked here), so a damaged .deb fails before anything is kept. */
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <glib.h>

G_BEGIN_DECLS

/* One entry of MEMBER ("data.tar.xz"); its data is read from A. */
typedef gboolean (*DebFileEntryFunc) (gpointer user_data, const char *member, struct archive *a,
                                      struct archive_entry *entry, GError **error);

typedef struct {
  DebFileEntryFunc control_entry;   /* each entry of control.tar */
  /* After control.tar's last entry, before data.tar's first. */
  gboolean (*control_done) (gpointer user_data, GError **error);
  DebFileEntryFunc data_entry;      /* each entry of data.tar */
} DebFileReader;

/* Read the .deb at PATH through READER.  Errors name the package as NAME
 * ("NAME: not a Debian package (...)"); an error of READER's stops the
 * reading and is passed on as it is. */
gboolean debfile_read (const char *path, const char *name, const DebFileReader *reader,
                       gpointer user_data, GError **error);

G_END_DECLS
