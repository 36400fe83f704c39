/* fuzz-sources.c — libFuzzer harness for the apt sources parsers
 * (src/apt/sources.c): the input's first byte picks how the file is named
 * (*.list: one-line format, *.sources: deb822, else the content decides),
 * the rest is the file, read as sources_load_file() reads a user's file;
 * every source must then be found by its name. */
#include "config.h"

#include <string.h>

#include "fuzz-util.h"
#include "apt/sources.h"

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
  if (size < 1)
    return 0;
  static const char *const names[] = { "sources.list", "fuzz.sources", "sources" };
  const char *path = fuzz_write_file (names[data[0] % G_N_ELEMENTS (names)], data + 1, size - 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(SourcesList) list = sources_load_file (path, &error);
  fuzz_assert ((list != NULL) == (error == NULL), "an error exactly when loading fails");
  fuzz_report (error);
  if (list == NULL)
    return 0;
  fuzz_assert (list->sources->len > 0, "a loaded list names a source");

  for (guint i = 0; i < list->sources->len; i++)
    {
      Source *source = list->sources->pdata[i];
      fuzz_assert (source->name != NULL && source->uri != NULL && source->suite != NULL,
                   "a source has a name, a URI and a suite");
      fuzz_assert (sources_list_lookup (list, source->name) != NULL, "a source is found by name");
    }
  sources_list_filter_arch (list, "amd64");
  return 0;
}
