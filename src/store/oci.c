/* oci.c — a tree as an OCI image layout or archive; see oci.h. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/scratch.h"
#include "base/sha256.h"
#include "base/util.h"
#include "store/oci.h"
#include "store/repo.h"
#include "store/tarball.h"

#define MEDIA_INDEX "application/vnd.oci.image.index.v1+json"
#define MEDIA_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MEDIA_CONFIG "application/vnd.oci.image.config.v1+json"
#define MEDIA_LAYER "application/vnd.oci.image.layer.v1.tar+gzip"
#define IMAGE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

gboolean
oci_platform_of_dpkg_arch (const char *dpkg_arch, const char **out_arch, const char **out_variant)
{
  static const char *const table[][3] = {
    { "amd64", "amd64", NULL }, { "arm64", "arm64", "v8" }, { "armhf", "arm", "v7" },
    { "armel", "arm", "v5" }, { "i386", "386", NULL }, { "ppc64el", "ppc64le", NULL },
    { "s390x", "s390x", NULL }, { "riscv64", "riscv64", NULL }, { "mips64el", "mips64le", NULL },
    { "loong64", "loong64", NULL },
  };
  for (guint i = 0; i < G_N_ELEMENTS (table); i++)
    if (g_str_equal (dpkg_arch, table[i][0]))
      {
        *out_arch = table[i][1];
        *out_variant = table[i][2];
        return TRUE;
      }
  return FALSE;
}

/* A blob written so far: its digest ("sha256:HEX") and size. */
typedef struct {
  char *digest;
  gint64 size;
} Blob;

static void
blob_clear (Blob *blob)
{
  g_clear_pointer (&blob->digest, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Blob, blob_clear)

static char *
blob_path (const char *layout, const char *digest)
{
  return g_build_filename (layout, "blobs", "sha256", digest + strlen ("sha256:"), NULL);
}

static gboolean
write_blob (const char *layout, const char *text, Blob *out, GError **error)
{
  g_autoptr(Sha256) sha = sha256_new ();
  gsize len = strlen (text);
  sha256_update (sha, text, len);
  g_autofree char *hex = sha256_finish_hex (sha);
  out->digest = g_strconcat ("sha256:", hex, NULL);
  out->size = (gint64) len;
  g_autofree char *path = blob_path (layout, out->digest);
  g_autoptr(GError) local_error = NULL;
  if (!g_file_set_contents (path, text, len, &local_error))
    return util_fail (error, "%s: %s", path, local_error->message);
  return TRUE;
}

/* The layer: TAR gzip-compressed into the layout's blobs (no file name, no
 * time in the header: zlib's gz* writes neither), with the SHA256 of the
 * uncompressed tar as OUT_DIFF_ID. */
static gboolean
write_layer (const char *layout, const char *tar, Blob *out, char **out_diff_id, GError **error)
{
  g_autofree char *tmp = g_strconcat (tar, ".gz", NULL);
  int in = open (tar, O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return util_fail (error, "%s: %s", tar, g_strerror (errno));
  gzFile gz = gzopen (tmp, "wb6");
  if (gz == NULL)
    {
      close (in);
      return util_fail (error, "%s: cannot write", tmp);
    }
  g_autoptr(Sha256) diff = sha256_new ();
  char buf[128 * 1024];
  ssize_t n;
  gboolean ok = TRUE;
  while (ok && (n = read (in, buf, sizeof buf)) > 0)
    {
      sha256_update (diff, buf, n);
      ok = gzwrite (gz, buf, (unsigned) n) == n;
    }
  ok = ok && n == 0;
  close (in);
  if (gzclose (gz) != Z_OK || !ok)
    return util_fail (error, "%s: compressing the layer failed", tmp);
  g_autofree char *diff_hex = sha256_finish_hex (diff);
  *out_diff_id = g_strconcat ("sha256:", diff_hex, NULL);

  g_autoptr(Sha256) sha = sha256_new ();
  g_autoptr(GMappedFile) mapped = g_mapped_file_new (tmp, FALSE, NULL);
  if (mapped == NULL)
    return util_fail (error, "%s: cannot read it back", tmp);
  sha256_update (sha, g_mapped_file_get_contents (mapped), g_mapped_file_get_length (mapped));
  g_autofree char *hex = sha256_finish_hex (sha);
  out->digest = g_strconcat ("sha256:", hex, NULL);
  out->size = (gint64) g_mapped_file_get_length (mapped);
  g_autofree char *path = blob_path (layout, out->digest);
  if (rename (tmp, path) != 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  return TRUE;
}

static char *
json_text (JsonBuilder *b)
{
  g_autoptr(JsonNode) root = json_builder_get_root (b);
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}

static void
member_string (JsonBuilder *b, const char *name, const char *value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_string_value (b, value);
}

static void
descriptor (JsonBuilder *b, const char *media_type, const Blob *blob)
{
  member_string (b, "mediaType", media_type);
  member_string (b, "digest", blob->digest);
  json_builder_set_member_name (b, "size");
  json_builder_add_int_value (b, blob->size);
}

static void
platform (JsonBuilder *b, const OciOptions *opts)
{
  member_string (b, "architecture", opts->architecture);
  member_string (b, "os", "linux");
  if (opts->variant != NULL)
    member_string (b, "variant", opts->variant);
}

static void
annotations (JsonBuilder *b, const char *name, const OciOptions *opts)
{
  if (opts->annotations == NULL || opts->annotations[0] == NULL)
    return;
  json_builder_set_member_name (b, name);
  json_builder_begin_object (b);
  for (guint i = 0; opts->annotations[i] != NULL && opts->annotations[i + 1] != NULL; i += 2)
    member_string (b, opts->annotations[i], opts->annotations[i + 1]);
  json_builder_end_object (b);
}

/* The history entry of each of the N_LAYERS layers. */
static void
history (JsonBuilder *b, const OciOptions *opts, const char *created, guint n_layers)
{
  json_builder_set_member_name (b, "history");
  json_builder_begin_array (b);
  for (guint i = 0; i < n_layers; i++)
    {
      json_builder_begin_object (b);
      member_string (b, "created", created);
      gboolean top = opts->layering == NULL || i == opts->layering->n_layers;
      member_string (b, "created_by", "apt2ostree export --oci");
      if (opts->layering != NULL)
        member_string (b, "comment",
                       top ? "what no package shipped as it is: the dpkg database, what the "
                             "maintainer scripts made or changed, every directory"
                           : opts->layering->comments[i]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static char *
config_json (const OciOptions *opts, const char *created, char **diff_ids, guint n_layers)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  member_string (b, "created", created);
  platform (b, opts);
  json_builder_set_member_name (b, "config");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "Env");
  json_builder_begin_array (b);
  json_builder_add_string_value (b, "PATH=" IMAGE_PATH);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "Cmd");
  json_builder_begin_array (b);
  json_builder_add_string_value (b, "/bin/sh");
  json_builder_end_array (b);
  annotations (b, "Labels", opts);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "rootfs");
  json_builder_begin_object (b);
  member_string (b, "type", "layers");
  json_builder_set_member_name (b, "diff_ids");
  json_builder_begin_array (b);
  for (guint i = 0; i < n_layers; i++)
    json_builder_add_string_value (b, diff_ids[i]);
  json_builder_end_array (b);
  json_builder_end_object (b);
  history (b, opts, created, n_layers);
  json_builder_end_object (b);
  return json_text (b);
}

static char *
manifest_json (const Blob *config, const Blob *layers, guint n_layers, const OciOptions *opts)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "schemaVersion");
  json_builder_add_int_value (b, 2);
  member_string (b, "mediaType", MEDIA_MANIFEST);
  json_builder_set_member_name (b, "config");
  json_builder_begin_object (b);
  descriptor (b, MEDIA_CONFIG, config);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "layers");
  json_builder_begin_array (b);
  for (guint i = 0; i < n_layers; i++)
    {
      json_builder_begin_object (b);
      descriptor (b, MEDIA_LAYER, &layers[i]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  annotations (b, "annotations", opts);
  json_builder_end_object (b);
  return json_text (b);
}

static char *
index_json (const Blob *manifest, const OciOptions *opts)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "schemaVersion");
  json_builder_add_int_value (b, 2);
  member_string (b, "mediaType", MEDIA_INDEX);
  json_builder_set_member_name (b, "manifests");
  json_builder_begin_array (b);
  json_builder_begin_object (b);
  descriptor (b, MEDIA_MANIFEST, manifest);
  json_builder_set_member_name (b, "platform");
  json_builder_begin_object (b);
  platform (b, opts);
  json_builder_end_object (b);
  if (opts->tag != NULL)
    {
      json_builder_set_member_name (b, "annotations");
      json_builder_begin_object (b);
      member_string (b, "org.opencontainers.image.ref.name", opts->tag);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
  json_builder_end_array (b);
  json_builder_end_object (b);
  return json_text (b);
}

void
oci_layering_free (OciLayering *layering)
{
  g_free (layering->mtimes);
  g_strfreev (layering->comments);
  g_clear_pointer (&layering->owned, g_hash_table_unref);
  g_free (layering);
}

static guint
layer_of (const char *path, const char *checksum, gpointer user_data)
{
  const OciLayering *layering = user_data;
  const OciOwned *owned = g_hash_table_lookup (layering->owned, path);
  return owned != NULL && g_str_equal (owned->checksum, checksum) ? owned->layer
                                                                  : layering->n_layers;
}

/* One layer to compress, on a thread of its own. */
typedef struct {
  const char *layout, *tar;
  Blob blob;
  char *diff_id;
  GError *error;
} LayerJob;

static void
layer_job_run (gpointer data, gpointer user_data)
{
  LayerJob *job = data;
  (void) write_layer (job->layout, job->tar, &job->blob, &job->diff_id, &job->error);
  (void) unlink (job->tar);
}

/* Each of TARS compressed into a blob of LAYOUT (removed then), on as
 * many threads as there are processors: gzip is most of an export's time,
 * and the layers are independent. */
static gboolean
write_layers (const char *layout, GPtrArray *tars, Blob *layers, char **diff_ids, GError **error)
{
  g_autofree LayerJob *jobs = g_new0 (LayerJob, tars->len);
  GThreadPool *pool = g_thread_pool_new (layer_job_run, NULL,
                                         (int) MIN (g_get_num_processors (), tars->len), FALSE,
                                         NULL);
  for (guint i = 0; i < tars->len; i++)
    {
      jobs[i].layout = layout;
      jobs[i].tar = tars->pdata[i];
      g_thread_pool_push (pool, &jobs[i], NULL);
    }
  g_thread_pool_free (pool, FALSE, TRUE);
  gboolean ok = TRUE;
  for (guint i = 0; i < tars->len; i++)
    {
      layers[i] = jobs[i].blob;
      diff_ids[i] = jobs[i].diff_id;
      if (jobs[i].error != NULL && ok)
        {
          g_propagate_error (error, g_steal_pointer (&jobs[i].error));
          ok = FALSE;
        }
      g_clear_error (&jobs[i].error);
    }
  for (guint i = 0; !ok && i < tars->len; i++)
    {
      blob_clear (&layers[i]);
      g_clear_pointer (&diff_ids[i], g_free);
    }
  return ok;
}

/* The image's layers as plain tars in LAYOUT: their paths, N_LAYERS of them. */
static GPtrArray *
write_tars (OstreeRepo *repo, const char *commit, const char *layout, const OciOptions *opts,
            gint64 timestamp, GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) tars = g_ptr_array_new_with_free_func (g_free);
  const OciLayering *layering = opts->layering;
  if (layering == NULL)
    {
      g_ptr_array_add (tars, g_build_filename (layout, "layer.tar", NULL));
      if (!tarball_write_commit (repo, commit, tars->pdata[0], cancellable, error))
        return NULL;
      return g_steal_pointer (&tars);
    }
  guint n = layering->n_layers + 1;
  g_autofree TarballLayer *layers = g_new0 (TarballLayer, n);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *name = g_strdup_printf ("layer-%u.tar", i);
      g_ptr_array_add (tars, g_build_filename (layout, name, NULL));
      layers[i].file = tars->pdata[i];
      layers[i].mtime = i < layering->n_layers ? layering->mtimes[i] : timestamp;
    }
  if (!tarball_write_layers (repo, commit, layers, n, layer_of, (gpointer) layering, cancellable,
                             error))
    return NULL;
  return g_steal_pointer (&tars);
}

/* The layout in LAYOUT (blobs/sha256 made): layers, config, manifest,
 * index.json, oci-layout. */
static gboolean
write_layout (OstreeRepo *repo, const char *commit, const char *layout, const OciOptions *opts,
              gint64 timestamp, GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) tars = write_tars (repo, commit, layout, opts, timestamp, cancellable,
                                          error);
  if (tars == NULL)
    return FALSE;
  guint n = tars->len;
  g_autofree Blob *layers = g_new0 (Blob, n);
  g_auto(GStrv) diff_ids = g_new0 (char *, n + 1);
  if (!write_layers (layout, tars, layers, diff_ids, error))
    return FALSE;

  g_autoptr(GDateTime) t = g_date_time_new_from_unix_utc (timestamp);
  g_autofree char *created = g_date_time_format (t, "%Y-%m-%dT%H:%M:%SZ");
  g_autofree char *config_text = config_json (opts, created, diff_ids, n);
  g_auto(Blob) config = { NULL };
  gboolean ok = write_blob (layout, config_text, &config, error);
  g_autofree char *manifest_text = ok ? manifest_json (&config, layers, n, opts) : NULL;
  for (guint i = 0; i < n; i++)
    blob_clear (&layers[i]);
  g_auto(Blob) manifest = { NULL };
  if (!ok || !write_blob (layout, manifest_text, &manifest, error))
    return FALSE;

  g_autofree char *index_text = index_json (&manifest, opts);
  g_autofree char *index_path = g_build_filename (layout, "index.json", NULL);
  g_autofree char *layout_path = g_build_filename (layout, "oci-layout", NULL);
  g_autoptr(GError) local_error = NULL;
  if (!g_file_set_contents (index_path, index_text, -1, &local_error)
      || !g_file_set_contents (layout_path, "{\"imageLayoutVersion\":\"1.0.0\"}", -1, &local_error))
    return util_fail (error, "%s: %s", layout, local_error->message);
  return TRUE;
}

/* --- the layout as a tar archive ------------------------------------------ */

static gboolean
archive_add (struct archive *a, const char *layout, const char *name, gint64 mtime, GError **error)
{
  g_autofree char *path = g_build_filename (layout, name, NULL);
  struct stat st;
  if (lstat (path, &st) != 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  struct archive_entry *entry = archive_entry_new ();
  archive_entry_set_pathname (entry, name);
  archive_entry_set_mtime (entry, mtime, 0);
  archive_entry_set_uid (entry, 0);
  archive_entry_set_gid (entry, 0);
  gboolean dir = S_ISDIR (st.st_mode);
  archive_entry_set_filetype (entry, dir ? AE_IFDIR : AE_IFREG);
  archive_entry_set_perm (entry, dir ? 0755 : 0644);
  archive_entry_set_size (entry, dir ? 0 : st.st_size);
  gboolean ok = archive_write_header (a, entry) == ARCHIVE_OK;
  archive_entry_free (entry);
  if (ok && !dir)
    {
      g_autoptr(GMappedFile) mapped = g_mapped_file_new (path, FALSE, NULL);
      ok = mapped != NULL
           && archive_write_data (a, g_mapped_file_get_contents (mapped),
                                  g_mapped_file_get_length (mapped))
                == (la_ssize_t) g_mapped_file_get_length (mapped);
    }
  if (!ok)
    return util_fail (error, "writing %s into the archive: %s", name, archive_error_string (a));
  return TRUE;
}

/* LAYOUT as an uncompressed tar at DEST (through a temporary file): the
 * entries in a fixed order, dated MTIME, owned by root. */
static gboolean
archive_layout (const char *layout, const char *dest, gint64 mtime, GError **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (names, g_strdup ("oci-layout"));
  g_ptr_array_add (names, g_strdup ("index.json"));
  g_ptr_array_add (names, g_strdup ("blobs"));
  g_ptr_array_add (names, g_strdup ("blobs/sha256"));
  g_autofree char *blobs = g_build_filename (layout, "blobs", "sha256", NULL);
  g_autoptr(GDir) dir = g_dir_open (blobs, 0, NULL);
  g_autoptr(GPtrArray) blob_names = g_ptr_array_new_with_free_func (g_free);
  for (const char *n; dir != NULL && (n = g_dir_read_name (dir)) != NULL;)
    g_ptr_array_add (blob_names, g_strconcat ("blobs/sha256/", n, NULL));
  g_ptr_array_sort (blob_names, util_compare_strings);
  for (guint i = 0; i < blob_names->len; i++)
    g_ptr_array_add (names, g_strdup (blob_names->pdata[i]));

  g_autofree char *tmp = g_strconcat (dest, ".tmp", NULL);
  struct archive *a = archive_write_new ();
  archive_write_set_format_pax_restricted (a);
  gboolean ok = archive_write_open_filename (a, tmp) == ARCHIVE_OK
                || util_fail (error, "%s: %s", tmp, archive_error_string (a));
  for (guint i = 0; ok && i < names->len; i++)
    ok = archive_add (a, layout, names->pdata[i], mtime, error);
  if (archive_write_close (a) != ARCHIVE_OK && ok)
    ok = util_fail (error, "%s: %s", tmp, archive_error_string (a));
  archive_write_free (a);
  if (ok && rename (tmp, dest) != 0)
    ok = util_fail (error, "%s: %s", dest, g_strerror (errno));
  if (!ok)
    (void) unlink (tmp);
  return ok;
}

/* DEST may be a new or an empty directory; an empty one is replaced. */
static gboolean
dest_dir_usable (const char *dest, GError **error)
{
  struct stat st;
  if (lstat (dest, &st) != 0)
    return errno == ENOENT || util_fail (error, "%s: %s", dest, g_strerror (errno));
  if (!S_ISDIR (st.st_mode))
    return util_fail (error, "%s exists and is not a directory; --oci needs a new or empty "
                      "directory, or a FILE.tar", dest);
  if (rmdir (dest) != 0)
    return util_fail (error, "%s exists and is not empty; --oci needs a new or empty directory",
                      dest);
  return TRUE;
}

gboolean
oci_write_commit (OstreeRepo *repo, const char *commit, const char *dest, gboolean as_tar,
                  const OciOptions *opts, GCancellable *cancellable, GError **error)
{
  gint64 timestamp;
  if (!repo_commit_timestamp (repo, commit, &timestamp, error))
    return FALSE;

  g_autofree char *work = scratch_beside (dest, "oci", error);
  if (work == NULL)
    return FALSE;
  g_autofree char *blobs = g_build_filename (work, "blobs", "sha256", NULL);
  gboolean ok = g_mkdir_with_parents (blobs, 0755) == 0
                || util_fail (error, "%s: %s", blobs, g_strerror (errno));
  ok = ok && write_layout (repo, commit, work, opts, timestamp, cancellable, error);
  if (ok && as_tar)
    ok = archive_layout (work, dest, timestamp, error);
  else if (ok)
    {
      ok = dest_dir_usable (dest, error);
      if (ok && rename (work, dest) != 0)
        ok = util_fail (error, "%s: %s", dest, g_strerror (errno));
      if (ok)
        {
          (void) chmod (dest, 0755);  /* mkdtemp's 0700 */
          return TRUE;
        }
    }
  (void) scratch_rm_rf (work, NULL);
  return ok;
}
