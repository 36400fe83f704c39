/* release.h — a source's signed Release file and the Packages indices it
 * vouches for.
 *
 * Trust: InRelease (else Release + Release.gpg) is verified by gpgv against
 * a temporary keyring holding only the source's Signed-By keys, or,
 * when the source names none, the keyrings apt2ostree ships
 * ($APT2OSTREE_KEYRINGS, else keyrings/ of the data directory installed with
 * the program, else PKGDATADIR/keyrings).  A signature counts when
 * gpgv calls it good and it is made by one of those keys; bad, unknown-key,
 * expired-key, expired-signature and revoked-key signatures never count.  A
 * source marked trusted=yes is read without any check of a signature (an
 * unsigned Release will do), as apt does.  A Valid-Until in the past is
 * refused unless the source says check-valid-until=no.  A flat repository
 * ("deb URI ./") has its Release and one Packages index for every
 * architecture at URI/PATH.  Only the text that was signed is
 * parsed (never what surrounds a clearsigned block).
 *
 * Indices: Packages.xz (else .gz, .bz2, .zst, plain, whichever the Release
 * lists) is fetched — by hash when the Release says "Acquire-By-Hash: yes" —
 * checked for size and SHA256 against the Release, decompressed, checked
 * again against the Release's entry for the uncompressed Packages when there
 * is one, and stored in the cache under its SHA256.  A cached index whose
 * name (its SHA256) and size match the Release is used without any network
 * access; files in the cache are only ever written after verification and
 * renamed into place, so the name is the proof. */
#pragma once

#include <gio/gio.h>

#include "apt/sources.h"

G_BEGIN_DECLS

typedef struct {
  char *sha256;
  gint64 size;
} ReleaseEntry;

typedef struct {
  char *origin;
  char *label;
  char *suite;
  char *codename;
  char *version;
  char *date;
  char *valid_until;
  char **architectures;
  char **components;
  gboolean acquire_by_hash;
  gboolean no_support_arch_all;  /* "No-Support-for-Architecture-all: Packages" */
  GHashTable *entries;           /* path relative to dists/SUITE/ -> ReleaseEntry */

  char *fingerprint;             /* primary key of the first good signature */
  char *file_sha256;             /* of the InRelease (or Release) as fetched */
} Release;

void release_free (Release *release);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Release, release_free)

/* Parse a Release file's text (already verified).  ORIGIN names it in errors. */
Release *release_parse (const char *text, const char *origin, GError **error);

/* Seconds since the epoch for an RFC 2822 date as Release files write them
 * ("Sat, 10 Jun 2023 08:53:33 UTC"). */
gboolean release_parse_date (const char *text, gint64 *out_seconds);

/* Verify SIGNED_DATA: a clearsigned text when DETACHED is NULL, else the data
 * DETACHED signs.  KEYS are keyring files or armored key blocks.  Returns
 * the signed text and the primary fingerprint of the key that made the first
 * good signature.  WHAT names the file in errors. */
GBytes *release_verify_signature (GBytes *signed_data, GBytes *detached, GPtrArray *keys,
                                  const char *what, char **out_fingerprint, GError **error);

/* The keys to check SOURCE against: its Signed-By (paths, comma or space
 * separated, or one armored block), else every *.gpg / *.asc in the shipped
 * keyrings directory. */
GPtrArray *release_source_keys (Source *source, GError **error);

/* Fetch and verify SOURCE's InRelease (else Release + Release.gpg), refuse a
 * passed Valid-Until, and parse it. */
Release *release_fetch (Source *source, GCancellable *cancellable, GError **error);

/* TRUE when the archive keeps arch:all packages in binary-all/ rather than
 * in every architecture's index (no "No-Support-for-Architecture-all"). */
gboolean release_has_separate_all (Release *release);

/* The verified, uncompressed Packages index files of SOURCE for ARCH (one per
 * component, plus binary-all where the archive keeps arch:all packages apart),
 * in CACHE_DIR. */
GPtrArray *release_fetch_indices (Release *release, Source *source, const char *arch,
                                  const char *cache_dir, GCancellable *cancellable,
                                  GError **error);

G_END_DECLS
