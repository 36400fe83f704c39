/* apt2ostree ref-name — the ref a generator names an intermediate tree
 * with, from its operation and inputs. */
#include "config.h"

#include <stdio.h>

#include "cmd/cmd.h"
#include "graph/treerules.h"

gboolean
cmd_ref_name (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
              GError **error)
{
  /* The words after OPERATION are taken as they are, options of the
   * operation included ("mod IN --chroot -- make"); only what comes before
   * OPERATION is parsed (--help). */
  const GOptionEntry entries[] = { { NULL } };
  if ((argc < 2 || argv[1][0] == '-')
      && !cmd_parse (inv, "OPERATION [ARG...]",
                  "Print the ref for the tree OPERATION makes from ARG... (the words the\n"
                  "command takes after --ref OUT, e.g. \"combine A B\"): \"derived/OPERATION-\"\n"
                  "and the first 20 hex digits of the SHA-256 of OPERATION and each ARG, each\n"
                  "followed by a NUL byte.  The same operation over the same inputs gives the\n"
                  "same name, so a generator passes trees around like variables; \"prune\n"
                  "--graph\" deletes the derived refs a build no longer names.  The words after\n"
                  "OPERATION are taken as they are, options included.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc < 2)
    return cmd_usage_error (inv, error, "expected OPERATION");

  g_autofree char *ref = treerules_derived_ref (argv[1], (const char *const *) argv + 2,
                                                argc - 2, error);
  if (ref == NULL)
    return FALSE;
  printf ("%s\n", ref);
  return TRUE;
}
