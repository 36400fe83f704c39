/* fuzz-packages.c — libFuzzer harness for the Packages index reader
 * (src/apt/packages.c): the input is an index (plain, or compressed: the
 * content decides), loaded into a libsolv pool, then loaded again from the
 * cache the first load wrote; both loads must describe every package the
 * same way. */
#include "config.h"

#include <gmodule.h>
#include <solv/pool.h>
#include <solv/repo.h>
#include <string.h>

#include "fuzz-util.h"
#include "apt/packages.h"

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_init ();
  /* Each store opens libsolvext and closes it when freed: holding one
   * reference here keeps it from being loaded anew for every input. */
  g_module_open ("libsolvext.so.1", G_MODULE_BIND_LOCAL);
  return 0;
}

static char *
describe_all (PackagesStore *store, Pool *pool, Repo *repo)
{
  GString *out = g_string_new (NULL);
  Id p;
  Solvable *s;
  FOR_REPO_SOLVABLES (repo, p, s)
    {
      g_autoptr(DebPackage) pkg = packages_store_describe (store, p, "fuzz");
      g_string_append_printf (out, "%s %s %s %s %s %d %s %" G_GUINT64_FORMAT " %s %s %s %s\n",
                              pkg->name, pkg->version, pkg->architecture, pkg->multi_arch,
                              pkg->priority ? pkg->priority : "-", pkg->essential,
                              pkg->filename ? pkg->filename : "-", pkg->size,
                              pkg->sha256 ? pkg->sha256 : "-", pkg->source_package,
                              pkg->depends ? pkg->depends : "-",
                              pkg->pre_depends ? pkg->pre_depends : "-");
      g_string_append_printf (out, "rank %u\n", packages_store_mention_rank (store, s->name));
    }
  return g_string_free (out, FALSE);
}

/* Load the index at PATH into a fresh pool (through CACHE_DIR); its
 * description, or NULL when the load fails. */
static char *
load (const char *path, const char *cache_dir, GError **error)
{
  Pool *pool = pool_create ();
  pool_setdisttype (pool, DISTTYPE_DEB);
  pool_setarch (pool, "amd64");
  Repo *repo = repo_create (pool, "fuzz");
  PackagesStore *store = packages_store_new (pool);
  char *description = NULL;
  if (packages_store_load (store, repo, path, cache_dir, error))
    description = describe_all (store, pool, repo);
  packages_store_free (store);
  pool_free (pool);
  return description;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* A fresh cache each time: its entries are keyed by the index's size,
   * inode and mtime, which a rewritten input can repeat. */
  const char *cache_dir = fuzz_scratch_dir ("cache");
  const char *path = fuzz_write_file ("Packages", data, size);
  g_autoptr(GError) error = NULL;
  g_autofree char *parsed = load (path, cache_dir, &error);
  fuzz_assert ((parsed != NULL) == (error == NULL), "an error exactly when the load fails");
  fuzz_report (error);
  if (parsed == NULL)
    return 0;
  g_autofree char *cached = load (path, cache_dir, &error);
  fuzz_assert (cached != NULL, "a cached index loads");
  fuzz_assert (strcmp (parsed, cached) == 0, "the cache gives what parsing gave");
  return 0;
}
