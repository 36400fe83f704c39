/* fuzz-lockfile.c — libFuzzer harness for the lockfile reader
 * (src/apt/lockfile.c): the input is a lockfile.  One that loads is written
 * back and loaded again, and must give the same text. */
#include "config.h"

#include <string.h>

#include "fuzz-util.h"
#include "apt/lockfile.h"

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
  const char *path = fuzz_write_file ("packages.lock.json", data, size);
  g_autoptr(GError) error = NULL;
  g_autoptr(Lockfile) lock = lockfile_load (path, &error);
  fuzz_assert ((lock != NULL) == (error == NULL), "an error exactly when loading fails");
  fuzz_report (error);
  if (lock == NULL)
    return 0;

  for (guint i = 0; i < lock->packages->len; i++)
    {
      LockPackage *package = lock->packages->pdata[i];
      fuzz_assert (lockfile_lookup_package (lock, package->name, package->architecture) != NULL,
                   "a package is found by name and architecture");
      g_auto(GStrv) url = lockfile_package_urls (lock, package, NULL, NULL);
      fuzz_assert (url == NULL || g_str_has_suffix (url[0], package->filename),
                   "a package's URL ends with its pool filename");
    }
  g_free (lockfile_request_sources_path (lock, path));

  g_autofree char *text = lockfile_to_string (lock);
  const char *again_path = fuzz_write_file ("again.lock.json", (const guint8 *) text, strlen (text));
  g_autoptr(Lockfile) again = lockfile_load (again_path, &error);
  if (again == NULL)
    g_printerr ("%s\n", error->message);
  fuzz_assert (again != NULL, "a lockfile written from a loaded one loads");
  g_autofree char *text_again = lockfile_to_string (again);
  fuzz_assert (strcmp (text, text_again) == 0, "writing, loading and writing again changes nothing");
  return 0;
}
