/* sha256.h — SHA-256 through Nettle, which uses the CPU's SHA instructions:
 * several times faster than GLib's GChecksum on the .debs and file content
 * every build hashes. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct Sha256 Sha256;

Sha256 *sha256_new (void);
void sha256_free (Sha256 *sha);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Sha256, sha256_free)

/* Start again, as after sha256_new(). */
void sha256_reset (Sha256 *sha);
void sha256_update (Sha256 *sha, const void *data, gsize len);

/* The digest of what was added so far: 32 bytes into DIGEST.  SHA is left
 * finished: reset it before adding more. */
void sha256_finish (Sha256 *sha, guint8 digest[32]);

/* 32 bytes of a digest as 64 lowercase hex digits. */
char *sha256_to_hex (const guint8 digest[32]);

/* The same as 64 lowercase hex digits. */
char *sha256_finish_hex (Sha256 *sha);

G_END_DECLS
