/* cmd.h — what every src/cmd-*.c shares: the invocation, option parsing
 * with the global --repo, and the table of commands. */
#pragma once

#include <ostree.h>

#include "base/cmdline.h"
#include "store/repo.h"

G_BEGIN_DECLS

typedef gboolean (*CmdFunc) (int argc, char **argv, CmdInvocation *inv,
                             GCancellable *cancellable, GError **error);

typedef struct {
  const char *name;
  CmdFunc func;
  const char *summary;
} CmdEntry;

/* The repository --repo names (or the default), which must exist. */
OstreeRepo *cmd_open_repo (CmdInvocation *inv, GCancellable *cancellable, GError **error);

/* The revision NAME (a ref or commit) resolved in the repository, which
 * cmd_open_repo() opens into *OUT_REPO. */
RepoRev *cmd_open_rev (CmdInvocation *inv, const char *name, OstreeRepo **out_repo,
                       GCancellable *cancellable, GError **error);

/* A command that writes one tree to --ref OUT: the repository open, IN
 * resolved and loaded (when given), a write transaction begun. */
typedef struct {
  OstreeRepo *repo;
  RepoRev *in;
  RepoTxn *txn;
  OstreeMutableTree *tree;
} CmdEdit;

gboolean cmd_edit_begin (CmdInvocation *inv, const char *out_ref, const char *in, CmdEdit *edit,
                         GCancellable *cancellable, GError **error);
/* cmd_edit_begin for a command that takes the N trees NAMES: returns them
 * resolved, in order (RepoRev*). */
GPtrArray *cmd_edit_begin_with_trees (CmdInvocation *inv, const char *out_ref,
                                      const char *const *names, int n, CmdEdit *edit,
                                      GCancellable *cancellable, GError **error);
/* Commit the tree to OUT_REF (with METADATA, a floating a{sv}, or NULL)
 * and print the commit checksum. */
gboolean cmd_edit_finish (CmdInvocation *inv, CmdEdit *edit, const char *out_ref,
                          GVariant *metadata, GCancellable *cancellable, GError **error);
void cmd_edit_clear (CmdEdit *edit);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (CmdEdit, cmd_edit_clear)

/* The commands (see CmdFunc), one per cmd-*.c. */
gboolean cmd_init (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                   GError **error);
gboolean cmd_import (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                     GError **error);
gboolean cmd_export (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                     GError **error);
gboolean cmd_combine (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                      GError **error);
gboolean cmd_mkdir (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                    GError **error);
gboolean cmd_ln (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                 GError **error);
gboolean cmd_mv (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                 GError **error);
gboolean cmd_rm (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                 GError **error);
gboolean cmd_subtree (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                      GError **error);
gboolean cmd_graft (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                    GError **error);
gboolean cmd_stage1 (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                     GError **error);
gboolean cmd_configure (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                        GError **error);
gboolean cmd_ninja (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                    GError **error);
gboolean cmd_build (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                    GError **error);
gboolean cmd_fetch_service (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                            GError **error);
gboolean cmd_unpack_deb (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                         GError **error);
gboolean cmd_lock (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                   GError **error);
gboolean cmd_run (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                  GError **error);
gboolean cmd_mod (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                  GError **error);
gboolean cmd_disk_image (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                         GError **error);
gboolean cmd_deployable (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                         GError **error);
gboolean cmd_publish (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                      GError **error);
gboolean cmd_cache_pull (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                         GError **error);
gboolean cmd_diff (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                   GError **error);
gboolean cmd_sbom (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                   GError **error);
gboolean cmd_overlay (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                      GError **error);
gboolean cmd_ref_name (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                       GError **error);
gboolean cmd_prune (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                    GError **error);

G_END_DECLS
