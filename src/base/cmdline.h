/* cmdline.h — what every command's command line shares: the invocation,
 * option parsing with the global --repo, usage errors.  GLib alone: the
 * lean unpack-deb path (cmd/main.c) parses with it too. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  const char *name;       /* the command, e.g. "combine" */
  const char *repo_path;  /* --repo given before or after the command, or NULL */
} CmdInvocation;

/* The global options of "apt2ostree [--repo DIR] COMMAND ...": --repo DIR
 * or --repo=DIR, into INV.  Returns the index in ARGV of the first other
 * argument (ARGC when there is none). */
int cmd_parse_global (int argc, char **argv, CmdInvocation *inv);

/* Parse ARGV with ENTRIES plus --repo.  PARAMETERS is the usage line after
 * "apt2ostree COMMAND", e.g. "--ref OUT IN...". */
gboolean cmd_parse (CmdInvocation *inv, const char *parameters, const char *summary,
                    const GOptionEntry *entries, int *argc, char ***argv, GError **error);

/* A usage error: "expected …; see apt2ostree COMMAND --help". */
gboolean cmd_usage_error (CmdInvocation *inv, GError **error, const char *format, ...)
    G_GNUC_PRINTF (3, 4);

/* The repository's path: --repo, else $APT2OSTREE_REPO, else build/ostree. */
const char *cmd_repo_path (const CmdInvocation *inv);

G_END_DECLS
