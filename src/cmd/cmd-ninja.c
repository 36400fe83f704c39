/* apt2ostree ninja — write the Ninja file for one or more images, or
 * (--rules) the rules of the tree commands for a project's own file. */
#include "config.h"

#include "graph/build.h"
#include "cmd/cmd.h"
#include "graph/ninja.h"
#include "graph/treerules.h"
#include "sandbox/runlimits.h"

static gboolean
write_rules (CmdInvocation *inv, int argc, const char *output, GError **error)
{
  if (argc > 1)
    return cmd_usage_error (inv, error, "--rules takes no LOCKFILE");
  if (output == NULL)
    return cmd_usage_error (inv, error, "-o FILE.ninja is required");
  g_autofree char *self = g_file_read_link ("/proc/self/exe", error);
  if (self == NULL)
    return FALSE;
  g_autofree char *text = treerules_text (self);
  return ninja_write_if_changed (output, text, error);
}

gboolean
cmd_ninja (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
           GError **error)
{
  g_auto(BuildArgs) args = BUILD_ARGS_INIT;
  g_autofree char *output = NULL;
  gboolean subninja = FALSE;
  gboolean rules = FALSE;
  const GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "The Ninja file to write (required)", "FILE" },
    { "subninja", 0, 0, G_OPTION_ARG_NONE, &subninja,
      "For inclusion into a larger build: leave out the global \"update-lockfiles\" target", NULL },
    { "rules", 0, 0, G_OPTION_ARG_NONE, &rules,
      "Write the rules of the tree commands (a2o_combine, a2o_mod...) for a project's "
      "own Ninja file to include, instead of an image's; takes no LOCKFILE", NULL },
    BUILD_OPTION_ENTRIES (args),
    { NULL }
  };
  if (!cmd_parse (inv, "LOCKFILE[=REF]... -o FILE.ninja | --rules -o FILE.ninja",
                  "Write the Ninja rules that build the image of each LOCKFILE, into one\n"
                  "repository: a package that several images use is unpacked once.  REF names\n"
                  "the image (default: the lockfile's name without .lock.json).  Paths in the\n"
                  "file are relative to the directory ninja runs in; include it from a larger\n"
                  "build with \"subninja\" (one generated file per repository).",
                  entries, &argc, &argv, error))
    return FALSE;
  if (rules)
    return write_rules (inv, argc, output, error);
  if (argc < 2)
    return cmd_usage_error (inv, error, "expected one LOCKFILE or more");
  if (output == NULL)
    return cmd_usage_error (inv, error, "-o FILE.ninja is required");

  args.repo = inv->repo_path;
  RunLimits limits;   /* checked now; stage 2 reads them again */
  if (!runlimits_init (&limits, args.timeout, args.memory_limit, args.max_processes, error)
      || !build_args_complete (&args, inv, argc - 1, argv + 1, error))
    return FALSE;
  return build_write_ninja (&args, output, subninja, error);
}
