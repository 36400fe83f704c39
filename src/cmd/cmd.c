/* cmd.c — option parsing and repository opening shared by the commands. */
#include "config.h"

#include <stdio.h>

#include "apt/proxy.h"
#include "apt/tls.h"
#include "cmd/cmd.h"
#include "store/repo.h"
#include "store/tree.h"
#include "base/util.h"


OstreeRepo *
cmd_open_repo (CmdInvocation *inv, GCancellable *cancellable, GError **error)
{
  return repo_open (cmd_repo_path (inv), cancellable, error);
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

/* "proxy URL (WHY)" or "direct (WHY)", and for an https URI with a CA
 * file of its own "; CA file PATH (WHY)". */
static char *
describe_network (const char *uri, GError **error)
{
  g_autofree char *how = proxy_describe (uri, error);
  g_autofree char *ca_path = NULL;
  g_autofree char *ca_why = NULL;
  if (how == NULL || !tls_cainfo_for_url (uri, &ca_path, &ca_why, error))
    return NULL;
  if (ca_path == NULL)
    return g_steal_pointer (&how);
  return g_strdup_printf ("%s; CA file %s (%s)", how, ca_path, ca_why);
}

gboolean
cmd_check_network (CmdInvocation *inv, SourcesList *const *lists, guint n, gboolean verbose,
                   GError **error)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint l = 0; l < n; l++)
    for (guint i = 0; i < lists[l]->sources->len; i++)
      {
        Source *s = lists[l]->sources->pdata[i];
        for (char **uri = s->uris; uri != NULL && *uri != NULL; uri++)
          {
            g_autofree char *line = g_strdup_printf ("source %s: %s", s->name, *uri);
            if (!g_hash_table_add (seen, g_strdup (line)))
              continue;
            g_autofree char *how = describe_network (*uri, error);
            if (how == NULL)
              return FALSE;
            if (verbose)
              g_printerr ("apt2ostree %s: %s: %s\n", inv->name, line, how);
          }
      }
  return TRUE;
}
