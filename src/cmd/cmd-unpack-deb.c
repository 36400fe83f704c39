/* apt2ostree unpack-deb — one .deb (a file or a URL) into one ref, or with
 * --batch many, each into its own ref, in one transaction: unpack.c's run
 * (deb/ostreeunpack.h: the lean front's path first, libostree for what it
 * defers).  (The lean front, main.c, runs that path without loading this
 * module when it can.) */
#include "config.h"

#include "cmd/cmd.h"
#include "deb/ostreeunpack.h"
#include "deb/unpack.h"

gboolean
cmd_unpack_deb (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                GError **error)
{
  g_auto(UnpackArgs) args = { NULL };
  if (!unpack_args_parse (inv, argc, argv, &args, error))
    return FALSE;

  g_autoptr(OstreeRepo) repo = cmd_open_repo (inv, cancellable, error);
  if (repo == NULL)
    return FALSE;
  return ostreeunpack_run (repo, &args, error);
}
