/* apt2ostree sbom — the bill of materials of an image or a lockfile, as
 * SPDX or CycloneDX JSON (see image/sbom.h). */
#include "config.h"

#include <stdio.h>

#include "apt/lockfile.h"
#include "base/util.h"
#include "cmd/cmd.h"
#include "image/sbom.h"

/* A lockfile when ARG names a file, else a ref or commit (built from
 * LOCK_PATH, or NULL). */
static Sbom *
sbom_for (OstreeRepo *repo, const char *arg, const char *lock_path, GCancellable *cancellable,
          GError **error)
{
  if (!g_file_test (arg, G_FILE_TEST_IS_REGULAR))
    {
      g_autoptr(Lockfile) built_from = lock_path != NULL ? lockfile_load (lock_path, error) : NULL;
      if (lock_path != NULL && built_from == NULL)
        return NULL;
      return sbom_from_ref (repo, arg, built_from, cancellable, error);
    }
  g_autoptr(Lockfile) lock = lockfile_load (arg, error);
  if (lock == NULL)
    return NULL;
  return sbom_from_lockfile (repo, lock, arg, cancellable, error);
}

gboolean
cmd_sbom (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable, GError **error)
{
  g_autofree char *format = NULL;
  g_autofree char *output = NULL;
  g_autofree char *lock_path = NULL;
  const GOptionEntry entries[] = {
    { "lockfile", 0, 0, G_OPTION_ARG_FILENAME, &lock_path,
      "REF was built from LOCKFILE: each package also names its apt source and file, and a "
      "local .deb is told from an archive's", "LOCKFILE" },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format,
      "\"spdx\" (SPDX 2.3, the default) or \"cyclonedx\" (CycloneDX 1.5), both JSON", "FORMAT" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      "Write it to FILE (replaced whole, or left as it was on error) instead of standard output",
      "FILE" },
    { NULL }
  };
  if (!cmd_parse (inv, "(LOCKFILE | REF [--lockfile LOCKFILE]) [--format spdx|cyclonedx] [-o FILE]",
                  "Write the software bill of materials of an image: every package with its\n"
                  "version, architecture, source package, purl, the .deb's SHA256 and the\n"
                  "licenses of its machine-readable copyright file.  REF is a built image;\n"
                  "a LOCKFILE's packages are read from their trees in the repository, so it\n"
                  "must have been built there.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 2)
    return cmd_usage_error (inv, error, argc < 2 ? "expected LOCKFILE or REF" : "expected one LOCKFILE or REF");
  if (format == NULL)
    format = g_strdup ("spdx");
  if (!g_str_equal (format, "spdx") && !g_str_equal (format, "cyclonedx"))
    return cmd_usage_error (inv, error, "--format must be \"spdx\" or \"cyclonedx\"");

  g_autoptr(OstreeRepo) repo = cmd_open_repo (inv, cancellable, error);
  if (repo == NULL)
    return FALSE;
  g_autoptr(Sbom) sbom = sbom_for (repo, argv[1], lock_path, cancellable, error);
  if (sbom == NULL)
    return FALSE;
  g_autofree char *text = sbom_to_json (sbom, format);
  if (output == NULL)
    {
      fputs (text, stdout);
      return fflush (stdout) == 0 || util_fail (error, "writing standard output failed");
    }
  g_autoptr(GError) local_error = NULL;
  if (!g_file_set_contents (output, text, -1, &local_error))
    return util_fail (error, "%s: %s", output, local_error->message);
  return TRUE;
}
