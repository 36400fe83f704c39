/* cmd.c — option parsing and repository opening shared by the commands. */
#include "config.h"

#include <stdio.h>

#include "cmd/cmd.h"
#include "store/repo.h"
#include "store/tree.h"
#include "base/util.h"


OstreeRepo *
cmd_open_repo (CmdInvocation *inv, GCancellable *cancellable, GError **error)
{
  return repo_open (cmd_repo_path (inv), cancellable, error);
}

RepoRev *
cmd_open_rev (CmdInvocation *inv, const char *name, OstreeRepo **out_repo,
              GCancellable *cancellable, GError **error)
{
  *out_repo = cmd_open_repo (inv, cancellable, error);
  return *out_repo != NULL ? repo_resolve (*out_repo, name, error) : NULL;
}


gboolean
cmd_edit_begin (CmdInvocation *inv, const char *out_ref, const char *in, CmdEdit *edit,
                GCancellable *cancellable, GError **error)
{
  if (out_ref == NULL)
    return cmd_usage_error (inv, error, "--ref OUT is required");
  if (!repo_check_ref_name (out_ref, error))
    return FALSE;

  edit->repo = cmd_open_repo (inv, cancellable, error);
  if (edit->repo == NULL)
    return FALSE;
  if (in != NULL)
    {
      edit->in = repo_resolve (edit->repo, in, error);
      if (edit->in == NULL)
        return FALSE;
      edit->tree = tree_load (edit->repo, edit->in);
    }
  edit->txn = repo_txn_begin (edit->repo, cancellable, error);
  return edit->txn != NULL;
}

GPtrArray *
cmd_edit_begin_with_trees (CmdInvocation *inv, const char *out_ref, const char *const *names,
                           int n, CmdEdit *edit, GCancellable *cancellable, GError **error)
{
  if (!cmd_edit_begin (inv, out_ref, NULL, edit, cancellable, error))
    return NULL;
  return repo_resolve_all (edit->repo, names, n, error);
}

gboolean
cmd_edit_finish (CmdInvocation *inv, CmdEdit *edit, const char *out_ref, GVariant *metadata,
                 GCancellable *cancellable, GError **error)
{
  g_autofree char *commit = NULL;
  if (!repo_txn_write_commit (edit->txn, edit->tree, out_ref, inv->name, metadata, &commit,
                              cancellable, error)
      || !repo_txn_finish (edit->txn, cancellable, error))
    return FALSE;
  printf ("%s\n", commit);
  return TRUE;
}

void
cmd_edit_clear (CmdEdit *edit)
{
  g_clear_pointer (&edit->txn, repo_txn_free);
  g_clear_object (&edit->tree);
  g_clear_pointer (&edit->in, repo_rev_free);
  g_clear_object (&edit->repo);
}
