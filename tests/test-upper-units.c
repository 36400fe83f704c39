/* Unit tests for folding an overlay's upper directory into a tree, for
 * what the sandbox's own overlay never produces but bubblewrap's may:
 * directories renamed with redirect_dir=on (trusted.overlay.redirect, a
 * name in the same directory or an absolute path).  Needs root: it mounts
 * overlays, in a mount namespace of its own. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sandbox/upper.h"
#include "store/content.h"

static char *
run (const char *dir, const char *command)
{
  g_autofree char *full = g_strdup_printf ("cd '%s' && %s", dir, command);
  const char *argv[] = { "/bin/sh", "-c", full, NULL };
  char *out = NULL;
  int status;
  g_autoptr(GError) error = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                               NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return out;
}

static void
test_redirected_directories (void)
{
  if (getuid () != 0)
    {
      g_test_skip ("needs root to mount an overlay with redirect_dir=on");
      return;
    }
  g_autofree char *tmp = g_dir_make_tmp ("a2o-upper-XXXXXX", NULL);
  g_free (run (tmp, "mkdir -p tree/d/sub tree/e lower upper work merged && echo deep > tree/d/sub/f"
                    " && echo g > tree/e/g && ostree --repo=repo init --mode=bare"
                    " && ostree --repo=repo commit -b in --tree=dir=tree > /dev/null"
                    " && ostree --repo=repo checkout -H in co && rmdir lower && mv co lower"));

  g_autofree char *lower = g_build_filename (tmp, "lower", NULL);
  g_autofree char *upper = g_build_filename (tmp, "upper", NULL);
  g_autofree char *merged = g_build_filename (tmp, "merged", NULL);
  g_autofree char *opts = g_strdup_printf ("lowerdir=%s,upperdir=%s/upper,workdir=%s/work,"
                                           "redirect_dir=on", lower, tmp, tmp);
  if (mount ("overlay", merged, "overlay", 0, opts) < 0)
    {
      g_test_skip ("this kernel does not mount an overlay with redirect_dir=on");
      return;
    }
  g_free (run (merged, "mv d renamed && mkdir x && mv e x/e2 && echo new > x/e2/h"));
  g_assert_cmpint (umount (merged), ==, 0);
  g_autofree char *renamed = g_build_filename (upper, "renamed", NULL);
  g_assert_cmpint (lgetxattr (renamed, "trusted.overlay.redirect", NULL, 0), >, 0);

  g_autofree char *repo_path = g_build_filename (tmp, "repo", NULL);
  g_autoptr(GFile) repo_file = g_file_new_for_path (repo_path);
  g_autoptr(OstreeRepo) repo = ostree_repo_new (repo_file);
  g_autoptr(GError) error = NULL;
  g_assert_true (ostree_repo_open (repo, NULL, &error));
  g_autoptr(GFile) in_root = NULL;
  g_assert_true (ostree_repo_read_commit (repo, "in", &in_root, NULL, NULL, &error));
  OstreeRepoFile *rf = OSTREE_REPO_FILE (in_root);
  g_assert_true (ostree_repo_file_ensure_resolved (rf, &error));
  g_autoptr(OstreeMutableTree) root = ostree_mutable_tree_new_from_checksum (
      repo, ostree_repo_file_tree_get_contents_checksum (rf),
      ostree_repo_file_tree_get_metadata_checksum (rf));

  g_assert_true (ostree_repo_prepare_transaction (repo, NULL, NULL, &error));
  UpperOptions options = { 0, };
  g_autofree StoreSink *sink = content_ostree_sink_new (repo, NULL);
  g_assert_true (upper_apply (repo, sink, root, upper, &options, NULL, &error));
  g_assert_no_error (error);
  g_autoptr(GFile) out_root = NULL;
  g_assert_true (ostree_repo_write_mtree (repo, root, &out_root, NULL, &error));
  g_autofree char *out_csum = NULL;
  g_assert_true (ostree_repo_write_commit (repo, NULL, "t", NULL, NULL, OSTREE_REPO_FILE (out_root),
                                           &out_csum, NULL, &error));
  ostree_repo_transaction_set_ref (repo, NULL, "out", out_csum);
  g_assert_true (ostree_repo_commit_transaction (repo, NULL, NULL, &error));

  g_autofree char *listing = run (tmp, "ostree --repo=repo ls -R out | awk '{ print $NF }' | sort | tr '\\n' ' '");
  g_assert_cmpstr (listing, ==, "/ /renamed /renamed/sub /renamed/sub/f /x /x/e2 /x/e2/g /x/e2/h ");
  g_autofree char *content = run (tmp, "ostree --repo=repo cat out /renamed/sub/f");
  g_assert_cmpstr (content, ==, "deep\n");
  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", tmp);
  g_free (run ("/", rm));
}

int
main (int argc, char **argv)
{
  /* Before any thread exists: our own mount namespace, so nothing of the
   * test's overlay reaches the host. */
  if (getuid () == 0 && (unshare (CLONE_NEWNS) < 0
                         || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0))
    g_printerr ("# cannot make a private mount namespace: %s\n", g_strerror (errno));
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/upper/redirected-directories", test_redirected_directories);
  return g_test_run ();
}
