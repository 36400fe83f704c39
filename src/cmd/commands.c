/* commands.c — every command, in the commands module that main.c loads
 * when it does not run unpack-deb itself: "apt2ostree [--repo DIR] COMMAND
 * [ARGS]": find the command, run it, and report its error on one line. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/commands.h"
#include "base/progress.h"

/* In the order a user meets them: images, their steps, then tree tools. */
static const CmdEntry commands[] = {
  { "init", cmd_init, "create an OSTree repository" },
  { "lock", cmd_lock, "resolve a package list against signed sources into a lockfile" },
  { "build", cmd_build, "build a lockfile's image (writes the Ninja file and runs ninja)" },
  { "ninja", cmd_ninja, "write the Ninja rules that build a lockfile's image" },
  { "prune", cmd_prune, "delete the trees builds wrote that none of the given lockfiles needs" },
  { "unpack-deb", cmd_unpack_deb, "unpack one .deb (file or URL) into a tree" },
  { "fetch-service", cmd_fetch_service, "download .debs for unpack-deb over kept connections (started by it)" },
  { "stage1", cmd_stage1, "combine package trees into one unpacked dpkg system" },
  { "configure", cmd_configure, "stage 2: dpkg --configure -a over a stage-1 tree, in a sandbox" },
  { "run", cmd_run, "a shell or a command inside an image, in the stage-2 sandbox (nothing kept unless --commit)" },
  { "mod", cmd_mod, "run a command over a tree in a sandbox, commit what it changed" },
  { "import", cmd_import, "make a directory or a tar archive a tree" },
  { "export", cmd_export, "copy a tree out: a directory, a tar, an OCI image, squashfs or ext4" },
  { "deployable", cmd_deployable, "make a configured image an OSTree deployment (kernel, /usr/etc, /var)" },
  { "disk-image", cmd_disk_image, "make a deployable image a bootable raw disk (GPT, GRUB, /boot, sysroot)" },
  { "publish", cmd_publish, "copy refs into an archive repository a web server can serve" },
  { "cache-pull", cmd_cache_pull, "pull refs from a published build cache when it has them" },
  { "diff", cmd_diff, "what changed between two images (lockfiles or refs), package by package" },
  { "sbom", cmd_sbom, "the bill of materials of an image or a lockfile (SPDX, CycloneDX)" },
  { "combine", cmd_combine, "union of trees, later trees on top (metadata only)" },
  { "overlay", cmd_overlay, "put trees over a base tree, as files are copied into it (metadata only)" },
  { "mkdir", cmd_mkdir, "add directories to a tree (metadata only)" },
  { "ln", cmd_ln, "add a symlink to a tree (metadata only)" },
  { "mv", cmd_mv, "move a path inside a tree (metadata only)" },
  { "rm", cmd_rm, "remove paths from a tree (metadata only)" },
  { "subtree", cmd_subtree, "make a directory of a tree the root of a new tree" },
  { "graft", cmd_graft, "place a tree at a path inside another tree" },
  { "ref-name", cmd_ref_name, "the ref to name a derived tree with, from its operation and inputs" },
  { NULL }
};

static void
print_usage (FILE *out)
{
  fprintf (out, "Usage: apt2ostree [--repo DIR] COMMAND [ARGS]\n\n"
                "Build Debian and Ubuntu root filesystems as OSTree trees.\n\nCommands:\n");
  for (const CmdEntry *c = commands; c->name != NULL; c++)
    fprintf (out, "  %-12s %s\n", c->name, c->summary);
  fprintf (out, "\nRepository: --repo DIR, else $APT2OSTREE_REPO, else build/ostree.\n"
                "\"apt2ostree COMMAND --help\" describes each command; see also apt2ostree(1).\n");
}

int
apt2ostree_commands_main (int argc, char **argv)
{
  CmdInvocation inv = { NULL, NULL };
  int i = cmd_parse_global (argc, argv, &inv);
  if (i < argc && (g_str_equal (argv[i], "--help") || g_str_equal (argv[i], "-h")))
    {
      print_usage (stdout);
      return 0;
    }
  if (i < argc && g_str_equal (argv[i], "--version"))
    {
      printf ("apt2ostree %s\n", PACKAGE_VERSION);
      return 0;
    }
  if (i < argc && argv[i][0] == '-')
    {
      fprintf (stderr, "apt2ostree: unknown option \"%s\"; see \"apt2ostree --help\"\n", argv[i]);
      return 2;
    }
  if (i == argc)
    {
      print_usage (stderr);
      return 2;
    }

  const CmdEntry *command = NULL;
  for (const CmdEntry *c = commands; c->name != NULL; c++)
    if (g_str_equal (c->name, argv[i]))
      command = c;
  if (command == NULL)
    {
      fprintf (stderr, "apt2ostree: unknown command \"%s\"; see \"apt2ostree --help\"\n", argv[i]);
      return 2;
    }

  inv.name = command->name;
  progress_say_command (argc - i, argv + i);
  g_autoptr(GError) error = NULL;
  if (!command->func (argc - i, argv + i, &inv, NULL, &error))
    {
      g_assert (error != NULL);
      g_strdelimit (error->message, "\n", ' ');  /* one line, always */
      fprintf (stderr, "apt2ostree %s: error: %s\n", command->name, error->message);
      return error->domain == G_OPTION_ERROR ? 2 : 1;
    }
  return 0;
}
