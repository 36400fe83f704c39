/* sha256.c — SHA-256 through Nettle, which uses the CPU's SHA instructions
 * (and which libarchive loads anyway: no library more for the lean
 * unpack-deb path, see cmd/main.c). */
#include "config.h"

#include <nettle/sha2.h>
/* Nettle names its functions sha256_* through macros; ours have those
 * names. */
#undef sha256_init
#undef sha256_update
#undef sha256_digest

#include "base/sha256.h"

struct Sha256 {
  struct sha256_ctx ctx;
};

Sha256 *
sha256_new (void)
{
  Sha256 *sha = g_new0 (Sha256, 1);
  sha256_reset (sha);
  return sha;
}

void
sha256_free (Sha256 *sha)
{
  g_free (sha);
}

void
sha256_reset (Sha256 *sha)
{
  nettle_sha256_init (&sha->ctx);
}

void
sha256_update (Sha256 *sha, const void *data, gsize len)
{
  if (len > 0)
    nettle_sha256_update (&sha->ctx, len, data);
}

void
sha256_finish (Sha256 *sha, guint8 digest[32])
{
  nettle_sha256_digest (&sha->ctx, SHA256_DIGEST_SIZE, digest);
}

char *
sha256_to_hex (const guint8 digest[32])
{
  static const char hex[] = "0123456789abcdef";
  char *out = g_malloc (65);
  for (int i = 0; i < 32; i++)
    {
      out[2 * i] = hex[digest[i] >> 4];
      out[2 * i + 1] = hex[digest[i] & 0xf];
    }
  out[64] = '\0';
  return out;
}

char *
sha256_finish_hex (Sha256 *sha)
{
  guint8 digest[32];
  sha256_finish (sha, digest);
  return sha256_to_hex (digest);
}
