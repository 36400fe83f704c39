/* treerules.c — the Ninja rules of the tree commands, and derived ref names. */
#include "config.h"

#include <string.h>

#include "graph/treerules.h"
#include "base/util.h"
#include "store/repo.h"

/* The rules themselves: each command's words from the edge's variables.
 * Standard output (the commit) goes away: ninja's progress line says what
 * ran, and errors stay on standard error. */
static const char rules[] =
  "rule a2o_init\n"
  "  command = $a2o --repo $repo init\n"
  "  description = init $repo\n"
  "  restat = 1\n"
  "\n"
  "# trees = IN... (later on top); combine_order = --later-wins lets a later\n"
  "# tree replace a clashing path instead of failing.\n"
  "rule a2o_combine\n"
  "  command = $a2o --repo $repo combine --ref $ref $combine_order $trees > /dev/null\n"
  "  description = combine $ref\n"
  "  restat = 1\n"
  "\n"
  "# base = BASE, trees = TREE... put over it.\n"
  "rule a2o_overlay\n"
  "  command = $a2o --repo $repo overlay --ref $ref $base $trees > /dev/null\n"
  "  description = overlay $ref\n"
  "  restat = 1\n"
  "\n"
  "# tree = IN, path = PATH: the directory PATH of IN.\n"
  "rule a2o_subtree\n"
  "  command = $a2o --repo $repo subtree --ref $ref $tree $path > /dev/null\n"
  "  description = subtree $ref\n"
  "  restat = 1\n"
  "\n"
  "# tree = IN, path = PATH, from = FROM: FROM placed at PATH in IN.\n"
  "rule a2o_graft\n"
  "  command = $a2o --repo $repo graft --ref $ref $tree $path $from > /dev/null\n"
  "  description = graft $ref\n"
  "  restat = 1\n"
  "\n"
  "# tree = IN, paths = PATH...; flags = --mode MODE, --owner UID:GID, -p.\n"
  "rule a2o_mkdir\n"
  "  command = $a2o --repo $repo mkdir --ref $ref $flags $tree $paths > /dev/null\n"
  "  description = mkdir $ref\n"
  "  restat = 1\n"
  "\n"
  "# tree = IN, target = TARGET, path = LINKPATH.\n"
  "rule a2o_ln\n"
  "  command = $a2o --repo $repo ln --ref $ref $tree $target $path > /dev/null\n"
  "  description = ln $ref\n"
  "  restat = 1\n"
  "\n"
  "# tree = IN, src = SRC, dst = DST.\n"
  "rule a2o_mv\n"
  "  command = $a2o --repo $repo mv --ref $ref $tree $src $dst > /dev/null\n"
  "  description = mv $ref\n"
  "  restat = 1\n"
  "\n"
  "# tree = IN, paths = PATH...; flags = -r, -f.\n"
  "rule a2o_rm\n"
  "  command = $a2o --repo $repo rm --ref $ref $flags $tree $paths > /dev/null\n"
  "  description = rm $ref\n"
  "  restat = 1\n"
  "\n"
  "# The edge's one input is a tar archive (any compression).\n"
  "rule a2o_import\n"
  "  command = $a2o --repo $repo import --ref $ref --tar $in > /dev/null\n"
  "  description = import $ref\n"
  "  restat = 1\n"
  "\n"
  "# dir = DIR; a directory's mtime misses most changes under it, so list\n"
  "# its files as the edge's inputs.\n"
  "rule a2o_import_dir\n"
  "  command = $a2o --repo $repo import --ref $ref $dir > /dev/null\n"
  "  description = import $ref\n"
  "  restat = 1\n"
  "\n"
  "# tree = IN, cmd = COMMAND [ARG...]; chroot = --chroot (IN is /; else IN\n"
  "# is /work over the host's /usr), capture = --capture-subdir PATH (OUT is\n"
  "# that directory), binds = --bind SRC DEST..., flags = other options of\n"
  "# mod (--ro-bind, --setenv, --network, limits).\n"
  "rule a2o_mod\n"
  "  command = $a2o --repo $repo mod --ref $ref $tree $chroot $capture $binds $flags "
  "-- $cmd > /dev/null\n"
  "  description = mod $ref\n"
  "  restat = 1\n";

char *
treerules_text (const char *a2o)
{
  g_autoptr(GString) text = g_string_new (
      "# Ninja rules for apt2ostree's tree commands, written by\n"
      "# \"apt2ostree ninja --rules\".  Include it (\"include\", not \"subninja\":\n"
      "# rules are seen only in the file that includes them) after setting\n"
      "#   repo = PATH   the repository (\"apt2ostree init\" makes it)\n"
      "# Each edge writes one ref: its output is the ref file\n"
      "# $repo/refs/heads/REF, its inputs the ref files of the trees it reads,\n"
      "# and its variables name them: ref = REF, and those of its rule below.\n"
      "# A command leaves a ref file alone when the tree would not change, so\n"
      "# restat stops the work that depends on it.  See apt2ostree(1),\n"
      "# \"ninja --rules\", and \"ref-name\" for trees that need no name.\n"
      "\n"
      "a2o = ");
  /* A word for the shell, then "$" doubled for ninja. */
  g_autofree char *quoted = g_shell_quote (a2o);
  for (const char *p = quoted; *p != '\0'; p++)
    {
      if (*p == '$')
        g_string_append_c (text, '$');
      g_string_append_c (text, *p);
    }
  g_string_append (text, "\n\n");
  g_string_append (text, rules);
  return g_string_free (g_steal_pointer (&text), FALSE);
}

char *
treerules_derived_ref (const char *operation, const char *const *args, guint n, GError **error)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_checksum_update (sum, (const guchar *) operation, strlen (operation) + 1);
  for (guint i = 0; i < n; i++)
    g_checksum_update (sum, (const guchar *) args[i], strlen (args[i]) + 1);
  g_autofree char *hex = g_strndup (g_checksum_get_string (sum), 20);
  g_autofree char *ref = g_strconcat (TREERULES_DERIVED_PREFIX, operation, "-", hex, NULL);
  if (*operation == '\0' || strchr (operation, '/') != NULL || !repo_check_ref_name (ref, NULL))
    return util_fail (error, "\"%s\" cannot be part of a ref name: use the command's name, "
                      "such as combine or mod", operation), NULL;
  return g_steal_pointer (&ref);
}
