/* release.c — fetch, verify and parse Release files; fetch the Packages
 * indices they vouch for.  See release.h for the trust rules. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apt/fetch.h"
#include "apt/release.h"
#include "base/installdirs.h"
#include "base/scratch.h"
#include "base/util.h"

static void
release_entry_free (ReleaseEntry *entry)
{
  g_free (entry->sha256);
  g_free (entry);
}

void
release_free (Release *release)
{
  if (release == NULL)
    return;
  g_free (release->origin);
  g_free (release->label);
  g_free (release->suite);
  g_free (release->codename);
  g_free (release->version);
  g_free (release->date);
  g_free (release->valid_until);
  g_strfreev (release->architectures);
  g_strfreev (release->components);
  g_clear_pointer (&release->entries, g_hash_table_unref);
  g_free (release->fingerprint);
  g_free (release->file_sha256);
  g_free (release);
}

/* --- parsing --- */

static void
string_free (gpointer s)
{
  g_string_free (s, TRUE);
}

static const char *const months[] = {
  "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};

gboolean
release_parse_date (const char *text, gint64 *out_seconds)
{
  /* [Day,] DD Mon YYYY HH:MM:SS ZONE — parsed by hand: strptime's %a and %b
   * follow the locale. */
  const char *p = text;
  const char *comma = strchr (p, ',');
  if (comma != NULL)
    p = comma + 1;
  int day, year, hour, minute, second;
  char month[4] = "", zone[16] = "";
  int n = sscanf (p, " %d %3s %d %d:%d:%d %15s", &day, month, &year, &hour, &minute, &second, zone);
  if (n < 6)
    return FALSE;
  int mon = -1;
  for (int i = 0; i < 12; i++)
    if (g_ascii_strcasecmp (month, months[i]) == 0)
      mon = i + 1;
  if (mon < 0)
    return FALSE;

  int offset = 0;  /* seconds east of UTC */
  if (n == 7 && (zone[0] == '+' || zone[0] == '-') && strlen (zone) == 5)
    {
      int hhmm = atoi (zone + 1);
      offset = (hhmm / 100 * 3600 + hhmm % 100 * 60) * (zone[0] == '-' ? -1 : 1);
    }
  else if (n == 7 && !g_str_equal (zone, "UTC") && !g_str_equal (zone, "GMT") && !g_str_equal (zone, "Z"))
    return FALSE;

  g_autoptr(GDateTime) dt = g_date_time_new_utc (year, mon, day, hour, minute, second);
  if (dt == NULL)
    return FALSE;
  *out_seconds = g_date_time_to_unix (dt) - offset;
  return TRUE;
}

static char *
field_value (GHashTable *fields, const char *name)
{
  GString *value = g_hash_table_lookup (fields, name);
  return value != NULL ? g_strdup (value->str) : NULL;
}

static char **
field_words (GHashTable *fields, const char *name)
{
  GString *value = g_hash_table_lookup (fields, name);
  if (value == NULL)
    return g_new0 (char *, 1);
  return g_strsplit_set (g_strstrip (value->str), " \t", -1);
}

static gboolean
parse_sha256_entries (Release *release, const char *text, const char *origin, GError **error)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      g_auto(GStrv) words = g_strsplit_set (g_strstrip (*l), " \t", -1);
      g_autoptr(GPtrArray) w = g_ptr_array_new ();
      for (char **x = words; *x != NULL; x++)
        if (**x != '\0')
          g_ptr_array_add (w, *x);
      if (w->len == 0)
        continue;
      guint64 size;
      if (w->len != 3 || !cache_is_sha256 (w->pdata[0])
          || !g_ascii_string_to_unsigned (w->pdata[1], 10, 0, G_MAXINT64, &size, NULL))
        return util_fail (error, "%s: malformed SHA256 line \"%s\"", origin, *l);
      ReleaseEntry *entry = g_new0 (ReleaseEntry, 1);
      entry->sha256 = g_ascii_strdown (w->pdata[0], -1);
      entry->size = (gint64) size;
      g_hash_table_replace (release->entries, g_strdup (w->pdata[2]), entry);
    }
  return TRUE;
}

Release *
release_parse (const char *text, const char *origin, GError **error)
{
  g_autoptr(GHashTable) fields = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                        string_free);
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  GString *current = NULL;
  for (char **l = lines; *l != NULL; l++)
    {
      const char *line = *l;
      if (*line == '\0' || g_str_equal (line, "\r"))
        {
          if (g_hash_table_size (fields) > 0)
            break;  /* a Release file is one stanza */
          continue;
        }
      if (line[0] == ' ' || line[0] == '\t')
        {
          if (current == NULL)
            return util_fail (error, "%s: continuation line without a field", origin), NULL;
          g_string_append_c (current, '\n');
          g_string_append (current, line);
          continue;
        }
      const char *colon = strchr (line, ':');
      if (colon == NULL)
        return util_fail (error, "%s: expected \"Field: value\", got \"%s\"", origin, line), NULL;
      char *key = g_ascii_strdown (line, colon - line);
      g_autofree char *value = g_strstrip (g_strdup (colon + 1));
      current = g_string_new (value);
      g_hash_table_replace (fields, key, current);
    }

  g_autoptr(Release) release = g_new0 (Release, 1);
  release->entries = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                            (GDestroyNotify) release_entry_free);
  release->origin = field_value (fields, "origin");
  release->label = field_value (fields, "label");
  release->suite = field_value (fields, "suite");
  release->codename = field_value (fields, "codename");
  release->version = field_value (fields, "version");
  release->date = field_value (fields, "date");
  release->valid_until = field_value (fields, "valid-until");
  release->architectures = field_words (fields, "architectures");
  release->components = field_words (fields, "components");
  g_autofree char *by_hash = field_value (fields, "acquire-by-hash");
  release->acquire_by_hash = by_hash != NULL && g_ascii_strcasecmp (by_hash, "yes") == 0;
  g_autofree char *no_all = field_value (fields, "no-support-for-architecture-all");
  release->no_support_arch_all = no_all != NULL && g_str_equal (no_all, "Packages");

  GString *sha256 = g_hash_table_lookup (fields, "sha256");
  if (sha256 == NULL)
    return util_fail (error, "%s has no SHA256 list; apt2ostree needs SHA256 checksums", origin), NULL;
  if (!parse_sha256_entries (release, sha256->str, origin, error))
    return NULL;
  return g_steal_pointer (&release);
}

/* --- signatures ---
 *
 * Checked by gpgv, as apt does: one process against a keyring file made
 * of the source's keys, no GNUPGHOME to fill (importing the keys into one
 * with gpg took about eight processes per source, which every index's
 * download waited for).  What gpgv found is
 * read from its status lines (GnuPG's doc/DETAILS), not its exit status:
 * an InRelease carries several signatures, and one good one by a key of
 * the keyring is enough. */

/* gpgv's scratch directory (its --homedir, the keyring, the files it
 * checks), removed with everything in it when done. */
typedef struct {
  char *path;
} GpgHome;

static void
gpg_home_clear (GpgHome *home)
{
  if (home->path == NULL)
    return;
  (void) scratch_rm_rf (home->path, NULL);
  g_clear_pointer (&home->path, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (GpgHome, gpg_home_clear)

/* The OpenPGP packets of every ASCII-armored block in TEXT (RFC 4880,
 * section 6.2: armor headers up to an empty line, base64, an optional
 * "=" checksum line), appended to OUT. */
static void
dearmor (const char *text, GByteArray *out)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      if (!g_str_has_prefix (g_strstrip (*l), "-----BEGIN PGP PUBLIC KEY BLOCK-----"))
        continue;
      for (l++; *l != NULL && *g_strstrip (*l) != '\0'; l++)
        ;  /* armor headers */
      if (*l == NULL)
        break;
      g_autoptr(GString) b64 = g_string_new (NULL);
      for (l++; *l != NULL && !g_str_has_prefix (g_strstrip (*l), "-----END PGP"); l++)
        if (**l != '=')
          g_string_append (b64, *l);
      gsize len = 0;
      g_autofree guchar *bin = g_base64_decode (b64->str, &len);
      g_byte_array_append (out, bin, len);
      if (*l == NULL)
        break;
    }
}

/* Does DATA (LEN bytes) start with an OpenPGP public key packet (tag 6)? */
static gboolean
starts_with_public_key (const guint8 *data, gsize len)
{
  if (len == 0 || (data[0] & 0x80) == 0)
    return FALSE;
  guint tag = (data[0] & 0x40) ? (data[0] & 0x3f) : (data[0] & 0x3c) >> 2;
  return tag == 6;
}

/* KEY (a keyring file, binary or armored, or an armored block) appended to
 * the binary keyring KEYRING. */
static gboolean
add_key (GByteArray *keyring, const char *key, GError **error)
{
  g_autofree char *contents = NULL;
  gsize len;
  const char *what = key;
  if (g_str_has_prefix (key, "-----BEGIN PGP"))
    {
      contents = g_strdup (key);
      len = strlen (key);
      what = "the inline Signed-By key";
    }
  else
    {
      g_autoptr(GError) local_error = NULL;
      if (!g_file_get_contents (key, &contents, &len, &local_error))
        return util_fail (error, "keyring \"%s\": %s", key, local_error->message);
    }
  guint before = keyring->len;
  if (g_str_has_prefix (contents, "-----BEGIN PGP"))
    dearmor (contents, keyring);
  else
    g_byte_array_append (keyring, (const guint8 *) contents, len);
  if (!starts_with_public_key (keyring->data + before, keyring->len - before))
    return util_fail (error, "%s holds no OpenPGP public key", what);
  return TRUE;
}

/* What gpgv said of one signature (its status lines from NEWSIG on). */
typedef struct {
  gboolean good;            /* GOODSIG */
  const char *problem;      /* why it does not count, or NULL */
  char *key;                /* the key's fingerprint or id, as gpgv names it */
  char *primary;            /* VALIDSIG's primary key fingerprint */
} GpgvSig;

static void
gpgv_sig_clear (GpgvSig *sig)
{
  g_free (sig->key);
  g_free (sig->primary);
}

/* The signatures gpgv's status lines STATUS report, in order. */
static GArray *
read_status (const char *status)
{
  GArray *sigs = g_array_new (FALSE, TRUE, sizeof (GpgvSig));
  g_array_set_clear_func (sigs, (GDestroyNotify) gpgv_sig_clear);
  g_auto(GStrv) lines = g_strsplit (status, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      if (!g_str_has_prefix (*l, "[GNUPG:] "))
        continue;
      g_auto(GStrv) f = g_strsplit (*l + strlen ("[GNUPG:] "), " ", -1);
      guint n = g_strv_length (f);
      if (n == 0)
        continue;
      if (g_str_equal (f[0], "NEWSIG"))
        {
          GpgvSig fresh = { FALSE, NULL, NULL, NULL };
          g_array_append_val (sigs, fresh);
          continue;
        }
      if (sigs->len == 0)
        continue;  /* PLAINTEXT, NODATA...: before any signature */
      GpgvSig *sig = &g_array_index (sigs, GpgvSig, sigs->len - 1);
      const char *problem = NULL;
      if (g_str_equal (f[0], "GOODSIG"))
        sig->good = TRUE;
      else if (g_str_equal (f[0], "BADSIG"))
        problem = "a bad signature (the file was modified after signing)";
      else if (g_str_equal (f[0], "EXPKEYSIG"))
        problem = "a signature by an expired key";
      else if (g_str_equal (f[0], "EXPSIG"))
        problem = "an expired signature";
      else if (g_str_equal (f[0], "REVKEYSIG"))
        problem = "a signature by a revoked key";
      else if (g_str_equal (f[0], "ERRSIG"))
        /* ERRSIG KEYID ALGO HASH CLASS TIME RC [FPR]; RC 9: no public key */
        problem = n > 6 && g_str_equal (f[6], "9") ? "a signature by an unknown key"
                                                   : "a signature gpgv cannot check";
      else if (g_str_equal (f[0], "VALIDSIG") && n > 10)
        {
          g_free (sig->primary);
          sig->primary = g_strdup (f[10]);
        }
      else
        continue;
      if (problem != NULL && sig->problem == NULL)
        sig->problem = problem;
      /* The key: ERRSIG's fingerprint when it has one, else the id. */
      const char *key = g_str_equal (f[0], "VALIDSIG") ? f[1]
                        : g_str_equal (f[0], "ERRSIG") && n > 7 && *f[7] != '-' ? f[7]
                        : n > 1 ? f[1] : NULL;
      if (key != NULL && (sig->key == NULL || g_str_equal (f[0], "VALIDSIG")))
        {
          g_free (sig->key);
          sig->key = g_strdup (key);
        }
    }
  return sigs;
}

GBytes *
release_verify_signature (GBytes *signed_data, GBytes *detached, GPtrArray *keys,
                          const char *what, char **out_fingerprint, GError **error)
{
  g_autoptr(GByteArray) keyring = g_byte_array_new ();
  for (guint i = 0; i < keys->len; i++)
    if (!add_key (keyring, keys->pdata[i], error))
      return NULL;

  g_auto(GpgHome) home = { NULL };
  g_autoptr(GError) local_error = NULL;
  home.path = g_dir_make_tmp ("apt2ostree-gpgv-XXXXXX", &local_error);
  if (home.path == NULL)
    return util_fail (error, "creating a scratch directory for gpgv: %s",
                      local_error->message), NULL;
  g_autofree char *keyring_path = g_build_filename (home.path, "keyring.gpg", NULL);
  g_autofree char *data_path = g_build_filename (home.path, "data", NULL);
  g_autofree char *sig_path = g_build_filename (home.path, "data.sig", NULL);
  g_autofree char *plain_path = g_build_filename (home.path, "plain", NULL);
  if (!g_file_set_contents (keyring_path, (const char *) keyring->data, keyring->len, &local_error)
      || !g_file_set_contents (data_path, g_bytes_get_data (signed_data, NULL),
                               g_bytes_get_size (signed_data), &local_error)
      || (detached != NULL
          && !g_file_set_contents (sig_path, g_bytes_get_data (detached, NULL),
                                   g_bytes_get_size (detached), &local_error)))
    return util_fail (error, "%s: %s", what, local_error->message), NULL;

  /* An empty --homedir: no keyring but the one given. */
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  const char *fixed[] = { "gpgv", "--homedir", home.path, "--keyring", keyring_path,
                          "--status-fd", "1", NULL };
  for (const char **a = fixed; *a != NULL; a++)
    g_ptr_array_add (argv, (gpointer) *a);
  if (detached == NULL)
    {
      g_ptr_array_add (argv, "--output");
      g_ptr_array_add (argv, plain_path);
    }
  g_ptr_array_add (argv, "--");
  if (detached != NULL)
    g_ptr_array_add (argv, sig_path);
  g_ptr_array_add (argv, data_path);
  g_ptr_array_add (argv, NULL);
  g_autofree char *status = NULL;
  g_autofree char *messages = NULL;
  /* Its exit status says nothing the status lines do not: not read. */
  if (!g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                     &status, &messages, NULL, &local_error))
    return util_fail (error, "%s: cannot check its signature: %s (apt-get install gpgv)", what,
                      local_error->message), NULL;

  g_autoptr(GArray) sigs = read_status (status);
  if (sigs->len == 0 && strstr (status, "[GNUPG:] NODATA") == NULL)
    return util_fail (error, "%s: gpgv could not check it: %s", what,
                      g_strstrip (g_strdelimit (messages, "\n", ' '))), NULL;
  if (sigs->len == 0)
    return util_fail (error, "%s is not signed", what), NULL;

  /* One good signature by one of the keys is enough, as for apt. */
  const char *fingerprint = NULL;
  const char *first_problem = NULL;
  const char *problem_key = NULL;
  for (guint i = 0; i < sigs->len; i++)
    {
      GpgvSig *sig = &g_array_index (sigs, GpgvSig, i);
      if (sig->good && sig->problem == NULL && sig->primary != NULL)
        {
          if (fingerprint == NULL)
            fingerprint = sig->primary;
          continue;
        }
      if (first_problem == NULL)
        {
          first_problem = sig->problem != NULL ? sig->problem
                                               : "a signature by a key not in the keyring";
          problem_key = sig->key;
        }
    }
  if (fingerprint == NULL)
    return util_fail (error, "%s carries %s (key %s) and no good signature by a trusted key; "
                      "check the source's Signed-By keyring", what, first_problem,
                      problem_key != NULL ? problem_key : "unknown"), NULL;

  if (detached != NULL)
    {
      *out_fingerprint = g_strdup (fingerprint);
      return g_bytes_ref (signed_data);
    }
  char *plain = NULL;
  gsize plain_len = 0;
  if (!g_file_get_contents (plain_path, &plain, &plain_len, &local_error))
    return util_fail (error, "%s: gpgv wrote no signed text: %s", what,
                      local_error->message), NULL;
  *out_fingerprint = g_strdup (fingerprint);
  return g_bytes_new_take (plain, plain_len);
}

/* $APT2OSTREE_KEYRINGS, else the keyrings installed with the program
 * (base/installdirs.h), else where configure put them. */
static char *
keyrings_dir (void)
{
  const char *dir = g_getenv ("APT2OSTREE_KEYRINGS");
  if (dir != NULL && *dir != '\0')
    return g_strdup (dir);
  g_autofree char *data = installdirs_from_program (PKGDATADIR);
  g_autofree char *installed = data != NULL ? g_build_filename (data, "keyrings", NULL) : NULL;
  if (installed != NULL && g_file_test (installed, G_FILE_TEST_IS_DIR))
    return g_steal_pointer (&installed);
  return g_strdup (PKGDATADIR "/keyrings");
}

GPtrArray *
release_source_keys (Source *source, GError **error)
{
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  if (source->signed_by != NULL && g_strstr_len (source->signed_by, -1, "-----BEGIN PGP") != NULL)
    {
      g_ptr_array_add (keys, g_strdup (g_strstrip (g_strdup (source->signed_by))));
      return g_steal_pointer (&keys);
    }
  if (source->signed_by != NULL)
    {
      g_auto(GStrv) words = g_strsplit_set (source->signed_by, ", \t\n", -1);
      for (char **w = words; *w != NULL; w++)
        {
          if (**w == '\0')
            continue;
          if (**w != '/')
            return util_fail (error, "%s: Signed-By \"%s\": apt2ostree needs the path of a keyring "
                              "file or an inline key, not a fingerprint", source->origin, *w), NULL;
          g_ptr_array_add (keys, g_strdup (*w));
        }
      return g_steal_pointer (&keys);
    }

  g_autofree char *dir_path = keyrings_dir ();
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, &local_error);
  if (dir == NULL)
    return util_fail (error, "source \"%s\" has no Signed-By and the keyrings directory %s cannot "
                      "be read (%s); add Signed-By or set APT2OSTREE_KEYRINGS",
                      source->name, dir_path, local_error->message), NULL;
  const char *entry;
  while ((entry = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (entry, ".gpg") || g_str_has_suffix (entry, ".asc"))
      g_ptr_array_add (keys, g_build_filename (dir_path, entry, NULL));
  g_ptr_array_sort (keys, util_compare_strings);
  if (keys->len == 0)
    return util_fail (error, "source \"%s\" has no Signed-By and %s holds no keyring; "
                      "add Signed-By or set APT2OSTREE_KEYRINGS", source->name, dir_path), NULL;
  return g_steal_pointer (&keys);
}

/* --- fetching --- */

static char *
sha256_of_bytes (GBytes *bytes)
{
  return g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, bytes);
}

/* Where the source's Release and indices are at URI: URI/dists/SUITE, or
 * for a flat repository URI/PATH. */
static char *
release_base_url (Source *source, const char *uri)
{
  if (!source->flat)
    return g_strdup_printf ("%s/dists/%s", uri, source->suite);
  g_autofree char *path = flat_path (source->suite);
  return *path == '\0' ? g_strdup (uri) : g_strdup_printf ("%s/%s", uri, path);
}

/* The text of a clearsigned message, its signature not checked: only for a
 * source the user marked trusted=yes. */
static GBytes *
clearsigned_text (GBytes *message, const char *what, GError **error)
{
  g_autofree char *text = g_strndup (g_bytes_get_data (message, NULL), g_bytes_get_size (message));
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  char **l = lines;
  if (*l == NULL || !g_str_equal (g_strchomp (*l), "-----BEGIN PGP SIGNED MESSAGE-----"))
    return util_fail (error, "%s is not a clearsigned message", what), NULL;
  for (l++; *l != NULL && *g_strchomp (*l) != '\0'; l++)
    ;  /* armor headers ("Hash: SHA512") up to the empty line */
  if (*l == NULL)
    return util_fail (error, "%s: clearsigned message without text", what), NULL;
  g_autoptr(GString) out = g_string_new ("");
  for (l++; *l != NULL; l++)
    {
      if (g_str_has_prefix (*l, "-----BEGIN PGP SIGNATURE-----"))
        return g_string_free_to_bytes (g_steal_pointer (&out));
      g_string_append (out, g_str_has_prefix (*l, "- ") ? *l + 2 : *l);
      g_string_append_c (out, '\n');
    }
  return util_fail (error, "%s: clearsigned message without its signature block", what), NULL;
}

/* What one URI of a source serves: InRelease, or Release (+ Release.gpg). */
typedef struct {
  GBytes *fetched;
  GBytes *detached;    /* Release.gpg, or NULL */
  char *what;          /* "source \"NAME\": URL", for messages */
  gboolean clearsigned;
} ReleaseFiles;

static void
release_files_clear (ReleaseFiles *files)
{
  g_clear_pointer (&files->fetched, g_bytes_unref);
  g_clear_pointer (&files->detached, g_bytes_unref);
  g_clear_pointer (&files->what, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ReleaseFiles, release_files_clear)

static gboolean
fetch_release_files (Source *source, const char *uri, ReleaseFiles *out, GCancellable *cancellable,
                     GError **error)
{
  g_autofree char *base = release_base_url (source, uri);
  g_autofree char *inrelease_url = g_strdup_printf ("%s/InRelease", base);
  g_autoptr(GError) local_error = NULL;
  out->fetched = fetch_bytes (inrelease_url, cancellable, &local_error);
  if (out->fetched != NULL)
    {
      out->clearsigned = TRUE;
      out->what = g_strdup_printf ("source \"%s\": %s", source->name, inrelease_url);
      return TRUE;
    }
  if (!g_error_matches (local_error, UTIL_ERROR, UTIL_ERROR_NOT_FOUND))
    return util_fail (error, "source \"%s\": %s", source->name, local_error->message);

  g_clear_error (&local_error);
  g_autofree char *release_url = g_strdup_printf ("%s/Release", base);
  g_autofree char *sig_url = g_strdup_printf ("%s/Release.gpg", base);
  out->fetched = fetch_bytes (release_url, cancellable, &local_error);
  if (out->fetched != NULL)
    out->detached = fetch_bytes (sig_url, cancellable, &local_error);
  if (out->fetched != NULL && source->trusted)
    g_clear_error (&local_error);  /* trusted=yes: an unsigned Release will do */
  else if (out->detached == NULL)
    {
      if (g_error_matches (local_error, UTIL_ERROR, UTIL_ERROR_NOT_FOUND))
        return util_fail (error, "source \"%s\" (%s): no InRelease, no signed Release; "
                          "is \"%s\" a suite of this repository?%s", source->name, base,
                          source->suite,
                          out->fetched != NULL ? " (an unsigned repository is read only with "
                                                 "trusted=yes on its sources line)" : "");
      return util_fail (error, "source \"%s\": %s", source->name, local_error->message);
    }
  out->what = g_strdup_printf ("source \"%s\": %s", source->name, release_url);
  return TRUE;
}

/* The Release files from the first of the source's URIs that serves them;
 * when none does, the error names what each said. */
static gboolean
fetch_release_files_any (Source *source, ReleaseFiles *out, GCancellable *cancellable,
                         GError **error)
{
  const char *const *uris = (const char *const *) source->uris;
  g_autoptr(GString) failures = g_string_new ("");
  for (const char *const *u = uris; *u != NULL; u++)
    {
      g_autoptr(GError) local_error = NULL;
      if (fetch_release_files (source, *u, out, cancellable, &local_error))
        return TRUE;
      release_files_clear (out);
      if (u == uris && u[1] == NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      g_string_append_printf (failures, "%s%s", failures->len > 0 ? "; " : "", local_error->message);
    }
  return util_fail (error, "source \"%s\": none of its %u URIs serves its Release: %s", source->name,
                    g_strv_length ((char **) uris), failures->str);
}

Release *
release_fetch (Source *source, GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) keys = NULL;
  if (!source->trusted)
    {
      keys = release_source_keys (source, error);
      if (keys == NULL)
        return NULL;
    }

  g_auto(ReleaseFiles) files = { NULL };
  if (!fetch_release_files_any (source, &files, cancellable, error))
    return NULL;
  GBytes *fetched = files.fetched, *detached = files.detached;
  const char *what = files.what;
  gboolean clearsigned = files.clearsigned;

  g_autofree char *fingerprint = NULL;
  g_autoptr(GBytes) text = NULL;
  if (!source->trusted)
    text = release_verify_signature (fetched, detached, keys, what, &fingerprint, error);
  else if (clearsigned)
    text = clearsigned_text (fetched, what, error);
  else
    text = g_bytes_ref (fetched);
  if (text == NULL)
    return NULL;

  g_autofree char *str = g_strndup (g_bytes_get_data (text, NULL), g_bytes_get_size (text));
  g_autoptr(Release) release = release_parse (str, what, error);
  if (release == NULL)
    return NULL;

  if (release->valid_until != NULL && !source->ignore_valid_until)
    {
      gint64 until;
      if (!release_parse_date (release->valid_until, &until))
        return util_fail (error, "%s: cannot read Valid-Until \"%s\"", what, release->valid_until), NULL;
      if (until < g_get_real_time () / G_USEC_PER_SEC)
        return util_fail (error, "%s expired (Valid-Until: %s); the mirror is stale or the clock is wrong "
                          "(a snapshot archive: check-valid-until=no on its sources line)",
                          what, release->valid_until), NULL;
    }
  if (!source->flat && release->suite != NULL && release->codename != NULL
      && !g_str_equal (release->suite, source->suite) && !g_str_equal (release->codename, source->suite))
    return util_fail (error, "%s is for suite \"%s\" (codename \"%s\"), not \"%s\"", what,
                      release->suite, release->codename, source->suite), NULL;

  release->fingerprint = g_steal_pointer (&fingerprint);
  release->file_sha256 = sha256_of_bytes (fetched);
  return g_steal_pointer (&release);
}

static const char *const compressions[] = { ".xz", ".gz", ".bz2", ".zst", "" };

/* One Packages index: PATH is "main/binary-amd64/Packages".  The file
 * returned is what the Release lists and the download was checked
 * against: the compressed index when the Release lists one (the reader
 * decompresses it in memory, packages.h), kept as it came.  Writing it
 * out decompressed first cost a cold lock a 50 MB write, a read and a
 * second checksum on its longest path; the signed Release's sha256 of
 * the compressed file is what authenticates it either way. */
static char *
fetch_index (Release *release, Source *source, const char *path, const char *cache_dir,
             GCancellable *cancellable, GError **error)
{
  ReleaseEntry *plain = g_hash_table_lookup (release->entries, path);
  if (plain != NULL)
    {
      g_autofree char *cached = g_build_filename (cache_dir, plain->sha256, NULL);
      struct stat st;
      if (stat (cached, &st) == 0 && st.st_size == plain->size)
        return g_steal_pointer (&cached);
    }

  const char *suffix = NULL;
  ReleaseEntry *entry = NULL;
  for (guint i = 0; i < G_N_ELEMENTS (compressions) && entry == NULL; i++)
    {
      g_autofree char *p = g_strconcat (path, compressions[i], NULL);
      entry = g_hash_table_lookup (release->entries, p);
      suffix = compressions[i];
    }
  if (entry == NULL)
    return util_fail (error, "source \"%s\": its Release lists no %s (or compressed); does the "
                      "repository carry this component and architecture?", source->name, path), NULL;

  /* The first of the source's URIs that has it with the Release's hash. */
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *url = NULL;
  g_autofree char *downloaded = NULL;
  g_autoptr(GString) failures = g_string_new ("");
  for (char **u = source->uris; *u != NULL && downloaded == NULL; u++)
    {
      g_autofree char *base = release_base_url (source, *u);
      g_free (url);
      if (release->acquire_by_hash && g_str_equal (dir, "."))
        url = g_strdup_printf ("%s/by-hash/SHA256/%s", base, entry->sha256);
      else if (release->acquire_by_hash)
        url = g_strdup_printf ("%s/%s/by-hash/SHA256/%s", base, dir, entry->sha256);
      else
        url = g_strdup_printf ("%s/%s%s", base, path, suffix);
      g_autoptr(GError) local_error = NULL;
      downloaded = fetch_cached (url, cache_dir, entry->sha256, entry->size, cancellable,
                                 &local_error);
      if (downloaded == NULL)
        g_string_append_printf (failures, "%s%s", failures->len > 0 ? "; " : "",
                                local_error->message);
    }
  if (downloaded == NULL)
    return util_fail (error, "source \"%s\": %s; the mirror may be out of sync, try again later",
                      source->name, failures->str), NULL;

  return g_steal_pointer (&downloaded);  /* verified by fetch_cached */
}

gboolean
release_has_separate_all (Release *release)
{
  return !release->no_support_arch_all
         && g_strv_contains ((const char *const *) release->architectures, "all");
}

GPtrArray *
release_fetch_indices (Release *release, Source *source, const char *arch,
                       const char *cache_dir, GCancellable *cancellable, GError **error)
{
  if (g_mkdir_with_parents (cache_dir, 0755) != 0)
    return util_fail (error, "cannot create the cache directory %s: %s", cache_dir,
                      g_strerror (errno)), NULL;

  gboolean separate_all = release_has_separate_all (release);
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  if (source->flat)
    {
      /* One Packages for every architecture; the resolver keeps ARCH's. */
      char *file = fetch_index (release, source, "Packages", cache_dir, cancellable, error);
      if (file == NULL)
        return NULL;
      g_ptr_array_add (paths, file);
      return g_steal_pointer (&paths);
    }
  for (char **c = source->components; *c != NULL; c++)
    {
      const char *archs[] = { arch, separate_all ? "all" : NULL };
      for (guint i = 0; i < G_N_ELEMENTS (archs) && archs[i] != NULL; i++)
        {
          g_autofree char *path = g_strdup_printf ("%s/binary-%s/Packages", *c, archs[i]);
          char *file = fetch_index (release, source, path, cache_dir, cancellable, error);
          if (file == NULL)
            return NULL;
          g_ptr_array_add (paths, file);
        }
    }
  return g_steal_pointer (&paths);
}
