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

/* A command line whose arguments after "--" are a command's own (mod,
 * run): the index of "--" in ARGV (ARGC arguments), or -1; *OUT_OPT_ARGV
 * (g_free() it, not its strings) the arguments before it, NULL-terminated,
 * *OUT_OPT_ARGC their count. */
int cmd_split_at_command (int argc, char **argv, int *out_opt_argc, char ***out_opt_argv);

/* An option that takes two arguments (GOption takes one), e.g. --bind SRC
 * DEST: NAME ("--bind") and the values given, two per use. */
typedef struct {
  const char *name;
  GPtrArray *values;
} CmdPairOption;

/* Take the N_PAIRS options PAIRS out of ARGV (*ARGC arguments, both
 * updated) before GOption parses the rest; one without its two arguments
 * is a usage error. */
gboolean cmd_take_pairs (CmdInvocation *inv, int *argc, char **argv, CmdPairOption *pairs,
                         guint n_pairs, GError **error);

/* The G_OPTION_ARG_CALLBACK of a pair option's entry in the option table
 * (for --help; cmd_take_pairs() took every use before): an error. */
gboolean cmd_pair_option_callback (const char *option_name, const char *value, gpointer data,
                                   GError **error);

/* The repository's path: --repo, else $APT2OSTREE_REPO, else build/ostree. */
const char *cmd_repo_path (const CmdInvocation *inv);

/* The sandbox's limits by default (man page, "SANDBOX LIMITS"). */
#define RUNLIMITS_DEFAULT_TIMEOUT "3600"       /* seconds: an arm64 stage 2 under qemu
                                                * takes minutes, a desktop one here 25 s */
#define RUNLIMITS_DEFAULT_MEMORY "50%"         /* of the machine's RAM */
#define RUNLIMITS_DEFAULT_MAX_PROCESSES "4096"

/* The options of every command that runs a sandbox, or has one run (their values are
 * char *, for runlimits_init() of sandbox/runlimits.h). */
#define CMDLINE_LIMIT_OPTION_ENTRIES(timeout, memory, processes)                                   \
  { "timeout", 0, 0, G_OPTION_ARG_STRING, &(timeout),                                         \
    "Kill the sandbox when its command runs longer (default " RUNLIMITS_DEFAULT_TIMEOUT        \
    ", or $APT2OSTREE_TIMEOUT; 0: none)", "SECONDS" },                                          \
  { "memory-limit", 0, 0, G_OPTION_ARG_STRING, &(memory),                                     \
    "Memory the sandbox may use, e.g. 4G or 25% (default " RUNLIMITS_DEFAULT_MEMORY           \
    " of RAM, or $APT2OSTREE_MEMORY_LIMIT; 0: none)", "SIZE" },                                 \
  { "max-processes", 0, 0, G_OPTION_ARG_STRING, &(processes),                                 \
    "Processes the sandbox may run at once (default " RUNLIMITS_DEFAULT_MAX_PROCESSES          \
    ", or $APT2OSTREE_MAX_PROCESSES; 0: none)", "N" }

G_END_DECLS
