/* apt2ostree import — a directory or a tar archive becomes a tree under a ref. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "store/dirimport.h"
#include "store/tarball.h"
#include "cmd/cmd.h"
#include "store/repo.h"
#include "base/util.h"

gboolean
cmd_import (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
            GError **error)
{
  g_autofree char *ref = NULL;
  g_autofree char *tar = NULL;
  const GOptionEntry entries[] = {
    { "ref", 0, 0, G_OPTION_ARG_STRING, &ref, "Write the tree to this ref", "REF" },
    { "tar", 0, 0, G_OPTION_ARG_FILENAME, &tar,
      "Import this tar archive (any compression; \"-\" reads standard input)", "FILE" },
    { NULL }
  };
  if (!cmd_parse (inv, "--ref REF (DIR | --tar FILE)",
                  "Make a directory or a tar archive a tree, keeping owners, modes (setuid,\n"
                  "sticky...), symlinks and extended attributes.  Device nodes, fifos and\n"
                  "sockets cannot be stored in OSTree: they are left out with a warning.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (ref == NULL)
    return cmd_usage_error (inv, error, "--ref REF is required");
  if (tar != NULL && argc > 1)
    return cmd_usage_error (inv, error, "give a directory or --tar FILE, not both");
  if (tar == NULL && argc != 2)
    return cmd_usage_error (inv, error, argc < 2 ? "expected a directory or --tar FILE"
                                                 : "expected one directory");
  const char *dir = tar == NULL ? argv[1] : NULL;

  if (!repo_check_ref_name (ref, error))
    return FALSE;
  struct stat st;
  if (dir != NULL && stat (dir, &st) < 0)
    return util_fail (error, "%s: cannot import: %s", dir, g_strerror (errno));
  if (dir != NULL && !S_ISDIR (st.st_mode))
    return util_fail (error, "%s: not a directory (use --tar FILE for an archive)", dir);

  g_autoptr(OstreeRepo) repo = cmd_open_repo (inv, cancellable, error);
  if (repo == NULL)
    return FALSE;
  g_autoptr(RepoTxn) txn = repo_txn_begin (repo, cancellable, error);
  if (txn == NULL)
    return FALSE;

  g_autoptr(OstreeMutableTree) mtree = ostree_mutable_tree_new ();
  g_autoptr(GPtrArray) skipped = NULL;
  if (tar != NULL)
    {
      if (!tarball_read_to_mtree (repo_txn_sink (txn), tar, mtree, &skipped, cancellable, error))
        return FALSE;
    }
  else
    {
      skipped = g_ptr_array_new_with_free_func (g_free);
      if (!dirimport_to_mtree (repo_txn_sink (txn), dir, mtree, skipped, cancellable, error))
        return FALSE;
    }

  g_autofree char *commit = NULL;
  if (!repo_txn_write_commit (txn, mtree, ref, inv->name, NULL, &commit, cancellable, error)
      || !repo_txn_finish (txn, cancellable, error))
    return FALSE;
  for (guint i = 0; i < skipped->len; i++)
    fprintf (stderr, "apt2ostree import: warning: %s: left out %s: OSTree cannot store "
             "device nodes, fifos or sockets\n", tar != NULL ? tar : dir,
             (const char *) skipped->pdata[i]);
  printf ("%s\n", commit);
  return TRUE;
}
