/* ocilayers.c — an image's OCI layers planned by package; see ocilayers.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "base/deb822.h"
#include "base/util.h"
#include "deb/deb.h"
#include "image/imagedb.h"
#include "image/ocilayers.h"

void
ocilayers_plan_free (OciPlan *plan)
{
  g_clear_pointer (&plan->layering, oci_layering_free);
  g_strfreev (plan->annotations);
  g_free (plan);
}

/* One bucket of packages: its newest tree's time and its source packages. */
typedef struct {
  gint64 mtime;
  GPtrArray *sources;  /* char*, sorted, each once */
} Bucket;

/* The bucket of the source package SOURCE among N. */
static guint
bucket_of (const char *source, guint n)
{
  g_autofree char *hex = g_compute_checksum_for_string (G_CHECKSUM_SHA256, source, -1);
  hex[8] = '\0';
  return (guint) (strtoul (hex, NULL, 16) % n);
}

/* The source package of a status stanza: "Source: NAME (VERSION)", else
 * the package itself. */
static char *
source_of (GHashTable *stanza)
{
  g_autofree char *source = deb822_first_line (stanza, "source");
  if (source == NULL)
    return deb822_first_line (stanza, "package");
  source[strcspn (source, " (")] = '\0';
  return g_steal_pointer (&source);
}

/* Every path of the dirtree CONTENTS under PATH not yet in OWNED, as owned
 * by LAYER with its content. */
static gboolean
add_tree (OstreeRepo *repo, const char *contents, GString *path, guint layer, GHashTable *owned,
          GError **error)
{
  g_autoptr(GVariant) dirtree = NULL;
  if (!ostree_repo_load_variant (repo, OSTREE_OBJECT_TYPE_DIR_TREE, contents, &dirtree, error))
    return FALSE;
  g_autoptr(GVariant) files = g_variant_get_child_value (dirtree, 0);
  g_autoptr(GVariant) dirs = g_variant_get_child_value (dirtree, 1);
  gsize len = path->len;
  for (gsize i = 0; i < g_variant_n_children (files); i++)
    {
      const char *name;
      g_autoptr(GVariant) csum = NULL;
      g_variant_get_child (files, i, "(&s@ay)", &name, &csum);
      g_string_append_printf (path, "/%s", name);
      if (!g_hash_table_contains (owned, path->str))
        {
          OciOwned *o = g_new0 (OciOwned, 1);
          o->layer = layer;
          ostree_checksum_inplace_from_bytes (ostree_checksum_bytes_peek (csum), o->checksum);
          g_hash_table_insert (owned, g_strdup (path->str), o);
        }
      g_string_truncate (path, len);
    }
  for (gsize i = 0; i < g_variant_n_children (dirs); i++)
    {
      const char *name;
      g_autoptr(GVariant) tree = NULL;
      g_autoptr(GVariant) meta = NULL;
      g_variant_get_child (dirs, i, "(&s@ay@ay)", &name, &tree, &meta);
      g_string_append_printf (path, "/%s", name);
      g_autofree char *checksum = ostree_checksum_from_bytes_v (tree);
      gboolean ok = add_tree (repo, checksum, path, layer, owned, error);
      g_string_truncate (path, len);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

/* The package trees in REPO: "deb/NAME/VERSION/ARCH" -> its commits
 * (GPtrArray of char*, by ref name: one per .deb of that version). */
static GHashTable *
package_trees (OstreeRepo *repo, GCancellable *cancellable, GError **error)
{
  g_autoptr(GHashTable) refs = NULL;
  if (!ostree_repo_list_refs_ext (repo, "deb", &refs, OSTREE_REPO_LIST_REFS_EXT_NONE, cancellable,
                                  error))
    return NULL;
  g_autoptr(GPtrArray) names = util_sorted_keys (refs);
  g_autoptr(GHashTable) trees = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                       (GDestroyNotify) g_ptr_array_unref);
  for (guint i = 0; i < names->len; i++)
    {
      const char *ref = names->pdata[i];
      const char *slash = strrchr (ref, '/');
      if (slash == NULL)
        continue;
      g_autofree char *key = g_strndup (ref, slash - ref);
      GPtrArray *commits = g_hash_table_lookup (trees, key);
      if (commits == NULL)
        {
          commits = g_ptr_array_new_with_free_func (g_free);
          g_hash_table_insert (trees, g_steal_pointer (&key), commits);
        }
      g_ptr_array_add (commits, g_strdup (g_hash_table_lookup (refs, ref)));
    }
  return g_steal_pointer (&trees);
}

/* The files of the package of STANZA, from each of its trees, into BUCKET
 * (numbered B) of OWNED; FALSE in *OUT_FOUND when it has none. */
static gboolean
add_package (OstreeRepo *repo, GHashTable *trees, GHashTable *stanza, Bucket *bucket, guint b,
             GHashTable *owned, gboolean *out_found, GError **error)
{
  g_autofree char *name = deb822_first_line (stanza, "package");
  g_autofree char *version = deb822_first_line (stanza, "version");
  g_autofree char *arch = deb822_first_line (stanza, "architecture");
  g_autofree char *prefix = deb_ref_name (name, version, arch, "");
  prefix[strlen (prefix) - 1] = '\0';  /* "deb/N/V/A" */
  GPtrArray *commits = g_hash_table_lookup (trees, prefix);
  *out_found = commits != NULL;
  for (guint i = 0; commits != NULL && i < commits->len; i++)
    {
      g_autoptr(GVariant) commit = NULL;
      if (!ostree_repo_load_commit (repo, commits->pdata[i], &commit, NULL, error))
        return FALSE;
      bucket->mtime = MAX (bucket->mtime, (gint64) ostree_commit_get_timestamp (commit));
      g_autoptr(GVariant) contents = g_variant_get_child_value (commit, 6);
      g_autofree char *root = ostree_checksum_from_bytes_v (contents);
      g_autoptr(GString) path = g_string_new ("");
      if (!add_tree (repo, root, path, b, owned, error))
        return FALSE;
    }
  g_autofree char *source = source_of (stanza);
  guint at;
  if (commits != NULL
      && !g_ptr_array_find_with_equal_func (bucket->sources, source, g_str_equal, &at))
    g_ptr_array_add (bucket->sources, g_steal_pointer (&source));
  return TRUE;
}

static gint
compare_stanzas (gconstpointer a, gconstpointer b)
{
  g_autofree char *x = deb822_first_line (*(GHashTable *const *) a, "package");
  g_autofree char *y = deb822_first_line (*(GHashTable *const *) b, "package");
  return strcmp (x, y);
}

/* --- the previous image's layers ----------------------------------------- */

#define SOURCES_COMMENT "source packages: "

/* O's member NAME when it has that type, else NULL (untrusted JSON). */
static JsonObject *
member_object (JsonObject *o, const char *name)
{
  JsonNode *node = o != NULL ? json_object_get_member (o, name) : NULL;
  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static JsonArray *
member_array (JsonObject *o, const char *name)
{
  JsonNode *node = o != NULL ? json_object_get_member (o, name) : NULL;
  return node != NULL && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
}

static const char *
member_string (JsonObject *o, const char *name)
{
  JsonNode *node = o != NULL ? json_object_get_member (o, name) : NULL;
  return node != NULL && JSON_NODE_HOLDS_VALUE (node)
         && json_node_get_value_type (node) == G_TYPE_STRING ? json_node_get_string (node) : NULL;
}

/* The JSON object of the blob DIGEST ("sha256:HEX") of the layout DIR. */
static JsonObject *
read_blob_object (const char *dir, const char *digest, GError **error)
{
  const char *hex = digest != NULL && g_str_has_prefix (digest, "sha256:") ? digest + 7 : "";
  gboolean hex_ok = strlen (hex) == 64;
  for (const char *p = hex; hex_ok && *p != '\0'; p++)
    hex_ok = g_ascii_isxdigit (*p) && !g_ascii_isupper (*p);
  if (!hex_ok)
    return util_fail (error, "%s: a blob named \"%s\" is not sha256:HEX", dir,
                      digest != NULL ? digest : ""), NULL;
  g_autofree char *path = g_build_filename (dir, "blobs", "sha256", hex, NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) local_error = NULL;
  if (!json_parser_load_from_file (parser, path, &local_error))
    return util_fail (error, "%s: %s", path, local_error->message), NULL;
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return util_fail (error, "%s: not a JSON object", path), NULL;
  return json_object_ref (json_node_get_object (root));
}

/* The digest of the only image of the layout DIR. */
static char *
previous_manifest (const char *dir, GError **error)
{
  g_autofree char *index = g_build_filename (dir, "index.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) local_error = NULL;
  if (!json_parser_load_from_file (parser, index, &local_error))
    return util_fail (error, "--previous %s: not an OCI image layout: %s", dir,
                      local_error->message), NULL;
  JsonNode *root = json_parser_get_root (parser);
  JsonObject *o = root != NULL && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  JsonArray *manifests = member_array (o, "manifests");
  if (manifests == NULL || json_array_get_length (manifests) != 1
      || !JSON_NODE_HOLDS_OBJECT (json_array_get_element (manifests, 0)))
    return util_fail (error, "--previous %s: expected a layout with one image", index), NULL;
  return g_strdup (member_string (json_array_get_object_element (manifests, 0), "digest"));
}

/* The previous image's lower layers: each source package -> its layer
 * (GUINT_TO_POINTER, from 1), and how many there are, from the history
 * comments export --oci --layers wrote. */
static GHashTable *
read_previous (const char *dir, guint *out_n_layers, GError **error)
{
  g_autofree char *manifest_digest = previous_manifest (dir, error);
  if (manifest_digest == NULL)
    return NULL;
  g_autoptr(JsonObject) manifest = read_blob_object (dir, manifest_digest, error);
  if (manifest == NULL)
    return NULL;
  JsonObject *config_d = member_object (manifest, "config");
  JsonArray *layers = member_array (manifest, "layers");
  if (config_d == NULL || layers == NULL)
    return util_fail (error, "--previous %s: its manifest has no config or layers", dir), NULL;
  g_autoptr(JsonObject) config = read_blob_object (dir, member_string (config_d, "digest"), error);
  if (config == NULL)
    return NULL;
  JsonArray *history = member_array (config, "history");
  guint n = json_array_get_length (layers);
  if (history == NULL || json_array_get_length (history) != n || n < 2)
    return util_fail (error, "--previous %s: not an image \"export --oci --layers\" wrote (no "
                      "history entry per layer)", dir), NULL;
  if (n > OCILAYERS_MAX)
    return util_fail (error, "--previous %s: %u layers, more than the %d \"export --oci "
                      "--layers\" writes", dir, n, OCILAYERS_MAX), NULL;
  g_autoptr(GHashTable) sources = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i + 1 < n; i++)
    {
      JsonNode *entry = json_array_get_element (history, i);
      const char *comment = JSON_NODE_HOLDS_OBJECT (entry)
                            ? member_string (json_node_get_object (entry), "comment") : NULL;
      if (comment == NULL || !g_str_has_prefix (comment, SOURCES_COMMENT))
        return util_fail (error, "--previous %s: layer %u's history names no source packages; "
                          "not an image \"export --oci --layers\" wrote", dir, i + 1), NULL;
      g_auto(GStrv) names = g_strsplit (comment + strlen (SOURCES_COMMENT), " ", -1);
      for (char **p = names; *p != NULL; p++)
        if (**p != '\0')
          g_hash_table_insert (sources, g_strdup (*p), GUINT_TO_POINTER (i + 1));
    }
  *out_n_layers = n - 1;
  return g_steal_pointer (&sources);
}

/* --- the plan ------------------------------------------------------------- */

/* The lower layers of INSTALLED (status stanzas) in N_BUCKETS buckets. */
static OciLayering *
plan_layers (OstreeRepo *repo, GPtrArray *installed, guint n_buckets, GHashTable *previous,
             guint *out_without_tree, GCancellable *cancellable, GError **error)
{
  g_autoptr(GHashTable) trees = package_trees (repo, cancellable, error);
  if (trees == NULL)
    return NULL;
  g_autoptr(GHashTable) owned = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autofree Bucket *buckets = g_new0 (Bucket, n_buckets);
  for (guint b = 0; b < n_buckets; b++)
    buckets[b].sources = g_ptr_array_new_with_free_func (g_free);
  /* By name, so that a path two packages ship goes with the same one every time. */
  g_autoptr(GPtrArray) sorted = g_ptr_array_copy (installed, NULL, NULL);
  g_ptr_array_sort (sorted, compare_stanzas);
  gboolean ok = TRUE;
  *out_without_tree = 0;
  for (guint i = 0; ok && i < sorted->len; i++)
    {
      g_autofree char *source = source_of (sorted->pdata[i]);
      guint b = previous != NULL && g_hash_table_contains (previous, source)
                ? GPOINTER_TO_UINT (g_hash_table_lookup (previous, source)) - 1
                : bucket_of (source, n_buckets);
      gboolean found = FALSE;
      ok = add_package (repo, trees, sorted->pdata[i], &buckets[b], b, owned, &found, error);
      *out_without_tree += !found;
    }

  /* The buckets with packages, in order, become the layers. */
  g_autoptr(OciLayering) layering = g_new0 (OciLayering, 1);
  g_autofree guint *layer_of_bucket = g_new0 (guint, n_buckets);
  layering->mtimes = g_new0 (gint64, n_buckets);
  layering->comments = g_new0 (char *, n_buckets + 1);
  for (guint b = 0; b < n_buckets; b++)
    {
      if (buckets[b].sources->len > 0)
        {
          g_ptr_array_sort (buckets[b].sources, util_compare_strings);
          g_ptr_array_add (buckets[b].sources, NULL);
          g_autofree char *list = g_strjoinv (" ", (char **) buckets[b].sources->pdata);
          layer_of_bucket[b] = layering->n_layers;
          layering->mtimes[layering->n_layers] = buckets[b].mtime;
          layering->comments[layering->n_layers++] = g_strconcat (SOURCES_COMMENT, list, NULL);
        }
      g_ptr_array_unref (buckets[b].sources);
    }
  if (!ok)
    return NULL;
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init (&it, owned);
  while (g_hash_table_iter_next (&it, NULL, &value))
    ((OciOwned *) value)->layer = layer_of_bucket[((OciOwned *) value)->layer];
  layering->owned = g_steal_pointer (&owned);
  return g_steal_pointer (&layering);
}

static GStrv
plan_annotations (const char *commit, gint64 timestamp, int n_packages, const char *lock_sha256)
{
  g_autoptr(GDateTime) t = g_date_time_new_from_unix_utc (timestamp);
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  g_autofree char *created = g_date_time_format (t, "%Y-%m-%dT%H:%M:%SZ");
  g_autofree char *count = g_strdup_printf ("%d", n_packages);
  g_strv_builder_add_many (b, "org.opencontainers.image.created", created, NULL);
  g_strv_builder_add_many (b, "org.opencontainers.image.revision", commit, "apt2ostree.commit",
                           commit, NULL);
  if (n_packages >= 0)
    g_strv_builder_add_many (b, "apt2ostree.packages", count, NULL);
  if (lock_sha256 != NULL)
    g_strv_builder_add_many (b, "apt2ostree.lockfile.sha256", lock_sha256, NULL);
  return g_strv_builder_end (b);
}

OciPlan *
ocilayers_plan (OstreeRepo *repo, const char *commit, const char *name, guint n_layers,
                const char *previous_dir, const char *lockfile, GCancellable *cancellable,
                GError **error)
{
  g_return_val_if_fail (n_layers >= 1 && n_layers <= OCILAYERS_MAX, NULL);
  g_autoptr(GHashTable) previous = NULL;
  if (previous_dir != NULL)
    {
      guint n_previous;
      previous = read_previous (previous_dir, &n_previous, error);
      if (previous == NULL)
        return NULL;
      n_layers = MIN (n_previous + 1, OCILAYERS_MAX);
    }
  g_autoptr(GVariant) commit_v = NULL;
  g_autoptr(GFile) root = NULL;
  if (!ostree_repo_load_commit (repo, commit, &commit_v, NULL, error)
      || !ostree_repo_read_commit (repo, commit, &root, NULL, cancellable, error))
    return NULL;
  g_autofree char *lock_sha256 = NULL;
  if (lockfile != NULL)
    {
      g_autofree char *text = NULL;
      gsize len;
      g_autoptr(GError) local_error = NULL;
      if (!g_file_get_contents (lockfile, &text, &len, &local_error))
        return util_fail (error, "%s", local_error->message), NULL;
      lock_sha256 = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) text, len);
    }

  /* One layer needs no dpkg database: the count is left out without one. */
  g_autoptr(OciPlan) plan = g_new0 (OciPlan, 1);
  g_autoptr(GError) local_error = NULL;
  GError **status_error = n_layers > 1 ? error : &local_error;
  g_autoptr(GPtrArray) stanzas = imagedb_read_status (root, name, cancellable, status_error);
  g_autoptr(GPtrArray) installed = NULL;
  if (stanzas != NULL)
    installed = imagedb_packages (stanzas, IMAGEDB_INSTALLED, name, status_error);
  if (installed == NULL && n_layers > 1)
    return NULL;
  if (n_layers > 1)
    {
      plan->layering = plan_layers (repo, installed, n_layers - 1, previous,
                                    &plan->without_tree, cancellable, error);
      if (plan->layering == NULL)
        return NULL;
    }
  plan->annotations = plan_annotations (commit, (gint64) ostree_commit_get_timestamp (commit_v),
                                        installed != NULL ? (int) installed->len : -1,
                                        lock_sha256);
  return g_steal_pointer (&plan);
}
