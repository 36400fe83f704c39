/* publish.c — refs into a served archive repository; see publish.h. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "barestore/objects.h"
#include "base/scratch.h"
#include "base/util.h"
#include "store/publish.h"
#include "store/pubhistory.h"
#include "store/repo.h"

/* The archive repository at DEST, made when missing (under the publish
 * lock, so two publishers starting on a new directory make it once); a
 * repository of another mode is refused (a web server serves archive
 * repositories). */
static OstreeRepo *
open_destination (const char *dest, gboolean *out_made, GCancellable *cancellable,
                  GError **error)
{
  g_autoptr(GFile) file = g_file_new_for_path (dest);
  g_autoptr(OstreeRepo) repo = ostree_repo_new (file);
  g_autofree char *config = g_build_filename (dest, "config", NULL);
  g_autoptr(GError) local_error = NULL;
  *out_made = !g_file_test (config, G_FILE_TEST_EXISTS);
  if (*out_made)
    {
      if (!ostree_repo_create (repo, OSTREE_REPO_MODE_ARCHIVE, cancellable, &local_error))
        return util_fail (error, "%s: cannot create an archive repository: %s", dest,
                          local_error->message), NULL;
    }
  else if (!ostree_repo_open (repo, cancellable, &local_error))
    return util_fail (error, "%s: %s", dest, local_error->message), NULL;
  if (ostree_repo_get_mode (repo) != OSTREE_REPO_MODE_ARCHIVE)
    return util_fail (error, "%s is not an archive repository: publish writes what a web server "
                      "serves; give a new directory", dest), NULL;
  return g_steal_pointer (&repo);
}

/* The repository entries of DEST, as check_no_symlinks and the removal of
 * a repository this publish made and did not fill know them. */
static const char *const repo_entries[] = {
  "config", "summary", "summary.sig", "objects", "refs", "tmp", "state", "extensions",
  "deltas", "delta-indexes", NULL
};

/* The first symlink at or below PATH (NULL: none), not following any. */
static char *
find_symlink (const char *path, GError **error)
{
  struct stat st;
  if (lstat (path, &st) < 0)
    return errno == ENOENT ? NULL : (util_fail (error, "%s: %s", path, g_strerror (errno)), NULL);
  if (S_ISLNK (st.st_mode))
    return g_strdup (path);
  if (!S_ISDIR (st.st_mode))
    return NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GDir) dir = g_dir_open (path, 0, &local_error);
  if (dir == NULL)
    return util_fail (error, "%s: %s", path, local_error->message), NULL;
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      char *found = find_symlink (child, error);
      if (found != NULL || (error != NULL && *error != NULL))
        return found;
    }
  return NULL;
}

/* DEST as the publish leaves it must hold no symlink where the repository
 * keeps its files: libostree would write through one (a ref, an object,
 * the summary landing where it points), and a web server would serve what
 * it points at. */
static gboolean
check_no_symlinks (const char *dest, GError **error)
{
  for (const char *const *e = repo_entries; *e != NULL; e++)
    {
      g_autofree char *path = g_build_filename (dest, *e, NULL);
      g_autoptr(GError) local_error = NULL;
      g_autofree char *link = find_symlink (path, &local_error);
      if (local_error != NULL)
        return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
      if (link != NULL)
        return util_fail (error, "%s is a symlink: publish writes into the repository's own "
                          "directories only; remove it (nothing was published)", link);
    }
  return TRUE;
}

/* REFS, each checked, or all of SRC's refs when REFS names none; sorted. */
static GPtrArray *
refs_to_publish (OstreeRepo *src, const char *const *refs, GCancellable *cancellable,
                 GError **error)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  for (const char *const *r = refs; r != NULL && *r != NULL; r++)
    {
      g_autofree char *commit = repo_read_ref (src, *r);
      if (commit == NULL)
        return util_fail (error, "no ref \"%s\" in the repository", *r), NULL;
      g_ptr_array_add (out, g_strdup (*r));
    }
  if (out->len == 0)
    {
      g_autoptr(GHashTable) all = NULL;
      if (!ostree_repo_list_refs (src, NULL, &all, cancellable, error))
        return NULL;
      g_autoptr(GPtrArray) keys = util_sorted_keys (all);
      for (guint i = 0; i < keys->len; i++)
        g_ptr_array_add (out, g_strdup (keys->pdata[i]));
      return g_steal_pointer (&out);
    }
  g_ptr_array_sort (out, util_compare_strings);
  return g_steal_pointer (&out);
}

/* What a publish writes: the refs copied as built, the refs published
 * with a history, the extra delta bases (commits in the destination). */
typedef struct {
  GPtrArray *as_built;     /* char *: ref names */
  GPtrArray *entries;      /* PubHistoryEntry * */
  GPtrArray *delta_bases;  /* char *: commits */
} PublishPlan;

static void
publish_plan_clear (PublishPlan *plan)
{
  g_clear_pointer (&plan->as_built, g_ptr_array_unref);
  g_clear_pointer (&plan->entries, g_ptr_array_unref);
  g_clear_pointer (&plan->delta_bases, g_ptr_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (PublishPlan, publish_plan_clear)

/* Is NAME copied as built under OPTS?  A ref DEST holds with a history
 * must keep it: refused (FALSE, ERROR set) when OPTS would copy it as
 * built. */
static gboolean
copied_as_built (OstreeRepo *dest, const char *dest_path, const char *name,
                 const PublishOptions *opts, gboolean *out_as_built, GError **error)
{
  *out_as_built = !opts->history || (opts->as_built != NULL && opts->as_built (name));
  if (!*out_as_built)
    return TRUE;
  g_autofree char *there = repo_read_ref (dest, name);
  g_autofree char *made_from = there != NULL ? pubhistory_built_of (dest, there) : NULL;
  if (made_from != NULL)
    return util_fail (error, "%s: ref \"%s\" was published with a history there; publish it "
                      "with --history (nothing was published)", dest_path, name);
  return TRUE;
}

/* Decide, before writing anything, what publishing NAMES from SRC into
 * DEST does. */
static gboolean
plan_publish (OstreeRepo *src, OstreeRepo *dest, const char *dest_path, GPtrArray *names,
              const PublishOptions *opts, PublishPlan *plan, GCancellable *cancellable,
              GError **error)
{
  plan->as_built = g_ptr_array_new_with_free_func (g_free);
  plan->entries = g_ptr_array_new_with_free_func ((GDestroyNotify) pubhistory_entry_free);
  plan->delta_bases = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      gboolean as_built;
      if (!copied_as_built (dest, dest_path, name, opts, &as_built, error))
        return FALSE;
      if (as_built)
        {
          g_ptr_array_add (plan->as_built, g_strdup (name));
          continue;
        }
      g_autofree char *built = repo_read_ref (src, name);
      PubHistoryEntry *entry = pubhistory_plan (dest, name, built, opts->version, cancellable,
                                                error);
      if (entry == NULL)
        return FALSE;
      g_ptr_array_add (plan->entries, entry);
    }
  for (const char *const *r = opts->delta_from; r != NULL && *r != NULL; r++)
    {
      char *commit = NULL;
      g_autoptr(GError) local_error = NULL;
      if (!ostree_repo_resolve_rev (dest, *r, FALSE, &commit, &local_error))
        return util_fail (error, "--delta-from %s: not in %s (nothing was published)", *r,
                          dest_path);
      g_ptr_array_add (plan->delta_bases, commit);
    }
  return TRUE;
}

/* Pull from SRC into DEST: objects first, then the refs.  REFS holds ref
 * names, which the pull sets, and commit checksums, which it only
 * stores. */
static gboolean
pull_refs (OstreeRepo *src, OstreeRepo *dest, GPtrArray *refs, GCancellable *cancellable,
           GError **error)
{
  g_autofree char *src_path = g_file_get_path (ostree_repo_get_path (src));
  g_autofree char *abs = g_canonicalize_filename (src_path, NULL);
  g_autofree char *url = g_strconcat ("file://", abs, NULL);
  GVariantBuilder options;
  g_variant_builder_init (&options, G_VARIANT_TYPE ("a{sv}"));
  g_variant_builder_add (&options, "{sv}", "refs",
                         g_variant_new_strv ((const char *const *) refs->pdata, refs->len));
  g_variant_builder_add (&options, "{sv}", "gpg-verify", g_variant_new_boolean (FALSE));
  g_variant_builder_add (&options, "{sv}", "gpg-verify-summary", g_variant_new_boolean (FALSE));
  g_autoptr(GVariant) opts = g_variant_ref_sink (g_variant_builder_end (&options));
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_pull_with_options (dest, url, opts, NULL, cancellable, &local_error))
    return util_fail (error, "copying the refs: %s", local_error->message);
  return TRUE;
}

/* COMMIT signed in STAGE with the key of OPTS, over the signatures DEST
 * has for it already (the stage starts with none of its own).  Written
 * outside RepoTxn, which could take this second repository, because the
 * stage is itself publish's transaction over DEST and ostree_repo_sign_commit
 * rewrites this very file right after, with no sink to go through. */
static gboolean
sign_commit (OstreeRepo *stage, OstreeRepo *dest, const char *what, const char *commit,
             const PublishOptions *opts, GCancellable *cancellable, GError **error)
{
  g_autoptr(GVariant) staged = NULL, there = NULL;
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_read_commit_detached_metadata (stage, commit, &staged, cancellable,
                                                  &local_error)
      || (staged == NULL
          && (!ostree_repo_read_commit_detached_metadata (dest, commit, &there, cancellable,
                                                          &local_error)
              || (there != NULL
                  && !ostree_repo_write_commit_detached_metadata (stage, commit, there,
                                                                  cancellable, &local_error)))))
    return util_fail (error, "%s (%s): its signatures: %s", what, commit, local_error->message);
  if (!ostree_repo_sign_commit (stage, commit, opts->gpg_key_id, opts->gpg_homedir, cancellable,
                                &local_error)
      && !g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_EXISTS))
    return util_fail (error, "signing %s (%s) with key %s: %s", what, commit, opts->gpg_key_id,
                      local_error->message);
  return TRUE;
}

/* Sign, in STAGE, what PLAN publishes: the refs copied as built, the new
 * commits. */
static gboolean
sign (OstreeRepo *stage, OstreeRepo *dest, const PublishPlan *plan, const PublishOptions *opts,
      GCancellable *cancellable, GError **error)
{
  for (guint i = 0; i < plan->as_built->len; i++)
    {
      g_autofree char *commit = repo_read_ref (stage, plan->as_built->pdata[i]);
      if (commit != NULL
          && !sign_commit (stage, dest, plan->as_built->pdata[i], commit, opts, cancellable,
                           error))
        return FALSE;
    }
  for (guint i = 0; i < plan->entries->len; i++)
    {
      PubHistoryEntry *entry = plan->entries->pdata[i];
      if (!entry->unchanged
          && !sign_commit (stage, dest, entry->ref, entry->published, opts, cancellable, error))
        return FALSE;
    }
  return TRUE;
}

/* Can the key of OPTS sign at all?  Asked before anything is written, so
 * that a key gpg does not have leaves the destination as it was. */
static gboolean
check_key (OstreeRepo *dest, const PublishOptions *opts, GCancellable *cancellable,
           GError **error)
{
  static const char probe[] = "apt2ostree publish: can this key sign?";
  g_autoptr(GBytes) data = g_bytes_new_static (probe, sizeof probe - 1);
  g_autoptr(GBytes) signature = NULL;
  const char *key_ids[] = { opts->gpg_key_id, NULL };
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_gpg_sign_data (dest, data, NULL, key_ids, opts->gpg_homedir, &signature,
                                  cancellable, &local_error))
    {
      g_strdelimit (local_error->message, "\n", ' ');
      return util_fail (error, "signing with key %s: %s (nothing was published)",
                        opts->gpg_key_id, local_error->message);
    }
  return TRUE;
}

/* Copy what PLAN needs from SRC: the refs as built, the built commits of
 * the refs published with a history (without their refs). */
static gboolean
pull_plan (OstreeRepo *src, OstreeRepo *dest, const PublishPlan *plan,
           GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) wanted = g_ptr_array_new ();
  for (guint i = 0; i < plan->as_built->len; i++)
    g_ptr_array_add (wanted, plan->as_built->pdata[i]);
  for (guint i = 0; i < plan->entries->len; i++)
    {
      PubHistoryEntry *entry = plan->entries->pdata[i];
      if (!entry->unchanged)
        g_ptr_array_add (wanted, entry->built);
    }
  return wanted->len == 0 || pull_refs (src, dest, wanted, cancellable, error);
}

/* The new commits of PLAN, in one transaction of DEST. */
static gboolean
write_history (OstreeRepo *dest, const PublishPlan *plan, GCancellable *cancellable,
               GError **error)
{
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_prepare_transaction (dest, NULL, cancellable, &local_error))
    return util_fail (error, "opening a transaction: %s", local_error->message);
  for (guint i = 0; i < plan->entries->len; i++)
    if (!pubhistory_write (dest, plan->entries->pdata[i], cancellable, error))
      return ostree_repo_abort_transaction (dest, NULL, NULL), FALSE;
  if (!ostree_repo_commit_transaction (dest, NULL, cancellable, &local_error))
    return util_fail (error, "writing the published commits: %s", local_error->message);
  return TRUE;
}

static gboolean
write_delta (OstreeRepo *dest, const char *ref, const char *from, const char *to,
             GCancellable *cancellable, GError **error)
{
  GVariantBuilder builder;
  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a{sv}"));
  g_autoptr(GVariant) params = g_variant_ref_sink (g_variant_builder_end (&builder));
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_static_delta_generate (dest, OSTREE_STATIC_DELTA_GENERATE_OPT_MAJOR, from, to,
                                          NULL, params, cancellable, &local_error))
    return util_fail (error, "%s: the static delta from %s to %s: %s", ref, from, to,
                      local_error->message);
  return TRUE;
}

/* Every object of COMMIT that STAGE lacks hard-linked into it from DEST,
 * once per commit (DONE): libostree's delta generator reads some objects
 * from the repository itself only, not from its parent.  An object DEST
 * has already stays in the stage when it is moved into DEST. */
static gboolean
link_commit_objects (OstreeRepo *stage, OstreeRepo *dest, const char *commit, GHashTable *done,
                     GCancellable *cancellable, GError **error)
{
  if (!g_hash_table_add (done, g_strdup (commit)))
    return TRUE;
  g_autoptr(GHashTable) reachable = NULL;
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_traverse_commit (stage, commit, 0, &reachable, cancellable, &local_error))
    return util_fail (error, "%s: %s", commit, local_error->message);
  int from = ostree_repo_get_dfd (dest), to = ostree_repo_get_dfd (stage);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, reachable);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      const char *checksum;
      OstreeObjectType type;
      ostree_object_name_deserialize (key, &checksum, &type);
      char path[OBJECTS_REPO_PATH_MAX];
      objects_repo_path (path, checksum,
                         type == OSTREE_OBJECT_TYPE_FILE ? "filez"
                                                         : ostree_object_type_to_string (type));
      g_autofree char *dir = g_path_get_dirname (path);
      if ((mkdirat (to, dir, 0755) != 0 && errno != EEXIST)
          || (linkat (from, path, to, path, 0) != 0 && errno != EEXIST && errno != ENOENT))
        return util_fail (error, "%s: %s", path, g_strerror (errno));
    }
  return TRUE;
}

/* A static delta to each new commit of PLAN from the commit its ref held
 * before and from each extra base, made in STAGE. */
static gboolean
write_deltas (OstreeRepo *stage, OstreeRepo *dest, const PublishPlan *plan,
              GCancellable *cancellable, GError **error)
{
  g_autoptr(GHashTable) linked = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < plan->entries->len; i++)
    {
      PubHistoryEntry *entry = plan->entries->pdata[i];
      if (entry->unchanged)
        continue;
      g_autoptr(GPtrArray) bases = g_ptr_array_new ();
      if (entry->previous != NULL)
        g_ptr_array_add (bases, entry->previous);
      for (guint j = 0; j < plan->delta_bases->len; j++)
        {
          char *base = plan->delta_bases->pdata[j];
          if (strcmp (base, entry->published) != 0
              && !g_ptr_array_find_with_equal_func (bases, base, g_str_equal, NULL))
            g_ptr_array_add (bases, base);
        }
      for (guint j = 0; j < bases->len; j++)
        if (!link_commit_objects (stage, dest, bases->pdata[j], linked, cancellable, error)
            || !link_commit_objects (stage, dest, entry->published, linked, cancellable, error)
            || !write_delta (stage, entry->ref, bases->pdata[j], entry->published, cancellable,
                             error))
          return FALSE;
    }
  return TRUE;
}

/* An archive repository at PATH whose parent is DEST: what the publish
 * writes lands in it, what DEST has already is read from DEST. */
static OstreeRepo *
open_stage (const char *path, const char *dest, GCancellable *cancellable, GError **error)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(OstreeRepo) made = ostree_repo_new (file);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GKeyFile) config = NULL;
  g_autofree char *parent = g_canonicalize_filename (dest, NULL);
  if (ostree_repo_create (made, OSTREE_REPO_MODE_ARCHIVE, cancellable, &local_error))
    {
      config = ostree_repo_copy_config (made);
      g_key_file_set_string (config, "core", "parent", parent);
    }
  if (config == NULL || !ostree_repo_write_config (made, config, &local_error))
    return util_fail (error, "%s: %s", path, local_error->message), NULL;
  g_autoptr(OstreeRepo) stage = ostree_repo_new (file);
  if (!ostree_repo_open (stage, cancellable, &local_error))
    return util_fail (error, "%s: %s", path, local_error->message), NULL;
  return g_steal_pointer (&stage);
}

/* Each entry of FROM/SUB/XX/ moved to DEST/SUB/XX/: one that DEST has
 * already stays unless REPLACE says it changes (a commit's signatures, a
 * static delta made again); then the two are swapped in one step. */
static gboolean
move_entries (int from_dfd, int dest_dfd, const char *sub,
              gboolean (*replace) (const char *name), GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *from_sub = g_strdup_printf ("/proc/self/fd/%d/%s", from_dfd, sub);
  g_autoptr(GDir) outer = g_dir_open (from_sub, 0, &local_error);
  if (outer == NULL)
    return g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT)
           || util_fail (error, "%s: %s", sub, local_error->message);
  const char *xx;
  while ((xx = g_dir_read_name (outer)) != NULL)
    {
      g_autofree char *dir = g_build_filename (sub, xx, NULL);
      g_autofree char *from_dir = g_build_filename (from_sub, xx, NULL);
      g_autoptr(GDir) inner = g_dir_open (from_dir, 0, &local_error);
      if (inner == NULL)
        return util_fail (error, "%s: %s", dir, local_error->message);
      if (mkdirat (dest_dfd, sub, 0755) != 0 && errno != EEXIST)
        return util_fail (error, "%s: %s", sub, g_strerror (errno));
      if (mkdirat (dest_dfd, dir, 0755) != 0 && errno != EEXIST)
        return util_fail (error, "%s: %s", dir, g_strerror (errno));
      const char *name;
      while ((name = g_dir_read_name (inner)) != NULL)
        {
          g_autofree char *path = g_build_filename (dir, name, NULL);
          struct stat st;
          gboolean there = fstatat (dest_dfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
          if (there && !replace (name))
            continue;
          if (renameat2 (from_dfd, path, dest_dfd, path, there ? RENAME_EXCHANGE : RENAME_NOREPLACE)
              != 0)
            return util_fail (error, "%s: %s", path, g_strerror (errno));
        }
    }
  return TRUE;
}

static gboolean
replaces_object (const char *name)
{
  return g_str_has_suffix (name, ".commitmeta");
}

static gboolean
replaces_delta (const char *name)
{
  (void) name;
  return TRUE;
}

/* What STAGE holds moved into DEST: the objects, then the static deltas,
 * all of it on disk before any ref names it. */
static gboolean
move_staged (OstreeRepo *stage, OstreeRepo *dest, const char *dest_path, GError **error)
{
  int from = ostree_repo_get_dfd (stage), to = ostree_repo_get_dfd (dest);
  if (!move_entries (from, to, "objects", replaces_object, error)
      || !move_entries (from, to, "deltas", replaces_delta, error))
    return g_prefix_error (error, "%s: ", dest_path), FALSE;
  if (syncfs (to) != 0)
    return util_fail (error, "%s: %s", dest_path, g_strerror (errno));
  return TRUE;
}

/* Point the refs of PLAN at what STAGE holds for them (last: a client
 * sees a ref only once its commit, signature and deltas are in place). */
static gboolean
set_refs (OstreeRepo *stage, OstreeRepo *dest, const PublishPlan *plan,
          GCancellable *cancellable, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  for (guint i = 0; i < plan->as_built->len; i++)
    {
      const char *name = plan->as_built->pdata[i];
      g_autofree char *commit = repo_read_ref (stage, name);
      g_autofree char *there = repo_read_ref (dest, name);
      if (commit == NULL)
        return util_fail (error, "%s: not copied", name);
      if (g_strcmp0 (commit, there) != 0
          && !ostree_repo_set_ref_immediate (dest, NULL, name, commit, cancellable,
                                             &local_error))
        return util_fail (error, "%s: %s", name, local_error->message);
    }
  for (guint i = 0; i < plan->entries->len; i++)
    {
      PubHistoryEntry *entry = plan->entries->pdata[i];
      if (!entry->unchanged
          && !ostree_repo_set_ref_immediate (dest, NULL, entry->ref, entry->published,
                                             cancellable, &local_error))
        return util_fail (error, "%s: %s", entry->ref, local_error->message);
    }
  return TRUE;
}

/* Everything PLAN writes, into STAGE. */
static gboolean
stage_plan (OstreeRepo *src, OstreeRepo *stage, OstreeRepo *dest, const PublishPlan *plan,
            const PublishOptions *opts, GCancellable *cancellable, GError **error)
{
  return pull_plan (src, stage, plan, cancellable, error)
         && write_history (stage, plan, cancellable, error)
         /* Signed before the deltas are made: a delta carries its commit's
          * detached metadata, the signature with it. */
         && (opts->gpg_key_id == NULL || sign (stage, dest, plan, opts, cancellable, error))
         && (opts->no_deltas || write_deltas (stage, dest, plan, cancellable, error));
}

/* The summary of DEST, signed with the key of OPTS. */
static gboolean
write_summary (OstreeRepo *dest, const char *dest_path, const PublishOptions *opts,
               GCancellable *cancellable, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  if (!ostree_repo_regenerate_summary (dest, NULL, cancellable, &local_error))
    return util_fail (error, "%s: writing the summary: %s", dest_path, local_error->message);
  const char *key_ids[] = { opts->gpg_key_id, NULL };
  if (opts->gpg_key_id != NULL
      && !ostree_repo_add_gpg_signature_summary (dest, key_ids, opts->gpg_homedir, cancellable,
                                                 &local_error))
    return util_fail (error, "%s: signing the summary with key %s: %s", dest_path,
                      opts->gpg_key_id, local_error->message);
  return TRUE;
}

/* Everything the publish writes, under the lock.  It is all made in a
 * staging repository under DEST's tmp/ first; DEST changes only once all
 * of it is done (a failure before leaves DEST as it was): objects and
 * deltas moved in, then the refs, then the summary. */
static gboolean
publish_locked (OstreeRepo *src, OstreeRepo *repo, const char *dest, GPtrArray *names,
                const PublishOptions *opts, guint *out_unchanged, GCancellable *cancellable,
                GError **error)
{
  g_auto(PublishPlan) plan = { NULL, };
  if (!plan_publish (src, repo, dest, names, opts, &plan, cancellable, error)
      || (opts->gpg_key_id != NULL && !check_key (repo, opts, cancellable, error)))
    return FALSE;
  g_autofree char *tmp = g_build_filename (dest, "tmp", NULL);
  g_autoptr(Scratch) scratch = scratch_new (tmp, "apt2ostree-publish", error);
  if (scratch == NULL)
    return FALSE;
  g_autofree char *stage_path = g_build_filename (scratch->path, "repo", NULL);
  g_autoptr(OstreeRepo) stage = open_stage (stage_path, dest, cancellable, error);
  g_autoptr(GError) local_error = NULL;
  if (stage == NULL || !stage_plan (src, stage, repo, &plan, opts, cancellable, &local_error))
    {
      (void) scratch_remove (scratch, NULL);
      if (local_error != NULL)
        util_fail (error, "%s (nothing was published)", local_error->message);
      return FALSE;
    }
  gboolean ok = move_staged (stage, repo, dest, error)
                && set_refs (stage, repo, &plan, cancellable, error)
                && write_summary (repo, dest, opts, cancellable, error);
  g_clear_object (&stage);
  if (!scratch_remove (scratch, ok ? error : NULL) && ok)
    return FALSE;
  if (!ok)
    return FALSE;
  *out_unchanged = 0;
  for (guint i = 0; i < plan.entries->len; i++)
    *out_unchanged += ((PubHistoryEntry *) plan.entries->pdata[i])->unchanged ? 1 : 0;
  return TRUE;
}

/* The publish lock of DEST, made with DEST when missing, held: its file
 * descriptor.  A lock file removed while we waited for it (a failed first
 * publish removes the directory it made) is taken again. */
static int
take_lock (const char *dest, gboolean *out_made_dir, GError **error)
{
  g_autofree char *lock_path = g_build_filename (dest, ".apt2ostree-publish.lock", NULL);
  for (;;)
    {
      *out_made_dir = !g_file_test (dest, G_FILE_TEST_EXISTS);
      if (g_mkdir_with_parents (dest, 0755) != 0)
        return util_fail (error, "%s: %s", dest, g_strerror (errno)), -1;
      int fd = open (lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0 || flock (fd, LOCK_EX) != 0)
        {
          int saved = errno;
          if (fd >= 0)
            close (fd);
          return util_fail (error, "%s: %s", lock_path, g_strerror (saved)), -1;
        }
      struct stat held, named;
      if (fstat (fd, &held) == 0 && stat (lock_path, &named) == 0 && held.st_dev == named.st_dev
          && held.st_ino == named.st_ino)
        return fd;
      close (fd);
    }
}

/* A publish that failed in a repository it made: the repository goes, and
 * the directory with its lock when the publish made that too. */
static void
unmake_destination (const char *dest, gboolean made_dir)
{
  for (const char *const *e = repo_entries; *e != NULL; e++)
    {
      g_autofree char *path = g_build_filename (dest, *e, NULL);
      (void) scratch_rm_rf (path, NULL);
    }
  if (!made_dir)
    return;
  g_autofree char *lock_path = g_build_filename (dest, ".apt2ostree-publish.lock", NULL);
  (void) unlink (lock_path);
  (void) rmdir (dest);
}

gboolean
publish_refs (OstreeRepo *src, const char *const *refs, const char *dest,
              const PublishOptions *opts, guint *out_count, guint *out_unchanged,
              GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) names = refs_to_publish (src, refs, cancellable, error);
  if (names == NULL)
    return FALSE;
  if (names->len == 0)
    return util_fail (error, "the repository has no refs to publish");
  gboolean made_dir = FALSE, made_repo = FALSE;
  int lock_fd = take_lock (dest, &made_dir, error);
  if (lock_fd < 0)
    return FALSE;
  g_autoptr(OstreeRepo) repo = NULL;
  gboolean ok = check_no_symlinks (dest, error)
                && (repo = open_destination (dest, &made_repo, cancellable, error)) != NULL
                && publish_locked (src, repo, dest, names, opts, out_unchanged, cancellable,
                                   error);
  g_clear_object (&repo);
  if (!ok && made_repo)
    unmake_destination (dest, made_dir);
  close (lock_fd);  /* releases the lock */
  if (ok)
    *out_count = names->len;
  return ok;
}
