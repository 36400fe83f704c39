/* sha256.c — SHA-256 through OpenSSL's EVP interface. */
#include "config.h"

#include <openssl/evp.h>

#include "sha256.h"

struct Sha256 {
  EVP_MD_CTX *ctx;
};

/* OpenSSL fails here only when out of memory or when SHA-256 itself is
 * unavailable: neither leaves anything sensible to do but stop. */
static void
check (int ok, const char *what)
{
  if (ok != 1)
    g_error ("OpenSSL: %s failed", what);
}

Sha256 *
sha256_new (void)
{
  Sha256 *sha = g_new0 (Sha256, 1);
  sha->ctx = EVP_MD_CTX_new ();
  if (sha->ctx == NULL)
    g_error ("OpenSSL: EVP_MD_CTX_new failed");
  sha256_reset (sha);
  return sha;
}

void
sha256_free (Sha256 *sha)
{
  if (sha == NULL)
    return;
  EVP_MD_CTX_free (sha->ctx);
  g_free (sha);
}

void
sha256_reset (Sha256 *sha)
{
  check (EVP_DigestInit_ex (sha->ctx, EVP_sha256 (), NULL), "EVP_DigestInit_ex");
}

void
sha256_update (Sha256 *sha, const void *data, gsize len)
{
  if (len > 0)
    check (EVP_DigestUpdate (sha->ctx, data, len), "EVP_DigestUpdate");
}

void
sha256_finish (Sha256 *sha, guint8 digest[32])
{
  unsigned int len = 0;
  check (EVP_DigestFinal_ex (sha->ctx, digest, &len), "EVP_DigestFinal_ex");
  g_assert (len == 32);
}

char *
sha256_finish_hex (Sha256 *sha)
{
  static const char hex[] = "0123456789abcdef";
  guint8 digest[32];
  sha256_finish (sha, digest);
  char *out = g_malloc (65);
  for (int i = 0; i < 32; i++)
    {
      out[2 * i] = hex[digest[i] >> 4];
      out[2 * i + 1] = hex[digest[i] & 0xf];
    }
  out[64] = '\0';
  return out;
}
