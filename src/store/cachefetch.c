/* cachefetch.c — a commit of an archive repository fetched into the
 * store's own writer; see cachefetch.h.
 *
 * The walk: the ref, the commit, its detached metadata, one at a time;
 * then the tree with libcurl's multi interface, many keep-alive
 * connections, dirtree and dirmeta objects ahead of content, so that each
 * dirtree that arrives adds its children to the queue at once.  Metadata
 * is checked and written as it arrives, on this thread; a regular file's
 * content is inflated, checked and written into a file linked nowhere on
 * the decoder threads, and taken into the writer's transaction here. */
#define _GNU_SOURCE
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zlib.h>

#include "base/progress.h"
#include "base/sha256.h"
#include "base/util.h"
#include "store/cachefetch.h"
#include "barestore/objects.h"
#include "barestore/partial.h"

G_DEFINE_QUARK (apt2ostree-cachefetch-error-quark, cachefetch_error)

/* What a transfer received, and the most it may receive (LIMIT bytes:
 * TOO_LARGE turns TRUE and the transfer is stopped past it). */
typedef struct {
  GByteArray *data;
  guint64 limit;
  gboolean too_large;
} Body;

/* The most a ref's file may hold: a checksum line (and a CR before its
 * LF).  A metadata object (commit, detached metadata, dirtree, dirmeta)
 * holds at most METADATA_BYTES_MAX bytes, a .filez FILEZ_BYTES_MAX
 * (its content, inflated, at most CONTENT_BYTES_MAX): a server cannot
 * make this program hold more. */
#define REF_BYTES_MAX 66
#define METADATA_BYTES_MAX (16 * 1024 * 1024)
#define FILEZ_BYTES_MAX (512 * 1024 * 1024)
#define CONTENT_BYTES_MAX (G_GUINT64_CONSTANT (4) * 1024 * 1024 * 1024)

/* Content up to this size is inflated whole (libdeflate, fast); larger
 * content a piece at a time into its file, so what a decoder holds stays
 * this small whatever size a header claims. */
#define INFLATE_WHOLE_MAX (16 * 1024 * 1024)

/* An object to fetch. */
typedef struct {
  ObjectsType type;
  char checksum[65];
} Want;

typedef struct _Fetch Fetch;

/* One transfer and its buffer. */
typedef struct {
  Fetch *f;
  CURL *curl;
  Want want;
  gboolean busy;
  gboolean large;             /* holds one of the LARGE_MAX permits */
  Body body;
  gint64 started;             /* monotonic µs, time paused not counted */
  gint64 paused_at;           /* waiting for a permit since, or 0 */
  char errbuf[CURL_ERROR_SIZE];
} Slot;

struct _Fetch {
  ObjectWriter *w;
  int repo_dfd;               /* not owned */
  int objects_dfd;            /* the repository's objects/ */
  const char *url;            /* the cache, without a trailing slash */
  CURLM *multi;
  Slot *slots;
  guint n_slots;
  guint running;
  GQueue meta;                /* of Want: dirtree and dirmeta objects */
  GQueue content;             /* of Want: .filez */
  GHashTable *seen;           /* "CHECKSUM.TYPE" of every object wanted */
  GThreadPool *decoders;      /* of Decoded: .filez decoded and made off this thread */
  GAsyncQueue *decoded;       /* of Decoded: back, to write */
  guint decoding;             /* handed to the decoders and not written yet */
  guint64 decoding_bytes;     /* their .filez bytes */
  gint64 object_timeout;      /* µs: each object's transfer ends within it */
  gint64 deadline;            /* monotonic µs: the whole fetch ends by then */
  gboolean pausable;          /* not file:// (libcurl reads a file whole) */
  guint large;                /* LARGE_MAX permits held */
  GQueue paused;              /* of Slot: transfers waiting for one */
  /* What the fetch says as it goes (a long pull is not silent): on a
   * terminal's line (standard error) and to the build (base/progress.h). */
  const char *ref;
  guint objects_done;
  guint64 bytes_done;
  gint64 start_us;
  gint64 said_us;
  gboolean terminal;
  gboolean drawn;
};

/* Content handed to a decoder thread (which inflates and makes it) before
 * this thread adds it: at most this many at once, each an open file once
 * made, and no new content fetched while their bytes pass DECODING_BYTES
 * (memory stays bounded when the network outruns the decoders: the
 * largest libraries of a CUDA image are hundreds of MB each). */
#define DECODING_MAX OBJECT_WRITER_MADE_MAX
#define DECODING_BYTES (64 * 1024 * 1024)

/* A body that grows past LARGE_BYTES needs one of LARGE_MAX permits,
 * held until its object is written; a transfer without one is paused
 * where it stands.  Many transfers are in flight at once (a distant cache
 * needs them), and the largest files of an image (a CUDA image's
 * libraries) sit side by side in one directory: without this they would
 * all be in memory at once. */
#define LARGE_BYTES (1024 * 1024)
#define LARGE_MAX 4

/* A fetched .filez: its header read by a decoder, a regular file's
 * content inflated, checked and made there too (a symlink is left to the
 * main thread), then added by the main thread. */
typedef struct {
  Want want;
  GByteArray *body;           /* the .filez */
  guint64 body_size;
  guint32 uid, gid, mode;
  char *target;               /* a symlink's target */
  GVariant *xattrs;           /* NULL: none */
  ObjectWriterMade *made;     /* a regular file's */
  gboolean large;             /* holds a LARGE_MAX permit */
  GError *error;
} Decoded;

static void
decoded_free (gpointer data)
{
  Decoded *d = data;
  g_clear_pointer (&d->body, g_byte_array_unref);
  g_free (d->target);
  g_clear_pointer (&d->xattrs, g_variant_unref);
  g_clear_pointer (&d->made, object_writer_made_free);
  g_clear_error (&d->error);
  g_free (d);
}

guint
cachefetch_connections (void)
{
  const char *env = g_getenv ("APT2OSTREE_CACHE_CONNECTIONS");
  guint64 n;
  if (env != NULL && g_ascii_string_to_unsigned (env, 10, 1, 64, &n, NULL))
    return (guint) n;
  return 32;
}

/* Seconds from the environment variable NAME (1 to a day), or FALLBACK. */
static guint
env_seconds (const char *name, guint fallback)
{
  const char *env = g_getenv (name);
  guint64 n;
  if (env != NULL && g_ascii_string_to_unsigned (env, 10, 1, 24 * 3600, &n, NULL))
    return (guint) n;
  return fallback;
}

guint
cachefetch_object_timeout (void)
{
  return env_seconds ("APT2OSTREE_CACHE_OBJECT_TIMEOUT", 300);
}

guint
cachefetch_timeout (void)
{
  return env_seconds ("APT2OSTREE_CACHE_TIMEOUT", 3600);
}

static void
global_init (void)
{
  static gsize initialized = 0;
  if (g_once_init_enter (&initialized))
    {
      curl_global_init (CURL_GLOBAL_DEFAULT);
      g_once_init_leave (&initialized, 1);
    }
}

/* N more bytes fit in BODY?  When not, BODY is marked too large. */
static gboolean
body_fits (Body *body, size_t n)
{
  if (body->data->len + (guint64) n <= body->limit)
    return TRUE;
  body->too_large = TRUE;
  return FALSE;
}

static size_t
body_write (char *ptr, size_t size, size_t nmemb, void *user_data)
{
  Body *body = user_data;
  /* (Fewer bytes taken than given stops the transfer.) */
  if (!body_fits (body, size * nmemb))
    return 0;
  g_byte_array_append (body->data, (const guint8 *) ptr, size * nmemb);
  return size * nmemb;
}

/* The most an object of TYPE may be, fetched. */
static guint64
body_limit (ObjectsType type)
{
  return type == OBJECTS_FILE ? FILEZ_BYTES_MAX : METADATA_BYTES_MAX;
}

/* CURL set up to fetch URL into BODY, of at most LIMIT bytes. */
static void
setup_easy (CURL *curl, const char *url, Body *body, guint64 limit, char *errbuf)
{
  curl_easy_reset (curl);
  curl_easy_setopt (curl, CURLOPT_URL, url);
  curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, errbuf);
  errbuf[0] = '\0';
  curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (curl, CURLOPT_FAILONERROR, 1L);
  curl_easy_setopt (curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt (curl, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "http,https,file");
  curl_easy_setopt (curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt (curl, CURLOPT_USERAGENT, "apt2ostree/" PACKAGE_VERSION);
  curl_easy_setopt (curl, CURLOPT_CONNECTTIMEOUT, 30L);
  /* A server that stops sending is a failed fetch, not a hang. */
  curl_easy_setopt (curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt (curl, CURLOPT_LOW_SPEED_TIME, 30L);
  /* (A length the server announces is refused before its body comes.) */
  curl_easy_setopt (curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t) limit);
  curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, body_write);
  curl_easy_setopt (curl, CURLOPT_WRITEDATA, body);
  g_byte_array_set_size (body->data, 0);
  body->limit = limit;
  body->too_large = FALSE;
}

/* Was CODE (with CURL's status) "no such file"? */
static gboolean
is_missing (CURL *curl, CURLcode code)
{
  long status = 0;
  curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &status);
  /* (An error page longer than the body allowed stops on its length.) */
  return code == CURLE_FILE_COULDNT_READ_FILE || (code != CURLE_OK && (status == 404 || status == 410));
}

/* One line for a failed transfer of URL into BODY. */
static gboolean
transfer_failed (GError **error, CURL *curl, CURLcode code, const Body *body, const char *errbuf,
                 const char *url)
{
  long status = 0;
  curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &status);
  const char *why = *errbuf != '\0' ? errbuf : curl_easy_strerror (code);
  if (code == CURLE_HTTP_RETURNED_ERROR || status >= 400)
    return util_fail (error, "%s: HTTP status %ld", url, status);
  if (body->too_large || code == CURLE_FILESIZE_EXCEEDED)
    return util_fail (error, "%s: refused: longer than %" G_GUINT64_FORMAT " bytes, the most it may be",
                      url, body->limit);
  return util_fail (error, "%s: %s", url, why);
}

/* One line: the transfer of URL ran past a deadline of F's. */
static gboolean
too_slow (Fetch *f, const char *url, gboolean whole, GError **error)
{
  if (whole)
    g_set_error (error, CACHEFETCH_ERROR, CACHEFETCH_ERROR_TIMED_OUT,
                 "%s: the fetch did not end within %u s ($APT2OSTREE_CACHE_TIMEOUT)", url,
                 cachefetch_timeout ());
  else
    g_set_error (error, CACHEFETCH_ERROR, CACHEFETCH_ERROR_TIMED_OUT,
                 "%s: not fetched within %u s ($APT2OSTREE_CACHE_OBJECT_TIMEOUT)", url,
                 (guint) (f->object_timeout / G_USEC_PER_SEC));
  return FALSE;
}

/* URL's bytes (LIMIT at most) in one transfer, within F's deadlines;
 * *OUT_MISSING (when not NULL) turns TRUE and NULL is returned without an
 * error when it does not exist. */
static GBytes *
fetch_one (Fetch *f, CURL *curl, const char *url, guint64 limit, gboolean *out_missing,
           GError **error)
{
  char errbuf[CURL_ERROR_SIZE];
  g_autoptr(GByteArray) data = g_byte_array_new ();
  Body body = { data, 0, FALSE };
  setup_easy (curl, url, &body, limit, errbuf);
  gint64 left = f->deadline - g_get_monotonic_time ();
  gboolean whole = left < f->object_timeout;
  if (left <= 0)
    return too_slow (f, url, TRUE, error), NULL;
  curl_easy_setopt (curl, CURLOPT_TIMEOUT_MS, (long) (MIN (left, f->object_timeout) / 1000));
  CURLcode code = curl_easy_perform (curl);
  if (code == CURLE_OK)
    return g_byte_array_free_to_bytes (g_steal_pointer (&data));
  if (out_missing != NULL && is_missing (curl, code))
    {
      *out_missing = TRUE;
      return NULL;
    }
  if (code == CURLE_OPERATION_TIMEDOUT && !body.too_large)
    return too_slow (f, url, whole, error), NULL;
  return transfer_failed (error, curl, code, &body, errbuf, url), NULL;
}

static char *
object_url (Fetch *f, const char *checksum, const char *suffix)
{
  char path[OBJECTS_REPO_PATH_MAX];
  objects_repo_path (path, checksum, suffix);
  return g_strconcat (f->url, "/", path, NULL);
}

static const char *
remote_suffix (ObjectsType type)
{
  return type == OBJECTS_FILE ? "filez" : objects_type_name (type);
}

/* Do BYTES hash to CHECKSUM (a metadata object's checksum)? */
static gboolean
bytes_have_checksum (GBytes *bytes, const char *checksum)
{
  g_autoptr(Sha256) sha = sha256_new ();
  gsize len;
  const guint8 *data = g_bytes_get_data (bytes, &len);
  sha256_update (sha, data, len);
  g_autofree char *got = sha256_finish_hex (sha);
  return strcmp (got, checksum) == 0;
}

/* BYTES as a metadata object of TYPE named CHECKSUM, fetched from URL:
 * its checksum and its form checked, or NULL. */
static GVariant *
checked_metadata (GBytes *bytes, const char *type, const char *checksum, const char *url,
                  GError **error)
{
  if (!bytes_have_checksum (bytes, checksum))
    return util_fail (error, "%s: damaged (its checksum is not %s)", url, checksum), NULL;
  g_autoptr(GVariant) v = g_variant_ref_sink (
      g_variant_new_from_bytes (G_VARIANT_TYPE (type), bytes, FALSE));
  if (!g_variant_is_normal_form (v))
    return util_fail (error, "%s: not a %s variant in normal form", url, type), NULL;
  return g_steal_pointer (&v);
}

/* Does the repository hold the object PATH (from objects_type_path())? */
static gboolean
have_local (Fetch *f, const char *path)
{
  struct stat st;
  return fstatat (f->objects_dfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static gboolean walk_dirtree (Fetch *f, GVariant *dirtree, const char *url, GError **error);

/* Fetch the object CHECKSUM of TYPE unless it is wanted already or the
 * repository has it; a dirtree the repository has is walked from there
 * (a commit left partial may lack what is under it). */
static gboolean
want (Fetch *f, ObjectsType type, const char *checksum, GError **error)
{
  char path[OBJECTS_PATH_MAX];
  objects_type_path (path, checksum, type);
  if (!g_hash_table_add (f->seen, g_strdup (path)))
    return TRUE;
  if (have_local (f, path))
    {
      if (type != OBJECTS_DIR_TREE)
        return TRUE;
      g_autoptr(GBytes) bytes = util_read_at (f->objects_dfd, path, 64 * 1024 * 1024, NULL);
      if (bytes != NULL && bytes_have_checksum (bytes, checksum))
        {
          g_autoptr(GVariant) v = g_variant_ref_sink (
              g_variant_new_from_bytes (G_VARIANT_TYPE ("(a(say)a(sayay))"), bytes, FALSE));
          return walk_dirtree (f, v, path, error);
        }
    }
  Want *w = g_new (Want, 1);
  w->type = type;
  g_strlcpy (w->checksum, checksum, sizeof w->checksum);
  g_queue_push_tail (type == OBJECTS_FILE ? &f->content : &f->meta, w);
  return TRUE;
}

/* A dirtree's entry name: one path component. */
static gboolean
name_ok (const char *name)
{
  return *name != '\0' && strchr (name, '/') == NULL && strcmp (name, ".") != 0
         && strcmp (name, "..") != 0;
}

/* The 32-byte checksum CSUM_V as hex, or NULL when it is not 32 bytes. */
static char *
checksum_of (GVariant *csum_v)
{
  if (g_variant_n_children (csum_v) != 32)
    return NULL;
  return objects_checksum_from_bytes_v (csum_v);
}

/* The name of the I-th entry of ENTRIES (a dirtree's files or dirs). */
static const char *
entry_name (GVariant *entries, gsize i)
{
  g_autoptr(GVariant) entry = g_variant_get_child_value (entries, i);
  g_autoptr(GVariant) name = g_variant_get_child_value (entry, 0);
  /* (ENTRIES holds the string: it outlives NAME.) */
  return g_variant_get_string (name, NULL);
}

/* Are ENTRIES (of a dirtree at URL) sorted by name, each name once, as
 * OSTree requires? */
static gboolean
check_sorted (GVariant *entries, const char *url, GError **error)
{
  gsize n = g_variant_n_children (entries);
  for (gsize i = 1; i < n; i++)
    {
      const char *prev = entry_name (entries, i - 1), *name = entry_name (entries, i);
      if (strcmp (prev, name) >= 0)
        return util_fail (error, "%s: refused: its entries are not sorted by name (\"%s\" after \"%s\")",
                          url, name, prev);
    }
  return TRUE;
}

/* FILES and DIRS of a dirtree at URL, each sorted: no name in both. */
static gboolean
check_no_clash (GVariant *files, GVariant *dirs, const char *url, GError **error)
{
  gsize n_files = g_variant_n_children (files), n_dirs = g_variant_n_children (dirs);
  gsize i = 0, j = 0;
  while (i < n_files && j < n_dirs)
    {
      const char *file = entry_name (files, i), *dir = entry_name (dirs, j);
      int cmp = strcmp (file, dir);
      if (cmp == 0)
        return util_fail (error, "%s: refused: \"%s\" is both a file and a directory", url, file);
      if (cmp < 0)
        i++;
      else
        j++;
    }
  return TRUE;
}

/* Want every object DIRTREE (from URL, for messages) names, once its
 * entries are checked as "ostree fsck" checks them. */
static gboolean
walk_dirtree (Fetch *f, GVariant *dirtree, const char *url, GError **error)
{
  g_autoptr(GVariant) files = g_variant_get_child_value (dirtree, 0);
  g_autoptr(GVariant) dirs = g_variant_get_child_value (dirtree, 1);
  if (!check_sorted (files, url, error) || !check_sorted (dirs, url, error)
      || !check_no_clash (files, dirs, url, error))
    return FALSE;
  gsize n_files = g_variant_n_children (files), n_dirs = g_variant_n_children (dirs);
  for (gsize i = 0; i < n_files + n_dirs; i++)
    {
      gboolean is_file = i < n_files;
      g_autoptr(GVariant) entry = g_variant_get_child_value (is_file ? files : dirs,
                                                             is_file ? i : i - n_files);
      const char *name = NULL;
      g_autoptr(GVariant) a = NULL, b = NULL;
      if (is_file)
        g_variant_get (entry, "(&s@ay)", &name, &a);
      else
        g_variant_get (entry, "(&s@ay@ay)", &name, &a, &b);
      g_autofree char *first = checksum_of (a);
      g_autofree char *second = b != NULL ? checksum_of (b) : NULL;
      if (!name_ok (name) || first == NULL || (!is_file && second == NULL))
        return util_fail (error, "%s: a bad entry \"%s\"", url, name);
      if (!want (f, is_file ? OBJECTS_FILE : OBJECTS_DIR_TREE, first, error)
          || (!is_file && !want (f, OBJECTS_DIR_META, second, error)))
        return FALSE;
    }
  return TRUE;
}

/* The dirtree or dirmeta WANT, fetched from URL as BYTES: checked,
 * written, and a dirtree walked. */
static gboolean
take_metadata (Fetch *f, const Want *want, GBytes *bytes, const char *url, GError **error)
{
  gboolean tree = want->type == OBJECTS_DIR_TREE;
  g_autoptr(GVariant) v = checked_metadata (bytes, tree ? "(a(say)a(sayay))" : "(uuua(ayay))",
                                            want->checksum, url, error);
  if (v == NULL)
    return FALSE;
  g_autofree char *written = object_writer_metadata (f->w, want->type, v, NULL, error);
  if (written == NULL)
    return FALSE;
  return !tree || walk_dirtree (f, v, url, error);
}

/* DATA (LEN bytes of raw deflate) inflated into exactly SIZE bytes, all
 * of DATA used. */
static guint8 *
inflate_exactly (const guint8 *data, gsize len, guint64 size, GError **error)
{
  struct libdeflate_decompressor *dec = libdeflate_alloc_decompressor ();
  if (dec == NULL)
    return util_fail (error, "out of memory"), NULL;
  g_autofree guint8 *out = g_malloc (MAX (size, 1));
  size_t in_used = 0, out_len = 0;
  enum libdeflate_result r = libdeflate_deflate_decompress_ex (dec, data, len, out, size,
                                                               &in_used, &out_len);
  libdeflate_free_decompressor (dec);
  if (r != LIBDEFLATE_SUCCESS || out_len != size || in_used != len)
    return util_fail (error, "its compressed content is damaged"), NULL;
  return g_steal_pointer (&out);
}

/* Raw deflate inflated a piece at a time (an ObjectWriterRead). */
typedef struct {
  z_stream z;
  gboolean ended;
} Inflater;

static gssize
inflater_read (gpointer user_data, guint8 *buf, gsize len, GError **error)
{
  Inflater *in = user_data;
  in->z.next_out = buf;
  in->z.avail_out = (uInt) MIN (len, G_MAXUINT);
  /* (A call may use input and give nothing yet: 0 is the end only once
   * the stream says so.) */
  while (!in->ended && in->z.next_out == buf)
    {
      int r = inflate (&in->z, Z_NO_FLUSH);
      in->ended = r == Z_STREAM_END;
      if ((r != Z_OK && !in->ended) || (in->ended && in->z.avail_in != 0))
        return util_fail (error, "its compressed content is damaged"), -1;
    }
  return in->z.next_out - buf;
}

/* DATA (LEN bytes of raw deflate) inflated a piece at a time into a file
 * made with W, SIZE bytes with its header's UID, GID, MODE and XATTRS,
 * checked against EXPECTED. */
static ObjectWriterMade *
inflate_made (ObjectWriter *w, const char *expected, guint32 uid, guint32 gid, guint32 mode,
              GVariant *xattrs, const guint8 *data, gsize len, guint64 size, GError **error)
{
  Inflater in = { 0 };
  if (inflateInit2 (&in.z, -MAX_WBITS) != Z_OK)
    return util_fail (error, "out of memory"), NULL;
  in.z.next_in = (Bytef *) data;
  in.z.avail_in = (uInt) len;
  ObjectWriterMade *made = object_writer_make_checked_stream (w, expected, uid, gid, mode, xattrs,
                                                              size, inflater_read, &in, error);
  inflateEnd (&in.z);
  return made;
}

/* A .filez's header (see cachefetch.h) and where its content starts. */
static GVariant *
filez_header (const guint8 *data, gsize len, gsize *out_offset, GError **error)
{
  guint32 be;
  if (len < 8)
    return util_fail (error, "too short"), NULL;
  memcpy (&be, data, 4);
  guint32 hlen = GUINT32_FROM_BE (be);
  if (hlen > len - 8)
    return util_fail (error, "its header is cut short"), NULL;
  g_autoptr(GBytes) hbytes = g_bytes_new (data + 8, hlen);
  GVariant *header = g_variant_ref_sink (
      g_variant_new_from_bytes (G_VARIANT_TYPE ("(tuuuusa(ayay))"), hbytes, FALSE));
  *out_offset = 8 + hlen;
  return header;
}

/* D's .filez read: its header into D, a regular file's content inflated,
 * checked and made with F's writer.  (On a decoder thread.) */
static gboolean
decode (Fetch *f, Decoded *d, GError **error)
{
  const guint8 *data = d->body->data;
  gsize len = d->body->len, offset;
  g_autoptr(GVariant) header = filez_header (data, len, &offset, error);
  if (header == NULL)
    return FALSE;
  guint64 size_be;
  guint32 rdev;
  g_autoptr(GVariant) xattrs = NULL;
  g_variant_get (header, "(tuuuusa(ayay))", &size_be, &d->uid, &d->gid, &d->mode, &rdev, &d->target,
                 NULL);
  xattrs = g_variant_get_child_value (header, 6);
  guint64 size = GUINT64_FROM_BE (size_be);
  d->uid = GUINT32_FROM_BE (d->uid), d->gid = GUINT32_FROM_BE (d->gid);
  d->mode = GUINT32_FROM_BE (d->mode);
  if (g_variant_n_children (xattrs) > 0)
    d->xattrs = g_steal_pointer (&xattrs);
  /* (Deflate expands at most about 1032 times: a larger size is a lie.) */
  if (rdev != 0 || !(S_ISREG (d->mode) || (d->mode == (S_IFLNK | 0777) && size == 0))
      || size > (guint64) (len - offset) * 1032 + 64)
    return util_fail (error, "its header is not one of a regular file or a symlink");
  if (size > CONTENT_BYTES_MAX)
    return util_fail (error, "its header says %" G_GUINT64_FORMAT " bytes, more than %" G_GUINT64_FORMAT,
                      size, CONTENT_BYTES_MAX);
  if (S_ISLNK (d->mode))
    return TRUE;
  if (size > INFLATE_WHOLE_MAX)
    {
      d->made = inflate_made (f->w, d->want.checksum, d->uid, d->gid, d->mode, d->xattrs,
                              data + offset, len - offset, size, error);
      return d->made != NULL;
    }
  g_autofree guint8 *content = inflate_exactly (data + offset, len - offset, size, error);
  if (content == NULL)
    return FALSE;
  d->made = object_writer_make_checked (f->w, d->want.checksum, d->uid, d->gid, d->mode,
                                        d->xattrs, content, size, error);
  return d->made != NULL;
}

/* A decoder thread's job. */
static void
decode_job (gpointer data, gpointer user_data)
{
  Decoded *d = data;
  Fetch *f = user_data;
  (void) decode (f, d, &d->error);
  g_clear_pointer (&d->body, g_byte_array_unref);
  g_async_queue_push (f->decoded, d);
  curl_multi_wakeup (f->multi);
}

/* The decoded content object D taken into the writer: a regular file as
 * the decoder made it, a symlink checked against its checksum and
 * written. */
static gboolean
write_decoded (Fetch *f, Decoded *d, GError **error)
{
  if (d->error != NULL)
    return g_propagate_error (error, g_steal_pointer (&d->error)), FALSE;
  if (S_ISLNK (d->mode))
    {
      g_autoptr(GBytes) h = objects_file_header (d->uid, d->gid, d->mode, d->target, d->xattrs,
                                                 error);
      g_autofree char *sum = h != NULL ? objects_content_checksum (h, NULL, 0) : NULL;
      if (sum == NULL)
        return FALSE;
      if (strcmp (sum, d->want.checksum) != 0)
        return util_fail (error, "its content has checksum %s", sum);
      g_autofree char *written = object_writer_symlink (f->w, d->uid, d->gid, d->target,
                                                        d->xattrs, error);
      return written != NULL;
    }
  g_autofree char *written = object_writer_add_made (f->w, g_steal_pointer (&d->made), error);
  return written != NULL;
}

/* Slot S's transfer wrote PTR: a body past LARGE_BYTES takes a permit or
 * pauses its transfer until one is free (libcurl hands the same bytes
 * again when it resumes). */
static size_t
slot_write (char *ptr, size_t size, size_t nmemb, void *user_data)
{
  Slot *s = user_data;
  size_t n = size * nmemb;
  if (!body_fits (&s->body, n))
    return 0;
  if (s->f->pausable && !s->large && s->body.data->len + n > LARGE_BYTES)
    {
      if (s->f->large >= LARGE_MAX)
        {
          g_queue_push_tail (&s->f->paused, s);
          s->paused_at = g_get_monotonic_time ();
          return CURL_WRITEFUNC_PAUSE;
        }
      s->large = TRUE;
      s->f->large++;
    }
  g_byte_array_append (s->body.data, (const guint8 *) ptr, n);
  return n;
}

/* A large object is written: its permit to the next paused transfer. */
static void
large_release (Fetch *f)
{
  f->large--;
  Slot *s;
  while (f->large < LARGE_MAX && (s = g_queue_pop_head (&f->paused)) != NULL)
    {
      /* (Its clock stood still while it waited.) */
      s->started += g_get_monotonic_time () - s->paused_at;
      s->paused_at = 0;
      curl_easy_pause (s->curl, CURLPAUSE_CONT);
    }
}

/* Write what the decoders gave back: one at least when WAIT. */
static gboolean
drain (Fetch *f, gboolean wait, GError **error)
{
  Decoded *d;
  while ((d = wait ? g_async_queue_pop (f->decoded) : g_async_queue_try_pop (f->decoded)) != NULL)
    {
      wait = FALSE;
      f->decoding--;
      f->decoding_bytes -= d->body_size;
      g_autoptr(GError) local_error = NULL;
      gboolean ok = write_decoded (f, d, &local_error);
      g_autofree char *url = object_url (f, d->want.checksum, "filez");
      if (d->large)
        large_release (f);
      decoded_free (d);
      if (!ok)
        return util_fail (error, "%s: refused: %s", url, local_error->message);
    }
  return TRUE;
}

/* What slot S fetched: metadata checked and written, content handed to a
 * decoder; or one line naming its URL. */
static gboolean
take (Fetch *f, Slot *s, GError **error)
{
  if (s->want.type != OBJECTS_FILE)
    {
      g_autofree char *url = object_url (f, s->want.checksum, remote_suffix (s->want.type));
      g_autoptr(GBytes) bytes = g_bytes_new (s->body.data->data, s->body.data->len);
      gboolean ok = take_metadata (f, &s->want, bytes, url, error);
      if (s->large)
        large_release (f);
      s->large = FALSE;
      return ok;
    }
  Decoded *d = g_new0 (Decoded, 1);
  d->want = s->want;
  d->body = s->body.data;
  d->body_size = s->body.data->len;
  d->large = s->large;
  s->large = FALSE;
  s->body.data = g_byte_array_new ();
  f->decoding++;
  f->decoding_bytes += d->body_size;
  return g_thread_pool_push (f->decoders, d, error);
}

/* Give each idle slot the next wanted object, metadata first. */
static gboolean
start_slots (Fetch *f, GError **error)
{
  for (guint i = 0; i < f->n_slots; i++)
    {
      Slot *s = &f->slots[i];
      if (s->busy)
        continue;
      g_autofree Want *w = g_queue_pop_head (&f->meta);
      if (w == NULL && f->decoding < DECODING_MAX && f->decoding_bytes < DECODING_BYTES)
        w = g_queue_pop_head (&f->content);
      if (w == NULL)
        return TRUE;
      s->want = *w;
      g_autofree char *url = object_url (f, w->checksum, remote_suffix (w->type));
      setup_easy (s->curl, url, &s->body, body_limit (w->type), s->errbuf);
      curl_easy_setopt (s->curl, CURLOPT_WRITEFUNCTION, slot_write);
      curl_easy_setopt (s->curl, CURLOPT_WRITEDATA, s);
      /* HTTP/1.1: a paused transfer is a connection that is not read
       * (over HTTP/2 it would hold a share of one connection's window). */
      curl_easy_setopt (s->curl, CURLOPT_HTTP_VERSION, (long) CURL_HTTP_VERSION_1_1);
      curl_easy_setopt (s->curl, CURLOPT_PRIVATE, s);
      CURLMcode mc = curl_multi_add_handle (f->multi, s->curl);
      if (mc != CURLM_OK)
        return util_fail (error, "%s: %s", url, curl_multi_strerror (mc));
      s->busy = TRUE;
      s->started = g_get_monotonic_time ();
      s->paused_at = 0;
      f->running++;
    }
  return TRUE;
}

/* Take the finished transfers; *OUT_DONE counts them. */
static gboolean
collect (Fetch *f, guint *out_done, GError **error)
{
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read (f->multi, &left)) != NULL)
    {
      if (msg->msg != CURLMSG_DONE)
        continue;
      Slot *s = NULL;
      curl_easy_getinfo (msg->easy_handle, CURLINFO_PRIVATE, (char **) &s);
      CURLcode code = msg->data.result;
      curl_multi_remove_handle (f->multi, s->curl);
      s->busy = FALSE;
      f->running--;
      (*out_done)++;
      f->objects_done++;
      f->bytes_done += s->body.data->len;
      if (code != CURLE_OK)
        {
          g_autofree char *url = object_url (f, s->want.checksum, remote_suffix (s->want.type));
          return transfer_failed (error, s->curl, code, &s->body, s->errbuf, url);
        }
      if (!take (f, s, error))
        return FALSE;
    }
  return TRUE;
}

/* A transfer in flight past its own deadline, or the fetch past its own:
 * one line naming it. */
static gboolean
check_deadlines (Fetch *f, GError **error)
{
  gint64 now = g_get_monotonic_time ();
  if (now > f->deadline)
    return too_slow (f, f->url, TRUE, error);
  for (guint i = 0; i < f->n_slots; i++)
    {
      Slot *s = &f->slots[i];
      if (!s->busy || s->paused_at != 0 || now - s->started <= f->object_timeout)
        continue;
      g_autofree char *url = object_url (f, s->want.checksum, remote_suffix (s->want.type));
      return too_slow (f, url, FALSE, error);
    }
  return TRUE;
}

#define SAY_INTERVAL_US (250 * 1000)

/* The objects fetched so far and the ones known to go, at most four
 * times a second. */
static void
say_progress (Fetch *f)
{
  gint64 now = g_get_monotonic_time ();
  if ((!f->terminal && !progress_active ()) || now - f->said_us < SAY_INTERVAL_US)
    return;
  guint64 bytes = f->bytes_done;
  for (guint i = 0; i < f->n_slots; i++)
    if (f->slots[i].busy)
      bytes += f->slots[i].body.data->len;
  if (bytes == 0)
    return;
  f->said_us = now;
  guint left = f->running + f->meta.length + f->content.length + f->decoding;
  g_autofree char *size = g_format_size (bytes);
  g_autofree char *rate = g_format_size ((guint64) (bytes / MAX ((now - f->start_us) / 1e6, 0.001)));
  g_autofree char *text = g_strdup_printf ("cache %s: %u object%s, %s, %s/s (%u more known)",
                                           f->ref, f->objects_done,
                                           f->objects_done == 1 ? "" : "s", size, rate, left);
  progress_say ("%s", text);
  if (!f->terminal)
    return;
  fprintf (stderr, "\r\033[K%s", text);
  f->drawn = TRUE;
}

/* Fetch every wanted object, and what the dirtrees among them name. */
static gboolean
run (Fetch *f, GError **error)
{
  for (;;)
    {
      if (!drain (f, FALSE, error) || !start_slots (f, error))
        return FALSE;
      if (f->running == 0)
        {
          /* Nothing in flight: done, or the decoders are behind. */
          if (f->decoding == 0)
            return TRUE;
          if (!drain (f, TRUE, error))
            return FALSE;
          continue;
        }
      int still = 0;
      CURLMcode mc = curl_multi_perform (f->multi, &still);
      guint done = 0;
      if (mc == CURLM_OK && !collect (f, &done, error))
        return FALSE;
      /* (A decoder that finishes wakes the poll.) */
      if (mc == CURLM_OK && done == 0 && still > 0)
        mc = curl_multi_poll (f->multi, NULL, 0, 1000, NULL);
      if (mc != CURLM_OK)
        return util_fail (error, "%s: %s", f->url, curl_multi_strerror (mc));
      if (!check_deadlines (f, error))
        return FALSE;
      say_progress (f);
    }
}

static void
fetch_clear (Fetch *f)
{
  if (f->drawn)
    fputs ("\r\033[K", stderr);
  /* The decoders first (they wake the multi handle); each job left ends
   * in the queue, to be freed. */
  if (f->decoders != NULL)
    g_thread_pool_free (f->decoders, FALSE, TRUE);
  if (f->decoded != NULL)
    {
      Decoded *d;
      while ((d = g_async_queue_try_pop (f->decoded)) != NULL)
        decoded_free (d);
      g_async_queue_unref (f->decoded);
    }
  for (guint i = 0; i < f->n_slots; i++)
    {
      if (f->slots[i].busy)
        curl_multi_remove_handle (f->multi, f->slots[i].curl);
      curl_easy_cleanup (f->slots[i].curl);
      g_byte_array_unref (f->slots[i].body.data);
    }
  g_free (f->slots);
  if (f->multi != NULL)
    curl_multi_cleanup (f->multi);
  g_queue_clear_full (&f->meta, g_free);
  g_queue_clear_full (&f->content, g_free);
  g_queue_clear (&f->paused);
  g_clear_pointer (&f->seen, g_hash_table_unref);
  util_fd_close (&f->objects_dfd);
}

static gboolean
fetch_init (Fetch *f, ObjectWriter *w, int repo_dfd, const char *url, guint connections,
            GError **error)
{
  f->w = w;
  f->repo_dfd = repo_dfd;
  f->url = url;
  f->objects_dfd = openat (repo_dfd, "objects", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (f->objects_dfd < 0)
    return util_fail (error, "the repository's objects/: %s", g_strerror (errno));
  f->object_timeout = (gint64) cachefetch_object_timeout () * G_USEC_PER_SEC;
  f->deadline = g_get_monotonic_time () + (gint64) cachefetch_timeout () * G_USEC_PER_SEC;
  f->seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  f->multi = curl_multi_init ();
  curl_multi_setopt (f->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long) connections);
  /* Keep every connection open between transfers: libcurl's default
   * keeps four per transfer in the multi handle, and with most slots
   * idle (the decoders behind) it would close the rest and connect
   * again. */
  curl_multi_setopt (f->multi, CURLMOPT_MAXCONNECTS, (long) connections);
  f->decoded = g_async_queue_new ();
  /* Inflating, hashing and writing content is most of the work: a
   * decoder on each core (this thread mostly waits on the network). */
  guint decoders = CLAMP (g_get_num_processors (), 1, 4);
  f->decoders = g_thread_pool_new (decode_job, f, decoders, FALSE, error);
  if (f->decoders == NULL)
    return FALSE;
  /* A file:// transfer cannot be paused, and is read whole at once: a few
   * in flight keep at most that many bodies in memory. */
  f->pausable = g_ascii_strncasecmp (url, "file:", 5) != 0;
  f->n_slots = f->pausable ? connections : MIN (connections, LARGE_MAX);
  f->slots = g_new0 (Slot, f->n_slots);
  for (guint i = 0; i < f->n_slots; i++)
    {
      f->slots[i].f = f;
      f->slots[i].curl = curl_easy_init ();
      f->slots[i].body.data = g_byte_array_new ();
    }
  return TRUE;
}

/* The commit checksum in the ref file at URL (BYTES). */
static char *
parse_ref (GBytes *bytes, const char *url, GError **error)
{
  gsize len;
  const char *data = g_bytes_get_data (bytes, &len);
  g_autofree char *text = g_strndup (data, MIN (len, 256));
  g_strstrip (text);
  gboolean ok = strlen (text) == 64;
  for (int i = 0; ok && i < 64; i++)
    ok = g_ascii_isxdigit (text[i]) && !g_ascii_isupper (text[i]);
  if (!ok)
    return util_fail (error, "%s: not a commit checksum", url), NULL;
  return g_steal_pointer (&text);
}

/* The commit REF names at the cache and its object, checked. */
static GVariant *
fetch_commit (Fetch *f, CURL *curl, const char *ref, char **out_checksum, GError **error)
{
  g_autofree char *ref_url = g_strconcat (f->url, "/refs/heads/", ref, NULL);
  gboolean missing = FALSE;
  g_autoptr(GBytes) ref_bytes = fetch_one (f, curl, ref_url, REF_BYTES_MAX, &missing, error);
  if (missing)
    return g_set_error (error, CACHEFETCH_ERROR, CACHEFETCH_ERROR_NO_REF, "%s: no such ref",
                        ref_url), NULL;
  g_autofree char *checksum = ref_bytes != NULL ? parse_ref (ref_bytes, ref_url, error) : NULL;
  if (checksum == NULL)
    return NULL;
  g_autofree char *url = object_url (f, checksum, "commit");
  g_autoptr(GBytes) bytes = fetch_one (f, curl, url, METADATA_BYTES_MAX, NULL, error);
  GVariant *commit = bytes != NULL
                       ? checked_metadata (bytes, OBJECTS_COMMIT_TYPE, checksum, url, error)
                       : NULL;
  if (commit != NULL)
    *out_checksum = g_steal_pointer (&checksum);
  return commit;
}

/* The commit CHECKSUM's detached metadata at the cache, or NULL (with
 * *ERROR unset when there is none). */
static GVariant *
fetch_commitmeta (Fetch *f, CURL *curl, const char *checksum, GError **error)
{
  g_autofree char *url = object_url (f, checksum, "commitmeta");
  gboolean missing = FALSE;
  g_autoptr(GBytes) bytes = fetch_one (f, curl, url, METADATA_BYTES_MAX, &missing, error);
  if (bytes == NULL)
    return NULL;
  g_autoptr(GVariant) v = g_variant_ref_sink (
      g_variant_new_from_bytes (G_VARIANT_TYPE_VARDICT, bytes, FALSE));
  if (!g_variant_is_normal_form (v))
    return util_fail (error, "%s: not an a{sv} variant in normal form", url), NULL;
  return g_steal_pointer (&v);
}

/* Want the root of COMMIT (from URL) and fetch the tree. */
static gboolean
fetch_tree (Fetch *f, GVariant *commit, const char *url, GError **error)
{
  g_autoptr(GVariant) contents_v = g_variant_get_child_value (commit, 6);
  g_autoptr(GVariant) meta_v = g_variant_get_child_value (commit, 7);
  g_autofree char *contents = checksum_of (contents_v);
  g_autofree char *meta = checksum_of (meta_v);
  if (contents == NULL || meta == NULL)
    return util_fail (error, "%s: no root directory", url);
  return want (f, OBJECTS_DIR_TREE, contents, error) && want (f, OBJECTS_DIR_META, meta, error)
         && run (f, error);
}

/* The commit REF names, fetched into F's writer; see cachefetch_commit(). */
static char *
fetch_ref (Fetch *f, CURL *curl, const char *ref, CacheFetchVerify verify, gpointer verify_data,
           GError **error)
{
  g_autofree char *checksum = NULL;
  g_autoptr(GVariant) commit = fetch_commit (f, curl, ref, &checksum, error);
  if (commit == NULL)
    return NULL;
  g_autoptr(GVariant) commitmeta = NULL;
  g_autoptr(GError) meta_error = NULL;
  commitmeta = fetch_commitmeta (f, curl, checksum, &meta_error);
  if (meta_error != NULL)
    return g_propagate_error (error, g_steal_pointer (&meta_error)), NULL;
  g_autofree char *url = object_url (f, checksum, "commit");
  if (verify != NULL && !verify (commit, commitmeta, url, verify_data, error))
    return NULL;
  /* A commit the repository holds in full: nothing more to fetch. */
  char path[OBJECTS_PATH_MAX];
  objects_type_path (path, checksum, OBJECTS_COMMIT);
  if (have_local (f, path) && !partial_is_marked (f->repo_dfd, checksum))
    return g_steal_pointer (&checksum);
  if (!fetch_tree (f, commit, url, error))
    return NULL;
  /* The detached metadata too, as libostree's pull keeps it. */
  g_autofree char *written = object_writer_metadata (f->w, OBJECTS_COMMIT, commit, commitmeta,
                                                     error);
  if (written == NULL)
    return NULL;
  return g_steal_pointer (&checksum);
}

char *
cachefetch_commit (ObjectWriter *w, int repo_dfd, const char *url, const char *ref,
                   guint connections, CacheFetchVerify verify, gpointer verify_data,
                   GError **error)
{
  global_init ();
  g_autofree char *base = g_strdup (url);
  while (g_str_has_suffix (base, "/") && strlen (base) > 1)
    base[strlen (base) - 1] = '\0';
  Fetch f = { .objects_dfd = -1, .ref = ref, .start_us = g_get_monotonic_time (),
              .terminal = isatty (STDERR_FILENO) };
  char *checksum = NULL;
  if (fetch_init (&f, w, repo_dfd, base, MAX (connections, 1), error))
    {
      CURL *curl = curl_easy_init ();
      checksum = fetch_ref (&f, curl, ref, verify, verify_data, error);
      curl_easy_cleanup (curl);
    }
  fetch_clear (&f);
  return checksum;
}
