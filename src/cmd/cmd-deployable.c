/* apt2ostree deployable — a configured image rearranged so that "ostree
 * admin deploy" accepts it (see image/deployable.h), metadata only. */
#include "config.h"

#include "cmd/cmd.h"
#include "image/deployable.h"

gboolean
cmd_deployable (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                GError **error)
{
  g_autofree char *out_ref = NULL;
  const GOptionEntry entries[] = {
    { "ref", 0, 0, G_OPTION_ARG_STRING, &out_ref, "Write the result to this ref", "OUT" },
    { NULL }
  };
  if (!cmd_parse (inv, "--ref OUT IN",
                  "Make the configured image IN an OSTree deployment: kernel, initramfs and\n"
                  "device trees in /usr/lib/modules/KVER, /etc in /usr/etc, the dpkg and\n"
                  "debconf databases in /usr/lib/sysimage (linked from /var at boot), the rest\n"
                  "of /var made at boot entry by entry when missing, /home, /root, /opt, /srv,\n"
                  "/mnt as links into /var.\n"
                  "IN must have ostree-boot and dracut installed.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 2)
    return cmd_usage_error (inv, error, "expected one IN");

  g_auto(CmdEdit) edit = { NULL };
  if (!cmd_edit_begin (inv, out_ref, argv[1], &edit, cancellable, error))
    return FALSE;
  if (!deployable_apply (edit.repo, repo_txn_sink (edit.txn), edit.tree, edit.in->name,
                         cancellable, error))
    return FALSE;
  return cmd_edit_finish (inv, &edit, out_ref, NULL, cancellable, error);
}
