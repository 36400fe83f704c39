/* fuzz-release.c — libFuzzer harness for the Release parser (src/apt/release.c):
 * the input is the text a verified InRelease or Release yields (the
 * signature check itself is gpgv's), and the dates in it. */
#include "config.h"

#include <string.h>

#include "fuzz-util.h"
#include "apt/release.h"

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_init ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *text = g_strndup ((const char *) data, size);
  gint64 seconds;
  release_parse_date (text, &seconds);

  g_autoptr(GError) error = NULL;
  g_autoptr(Release) release = release_parse (text, "fuzz/InRelease", &error);
  fuzz_assert ((release != NULL) == (error == NULL), "an error exactly when parsing fails");
  fuzz_report (error);
  if (release == NULL)
    return 0;
  if (release->date != NULL)
    release_parse_date (release->date, &seconds);
  if (release->valid_until != NULL)
    release_parse_date (release->valid_until, &seconds);
  release_has_separate_all (release);
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init (&iter, release->entries);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      ReleaseEntry *entry = value;
      fuzz_assert (entry->sha256 != NULL, "every entry has a checksum");
    }
  return 0;
}
