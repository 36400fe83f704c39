/* sbom.c — SPDX and CycloneDX bills of materials; see sbom.h. */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "apt/release.h"
#include "base/deb822.h"
#include "base/util.h"
#include "deb/deb.h"
#include "image/imagedb.h"
#include "image/sbom.h"
#include "store/repo.h"
#include "store/treeread.h"

static void
sbom_package_free (SbomPackage *p)
{
  g_free (p->name);
  g_free (p->version);
  g_free (p->architecture);
  g_free (p->source);
  g_free (p->source_version);
  g_free (p->sha256);
  g_free (p->license);
  g_free (p->distro);
  g_free (p->apt_source);
  g_free (p->filename);
  g_free (p->depends);
  g_free (p->provides);
  if (p->depends_on != NULL)
    g_ptr_array_unref (p->depends_on);
  g_free (p);
}

void
sbom_free (Sbom *sbom)
{
  if (sbom == NULL)
    return;
  g_free (sbom->name);
  g_free (sbom->commit);
  g_free (sbom->lockfile_sha256);
  g_ptr_array_unref (sbom->packages);
  g_hash_table_unref (sbom->license_texts);
  g_free (sbom);
}

static Sbom *
sbom_new (const char *name)
{
  Sbom *sbom = g_new0 (Sbom, 1);
  sbom->name = g_strdup (name);
  sbom->packages = g_ptr_array_new_with_free_func ((GDestroyNotify) sbom_package_free);
  sbom->license_texts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return sbom;
}

/* --- licenses ------------------------------------------------------------ */

/* Debian's short names (copyright-format 1.0) and the SPDX identifiers they
 * stand for; a name SPDX spells the same way needs no entry. */
static const char *const debian_to_spdx[][2] = {
  { "GPL-1", "GPL-1.0-only" }, { "GPL-1+", "GPL-1.0-or-later" },
  { "GPL-2", "GPL-2.0-only" }, { "GPL-2+", "GPL-2.0-or-later" },
  { "GPL-3", "GPL-3.0-only" }, { "GPL-3+", "GPL-3.0-or-later" },
  { "LGPL-2", "LGPL-2.0-only" }, { "LGPL-2+", "LGPL-2.0-or-later" },
  { "LGPL-2.1", "LGPL-2.1-only" }, { "LGPL-2.1+", "LGPL-2.1-or-later" },
  { "LGPL-3", "LGPL-3.0-only" }, { "LGPL-3+", "LGPL-3.0-or-later" },
  { "AGPL-3", "AGPL-3.0-only" }, { "AGPL-3+", "AGPL-3.0-or-later" },
  { "GFDL-1.2", "GFDL-1.2-only" }, { "GFDL-1.2+", "GFDL-1.2-or-later" },
  { "GFDL-1.3", "GFDL-1.3-only" }, { "GFDL-1.3+", "GFDL-1.3-or-later" },
  { "Expat", "MIT" }, { "BSD-2-clause", "BSD-2-Clause" }, { "BSD-3-clause", "BSD-3-Clause" },
  { "BSD-4-clause", "BSD-4-Clause" }, { "Artistic", "Artistic-1.0-Perl" },
  { "Artistic-1", "Artistic-1.0" }, { "Artistic-2", "Artistic-2.0" }, { "Zlib", "Zlib" },
  { "Apache-2", "Apache-2.0" }, { "Apache-2.0", "Apache-2.0" }, { "MPL-1.1", "MPL-1.1" },
  { "MPL-2.0", "MPL-2.0" }, { "PSF-2", "PSF-2.0" }, { "ISC", "ISC" }, { "MIT", "MIT" },
  { "CC0-1.0", "CC0-1.0" }, { "X11", "X11" }, { "FSFAP", "FSFAP" }, { "FSFUL", "FSFUL" },
  { "FSFULLR", "FSFULLR" }, { "OpenSSL", "OpenSSL" }, { "curl", "curl" },
  { "BSL-1.0", "BSL-1.0" }, { "Unicode-DFS-2016", "Unicode-DFS-2016" },
  { "Python-2.0", "Python-2.0" }, { "Apache-1.1", "Apache-1.1" }, { "Libpng", "Libpng" },
  { "MPL-1.0", "MPL-1.0" }, { "EPL-1.0", "EPL-1.0" }, { "EPL-2.0", "EPL-2.0" },
  { "CC-BY-3.0", "CC-BY-3.0" }, { "CC-BY-4.0", "CC-BY-4.0" }, { "CC-BY-SA-3.0", "CC-BY-SA-3.0" },
  { "CC-BY-SA-4.0", "CC-BY-SA-4.0" }, { "WTFPL", "WTFPL" }, { "Unlicense", "Unlicense" },
};

/* "LicenseRef-" and NAME with every byte SPDX does not allow there as "-". */
static char *
license_ref (const char *name)
{
  GString *ref = g_string_new ("LicenseRef-");
  for (const char *p = name; *p != '\0'; p++)
    g_string_append_c (ref, g_ascii_isalnum (*p) || *p == '.' ? *p : '-');
  return g_string_free (ref, FALSE);
}

static char *
spdx_id (const char *debian_name)
{
  for (guint i = 0; i < G_N_ELEMENTS (debian_to_spdx); i++)
    if (g_ascii_strcasecmp (debian_name, debian_to_spdx[i][0]) == 0)
      return g_strdup (debian_to_spdx[i][1]);
  return license_ref (debian_name);
}

/* One Files: stanza's License: line ("GPL-2+ or Artistic", "GPL-2+ with
 * OpenSSL exception") as an SPDX expression; exceptions stay part of one
 * LicenseRef, since their SPDX names cannot be derived. */
static char *
line_expression (const char *line, GHashTable *used)
{
  g_auto(GStrv) words = g_strsplit_set (line, " \t,", -1);
  g_autoptr(GString) name = g_string_new ("");
  GString *expr = g_string_new ("");
  const char *op = " AND ";
  guint terms = 0;
  for (char **w = words;; w++)
    {
      gboolean is_or = *w != NULL && g_ascii_strcasecmp (*w, "or") == 0;
      gboolean is_and = *w != NULL && g_ascii_strcasecmp (*w, "and") == 0;
      if ((*w == NULL || is_or || is_and) && name->len > 0)
        {
          g_autofree char *id = spdx_id (name->str);
          if (g_str_has_prefix (id, "LicenseRef-") && used != NULL)
            g_hash_table_replace (used, g_strdup (id), g_strdup (name->str));
          if (terms++ > 0)
            g_string_append (expr, op);
          g_string_append (expr, id);
          g_string_truncate (name, 0);
        }
      if (*w == NULL)
        break;
      if (is_or || is_and)
        op = is_or ? " OR " : " AND ";
      else if (**w != '\0')
        {
          if (name->len > 0)
            g_string_append_c (name, ' ');
          g_string_append (name, *w);
        }
    }
  if (terms > 1)
    {
      g_string_prepend_c (expr, '(');
      g_string_append_c (expr, ')');
    }
  return g_string_free (expr, terms == 0);
}

char *
sbom_copyright_license (const char *copyright, GHashTable *texts)
{
  g_autoptr(GPtrArray) stanzas = deb822_parse (copyright);
  if (stanzas->len == 0)
    return NULL;
  g_autofree char *format = deb822_first_line (stanzas->pdata[0], "format");
  if (format == NULL || (strstr (format, "copyright-format") == NULL && strstr (format, "dep5") == NULL))
    return NULL;

  g_autoptr(GHashTable) used = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GPtrArray) terms = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < stanzas->len; i++)
    {
      GHashTable *stanza = stanzas->pdata[i];
      g_autofree char *line = deb822_first_line (stanza, "license");
      if (line == NULL || *line == '\0' || g_hash_table_lookup (stanza, "files") == NULL)
        continue;
      char *expr = line_expression (line, used);
      if (expr != NULL && !g_ptr_array_find_with_equal_func (terms, expr, g_str_equal, NULL))
        g_ptr_array_add (terms, expr);
      else
        g_free (expr);
    }
  if (terms->len == 0)
    return NULL;
  g_ptr_array_sort (terms, util_compare_strings);

  /* The texts of the names SPDX does not know: their stand-alone stanza, or
   * the Files stanza's own body. */
  GHashTableIter it;
  gpointer ref, name;
  g_hash_table_iter_init (&it, used);
  while (texts != NULL && g_hash_table_iter_next (&it, &ref, &name))
    {
      const char *text = NULL;
      for (guint i = 0; i < stanzas->len && text == NULL; i++)
        {
          const char *value = g_hash_table_lookup (stanzas->pdata[i], "license");
          g_autofree char *line = deb822_first_line (stanzas->pdata[i], "license");
          if (line != NULL && g_ascii_strcasecmp (line, name) == 0 && strchr (value, '\n') != NULL)
            text = strchr (value, '\n') + 1;
        }
      if (!g_hash_table_contains (texts, ref))
        g_hash_table_insert (texts, g_strdup (ref),
                             g_strdup (text != NULL ? text : (const char *) name));
    }

  g_ptr_array_add (terms, NULL);
  return g_strjoinv (" AND ", (char **) terms->pdata);
}

/* --- reading trees ------------------------------------------------------- */

/* "SRC" or "SRC (VERSION)" from a Source: field. */
static void
parse_source_field (const char *field, const char *name, const char *version, SbomPackage *p)
{
  if (field == NULL)
    {
      p->source = g_strdup (name);
      p->source_version = g_strdup (version);
      return;
    }
  const char *open = strchr (field, '(');
  p->source = g_strstrip (g_strndup (field, strcspn (field, " (")));
  if (open != NULL && strchr (open, ')') != NULL)
    p->source_version = g_strstrip (g_strndup (open + 1, strchr (open, ')') - open - 1));
  else
    p->source_version = g_strdup (version);
}

/* Source package and licenses of P from the tree ROOT. */
static gboolean
read_package_details (GFile *root, GHashTable *stanza, SbomPackage *p, GHashTable *texts,
                      GCancellable *cancellable, GError **error)
{
  g_autofree char *source = deb822_first_line (stanza, "source");
  parse_source_field (source, p->name, p->version, p);
  const char *pre_depends = g_hash_table_lookup (stanza, "pre-depends");
  const char *depends = g_hash_table_lookup (stanza, "depends");
  p->depends = g_strjoin (",", pre_depends != NULL ? pre_depends : "",
                          depends != NULL ? depends : "", NULL);
  const char *provides = g_hash_table_lookup (stanza, "provides");
  p->provides = g_strdup (provides);
  g_autofree char *path = g_strdup_printf ("usr/share/doc/%s/copyright", p->name);
  g_autoptr(GError) local_error = NULL;
  g_autofree char *copyright = treeread_text (root, path, cancellable, &local_error);
  if (local_error != NULL)
    return util_fail (error, "package \"%s\": %s", p->name, local_error->message);
  p->license = copyright != NULL ? sbom_copyright_license (copyright, texts) : NULL;
  return TRUE;
}

/* --- dependencies -------------------------------------------------------- */

/* The package name of one alternative of a relationship field
 * ("libc6:any (>= 2.34)" -> "libc6"), or NULL when there is none. */
static char *
relation_name (const char *alternative)
{
  g_autofree char *text = g_strstrip (g_strdup (alternative));
  text[strcspn (text, " \t\n(:[<")] = '\0';
  return text[0] != '\0' ? g_steal_pointer (&text) : NULL;
}

/* Add package INDEX under NAME to BY_NAME (name -> GPtrArray of indices). */
static void
index_name (GHashTable *by_name, const char *name, guint index)
{
  GPtrArray *list = g_hash_table_lookup (by_name, name);
  if (list == NULL)
    {
      list = g_ptr_array_new ();
      g_hash_table_insert (by_name, g_strdup (name), list);
    }
  g_ptr_array_add (list, GUINT_TO_POINTER (index));
}

/* Which of the packages listed under a name meets P's dependency: the one
 * of P's architecture, else the first. */
static guint
pick_provider (Sbom *sbom, GPtrArray *list, const SbomPackage *p)
{
  for (guint i = 0; i < list->len; i++)
    {
      SbomPackage *q = sbom->packages->pdata[GPOINTER_TO_UINT (list->pdata[i])];
      if (g_str_equal (q->architecture, p->architecture))
        return GPOINTER_TO_UINT (list->pdata[i]);
    }
  return GPOINTER_TO_UINT (list->pdata[0]);
}

static gint
compare_indices (gconstpointer a, gconstpointer b)
{
  guint x = GPOINTER_TO_UINT (*(gpointer const *) a), y = GPOINTER_TO_UINT (*(gpointer const *) b);
  return x < y ? -1 : x > y;
}

/* Each package's depends_on: for each group of its Pre-Depends and
 * Depends, the first alternative a package of the document is (by name, then
 * by Provides).  The packages are sorted already. */
static void
resolve_dependencies (Sbom *sbom)
{
  g_autoptr(GHashTable) real = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                      (GDestroyNotify) g_ptr_array_unref);
  g_autoptr(GHashTable) virtual = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                         (GDestroyNotify) g_ptr_array_unref);
  for (guint i = 0; i < sbom->packages->len; i++)
    {
      SbomPackage *p = sbom->packages->pdata[i];
      index_name (real, p->name, i);
      g_auto(GStrv) provided = g_strsplit (p->provides != NULL ? p->provides : "", ",", -1);
      for (char **v = provided; *v != NULL; v++)
        {
          g_autofree char *name = relation_name (*v);
          if (name != NULL)
            index_name (virtual, name, i);
        }
    }
  for (guint i = 0; i < sbom->packages->len; i++)
    {
      SbomPackage *p = sbom->packages->pdata[i];
      p->depends_on = g_ptr_array_new ();
      g_auto(GStrv) groups = g_strsplit (p->depends != NULL ? p->depends : "", ",", -1);
      for (char **g = groups; *g != NULL; g++)
        {
          g_auto(GStrv) alternatives = g_strsplit (*g, "|", -1);
          for (char **a = alternatives; *a != NULL; a++)
            {
              g_autofree char *name = relation_name (*a);
              GPtrArray *list = name == NULL ? NULL : g_hash_table_lookup (real, name);
              if (list == NULL && name != NULL)
                list = g_hash_table_lookup (virtual, name);
              if (list == NULL)
                continue;
              guint to = pick_provider (sbom, list, p);
              if (to != i && !g_ptr_array_find (p->depends_on, GUINT_TO_POINTER (to), NULL))
                g_ptr_array_add (p->depends_on, GUINT_TO_POINTER (to));
              break;
            }
        }
      g_ptr_array_sort (p->depends_on, compare_indices);
    }
}

static gint
compare_packages (gconstpointer a, gconstpointer b)
{
  const SbomPackage *x = *(SbomPackage *const *) a, *y = *(SbomPackage *const *) b;
  int c = strcmp (x->name, y->name);
  return c != 0 ? c : strcmp (x->architecture, y->architecture);
}

static GFile *
read_commit_root (OstreeRepo *repo, const char *rev, char **out_commit, GCancellable *cancellable,
                  GError **error)
{
  g_autoptr(RepoRev) resolved = repo_resolve (repo, rev, error);  /* "a" is a ref, not a prefix */
  g_autoptr(GFile) root = NULL;
  if (resolved == NULL
      || !ostree_repo_read_commit (repo, resolved->commit, &root, NULL, cancellable, error))
    return NULL;
  if (out_commit != NULL)
    *out_commit = g_strdup (resolved->commit);
  return g_steal_pointer (&root);
}

/* The SHA256 of the one .deb of NAME VERSION ARCH whose tree is in REPO, or
 * NULL when there is none or several. */
static char *
deb_sha256_in_repo (OstreeRepo *repo, const char *name, const char *version, const char *arch,
                    GCancellable *cancellable, GError **error)
{
  g_autofree char *ref = deb_ref_name (name, version, arch, "");
  ref[strlen (ref) - 1] = '\0';  /* "deb/N/V/A" */
  g_autoptr(GHashTable) refs = NULL;
  if (!ostree_repo_list_refs_ext (repo, ref, &refs, OSTREE_REPO_LIST_REFS_EXT_NONE, cancellable,
                                  error))
    return NULL;
  if (g_hash_table_size (refs) != 1)
    return NULL;
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, refs);
  (void) g_hash_table_iter_next (&it, &key, NULL);
  const char *slash = strrchr (key, '/');
  return g_strdup (slash != NULL ? slash + 1 : key);
}

static char *
os_release_distro (GFile *root, GCancellable *cancellable)
{
  g_autofree char *text = treeread_text (root, "etc/os-release", cancellable, NULL);
  if (text == NULL)
    text = treeread_text (root, "usr/lib/os-release", cancellable, NULL);
  gboolean ubuntu = text != NULL && (g_str_has_prefix (text, "ID=ubuntu") || strstr (text, "\nID=ubuntu") != NULL);
  return g_strdup (ubuntu ? "ubuntu" : "debian");
}

/* Where P comes from, as LP in the lockfile LOCK says. */
static void
set_origin (SbomPackage *p, Lockfile *lock, LockPackage *lp)
{
  LockSource *source = lockfile_lookup_source (lock, lp->source);
  p->local = source != NULL && source->local;
  p->apt_source = g_strdup (lp->source);
  p->filename = g_strdup (lp->path != NULL ? lp->path : lp->filename);
}

Sbom *
sbom_from_ref (OstreeRepo *repo, const char *ref, Lockfile *lock, GCancellable *cancellable,
               GError **error)
{
  g_autoptr(Sbom) sbom = sbom_new (ref);
  g_autoptr(GFile) root = read_commit_root (repo, ref, &sbom->commit, cancellable, error);
  if (root == NULL)
    return NULL;
  g_autoptr(GVariant) commit = NULL;
  if (!ostree_repo_load_commit (repo, sbom->commit, &commit, NULL, error))
    return NULL;
  sbom->created = (gint64) ostree_commit_get_timestamp (commit);

  g_autoptr(GPtrArray) stanzas = imagedb_read_status (root, ref, cancellable, error);
  if (stanzas == NULL)
    return NULL;
  g_autoptr(GPtrArray) installed = imagedb_packages (stanzas, IMAGEDB_INSTALLED, ref, error);
  if (installed == NULL)
    return NULL;
  g_autofree char *distro = os_release_distro (root, cancellable);
  for (guint i = 0; i < installed->len; i++)
    {
      GHashTable *stanza = installed->pdata[i];
      SbomPackage *p = g_new0 (SbomPackage, 1);
      g_ptr_array_add (sbom->packages, p);
      p->name = deb822_first_line (stanza, "package");
      p->version = deb822_first_line (stanza, "version");
      p->architecture = deb822_first_line (stanza, "architecture");
      p->distro = g_strdup (distro);
      p->sha256 = deb_sha256_in_repo (repo, p->name, p->version, p->architecture, cancellable, error);
      if (p->sha256 == NULL && error != NULL && *error != NULL)
        return NULL;
      if (!read_package_details (root, stanza, p, sbom->license_texts, cancellable, error))
        return NULL;
      LockPackage *lp = lock != NULL ? lockfile_lookup_package (lock, p->name, p->architecture)
                                     : NULL;
      if (lp != NULL && g_strcmp0 (lp->version, p->version) == 0)
        set_origin (p, lock, lp);
    }
  g_ptr_array_sort (sbom->packages, compare_packages);
  resolve_dependencies (sbom);
  return g_steal_pointer (&sbom);
}

/* The package tree of P, its status stanza and copyright file. */
static gboolean
read_locked_package (OstreeRepo *repo, LockPackage *lp, SbomPackage *p, GHashTable *texts,
                     GCancellable *cancellable, GError **error)
{
  g_autofree char *ref = deb_ref_name (lp->name, lp->version, lp->architecture, lp->sha256);
  g_autofree char *commit = repo_read_ref (repo, ref);
  if (commit == NULL)
    return util_fail (error, "package \"%s\" %s has no tree (%s) in the repository; build the "
                      "lockfile first (apt2ostree build)", lp->name, lp->version, ref);
  g_autoptr(GFile) root = read_commit_root (repo, commit, NULL, cancellable, error);
  if (root == NULL)
    return FALSE;
  g_autofree char *status_path = g_strdup_printf (DEB_STATUS_DIR "/%s:%s", lp->name, lp->architecture);
  g_autofree char *text = treeread_text (root, status_path, cancellable, error);
  if (text == NULL)
    return error == NULL || *error == NULL
             ? util_fail (error, "%s: no %s: not a tree made by \"apt2ostree unpack-deb\"", ref,
                          status_path)
             : FALSE;
  g_autoptr(GPtrArray) stanzas = deb822_parse (text);
  if (stanzas->len == 0)
    return util_fail (error, "%s: %s is empty", ref, status_path);
  return read_package_details (root, stanzas->pdata[0], p, texts, cancellable, error);
}

Sbom *
sbom_from_lockfile (OstreeRepo *repo, Lockfile *lock, const char *lock_path,
                    GCancellable *cancellable, GError **error)
{
  g_autofree char *base = g_path_get_basename (lock_path);
  if (g_str_has_suffix (base, ".lock.json"))
    base[strlen (base) - strlen (".lock.json")] = '\0';
  g_autoptr(Sbom) sbom = sbom_new (base);

  g_autofree char *contents = NULL;
  gsize len;
  if (!g_file_get_contents (lock_path, &contents, &len, error))
    return NULL;
  sbom->lockfile_sha256 = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) contents, len);

  for (guint i = 0; i < lock->sources->len; i++)
    {
      LockSource *s = lock->sources->pdata[i];
      gint64 date;
      if (s->date != NULL && release_parse_date (s->date, &date) && date > sbom->created)
        sbom->created = date;
    }
  for (guint i = 0; i < lock->packages->len; i++)
    {
      LockPackage *lp = lock->packages->pdata[i];
      LockSource *source = lockfile_lookup_source (lock, lp->source);
      SbomPackage *p = g_new0 (SbomPackage, 1);
      g_ptr_array_add (sbom->packages, p);
      p->name = g_strdup (lp->name);
      p->version = g_strdup (lp->version);
      p->architecture = g_strdup (lp->architecture);
      p->sha256 = g_strdup (lp->sha256);
      p->distro = g_strdup (source != NULL && g_strcmp0 (source->origin, "Ubuntu") == 0 ? "ubuntu"
                                                                                       : "debian");
      set_origin (p, lock, lp);
      if (!read_locked_package (repo, lp, p, sbom->license_texts, cancellable, error))
        return NULL;
    }
  g_ptr_array_sort (sbom->packages, compare_packages);
  resolve_dependencies (sbom);
  return g_steal_pointer (&sbom);
}

/* --- writing ------------------------------------------------------------- */

/* purl's percent-encoding: everything but letters, digits and ".-_~". */
static void
append_purl_part (GString *out, const char *s)
{
  for (const unsigned char *p = (const unsigned char *) s; *p != '\0'; p++)
    if (g_ascii_isalnum (*p) || strchr (".-_~", *p) != NULL)
      g_string_append_c (out, *p);
    else
      g_string_append_printf (out, "%%%02X", *p);
}

/* An archive's package is pkg:deb/DISTRO/NAME@VERSION?arch=ARCH; a local
 * .deb claims no archive: pkg:generic/NAME@VERSION?arch=ARCH. */
static char *
package_purl (const SbomPackage *p)
{
  GString *purl = g_string_new (NULL);
  if (p->local)
    g_string_append (purl, "pkg:generic/");
  else
    g_string_append_printf (purl, "pkg:deb/%s/", p->distro);
  append_purl_part (purl, p->name);
  g_string_append_c (purl, '@');
  append_purl_part (purl, p->version);
  g_string_append (purl, "?arch=");
  append_purl_part (purl, p->architecture);
  return g_string_free (purl, FALSE);
}

static char *
iso_time (gint64 seconds)
{
  g_autoptr(GDateTime) t = g_date_time_new_from_unix_utc (seconds);
  return g_date_time_format (t, "%Y-%m-%dT%H:%M:%SZ");
}

/* What the document is about, as a digest: the commit, else the lockfile's
 * and every package's SHA256. */
static char *
sbom_digest (Sbom *sbom)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_checksum_update (sum, (const guchar *) sbom->name, -1);
  if (sbom->commit != NULL)
    g_checksum_update (sum, (const guchar *) sbom->commit, -1);
  if (sbom->lockfile_sha256 != NULL)
    g_checksum_update (sum, (const guchar *) sbom->lockfile_sha256, -1);
  return g_strdup (g_checksum_get_string (sum));
}

static void
add_string (JsonBuilder *b, const char *member, const char *value)
{
  json_builder_set_member_name (b, member);
  json_builder_add_string_value (b, value);
}

static void
add_sha256 (JsonBuilder *b, const char *alg_member, const char *alg, const char *value_member,
            const char *value)
{
  json_builder_begin_object (b);
  add_string (b, alg_member, alg);
  add_string (b, value_member, value);
  json_builder_end_object (b);
}

/* Where P's .deb came from, in words, or NULL when not known. */
static char *
package_origin (const SbomPackage *p)
{
  if (p->apt_source == NULL)
    return NULL;
  if (p->local)
    return g_strdup_printf ("a local .deb (%s), from no archive", p->filename);
  return g_strdup_printf ("%s of the apt source \"%s\" named in the lockfile", p->filename,
                          p->apt_source);
}

static void
spdx_package (JsonBuilder *b, Sbom *sbom, guint index)
{
  SbomPackage *p = sbom->packages->pdata[index];
  g_autofree char *id = g_strdup_printf ("SPDXRef-Package-%u", index + 1);
  g_autofree char *purl = package_purl (p);
  g_autofree char *source_info = g_strdup_printf ("built from the source package %s %s", p->source,
                                                  p->source_version);
  json_builder_begin_object (b);
  add_string (b, "SPDXID", id);
  add_string (b, "name", p->name);
  add_string (b, "versionInfo", p->version);
  if (p->filename != NULL)
    add_string (b, "packageFileName", p->filename);
  /* A local .deb has none; an archive's is its source's, which the
   * lockfile names but never locates (no host is written). */
  add_string (b, "downloadLocation", p->local ? "NONE" : "NOASSERTION");
  json_builder_set_member_name (b, "filesAnalyzed");
  json_builder_add_boolean_value (b, FALSE);
  if (p->sha256 != NULL)
    {
      json_builder_set_member_name (b, "checksums");
      json_builder_begin_array (b);
      add_sha256 (b, "algorithm", "SHA256", "checksumValue", p->sha256);
      json_builder_end_array (b);
    }
  add_string (b, "licenseConcluded", "NOASSERTION");
  add_string (b, "licenseDeclared", p->license != NULL ? p->license : "NOASSERTION");
  add_string (b, "copyrightText", "NOASSERTION");
  add_string (b, "sourceInfo", source_info);
  g_autofree char *comment = package_origin (p);
  if (comment != NULL)
    add_string (b, "comment", comment);
  json_builder_set_member_name (b, "externalRefs");
  json_builder_begin_array (b);
  json_builder_begin_object (b);
  add_string (b, "referenceCategory", "PACKAGE-MANAGER");
  add_string (b, "referenceType", "purl");
  add_string (b, "referenceLocator", purl);
  json_builder_end_object (b);
  json_builder_end_array (b);
  json_builder_end_object (b);
}

static void
spdx_relationship (JsonBuilder *b, const char *from, const char *type, const char *to)
{
  json_builder_begin_object (b);
  add_string (b, "spdxElementId", from);
  add_string (b, "relationshipType", type);
  add_string (b, "relatedSpdxElement", to);
  json_builder_end_object (b);
}

static void
spdx_image (JsonBuilder *b, Sbom *sbom)
{
  json_builder_begin_object (b);
  add_string (b, "SPDXID", "SPDXRef-Image");
  add_string (b, "name", sbom->name);
  if (sbom->commit != NULL)
    add_string (b, "versionInfo", sbom->commit);
  add_string (b, "downloadLocation", "NOASSERTION");
  json_builder_set_member_name (b, "filesAnalyzed");
  json_builder_add_boolean_value (b, FALSE);
  const char *digest = sbom->commit != NULL ? sbom->commit : sbom->lockfile_sha256;
  json_builder_set_member_name (b, "checksums");
  json_builder_begin_array (b);
  add_sha256 (b, "algorithm", "SHA256", "checksumValue", digest);
  json_builder_end_array (b);
  add_string (b, "primaryPackagePurpose", "OPERATING-SYSTEM");
  add_string (b, "licenseConcluded", "NOASSERTION");
  add_string (b, "licenseDeclared", "NOASSERTION");
  add_string (b, "copyrightText", "NOASSERTION");
  if (sbom->commit == NULL)
    add_string (b, "comment", "the image a lockfile describes; the checksum is the lockfile's");
  json_builder_end_object (b);
}

static void
spdx_document (JsonBuilder *b, Sbom *sbom)
{
  g_autofree char *digest = sbom_digest (sbom);
  g_autofree char *namespace = g_strdup_printf ("https://apt2ostree.invalid/spdx/%s-%s", sbom->name,
                                                digest);
  g_autofree char *created = iso_time (sbom->created);
  json_builder_begin_object (b);
  add_string (b, "spdxVersion", "SPDX-2.3");
  add_string (b, "dataLicense", "CC0-1.0");
  add_string (b, "SPDXID", "SPDXRef-DOCUMENT");
  add_string (b, "name", sbom->name);
  add_string (b, "documentNamespace", namespace);
  json_builder_set_member_name (b, "creationInfo");
  json_builder_begin_object (b);
  add_string (b, "created", created);
  json_builder_set_member_name (b, "creators");
  json_builder_begin_array (b);
  json_builder_add_string_value (b, "Tool: apt2ostree-" PACKAGE_VERSION);
  json_builder_end_array (b);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "packages");
  json_builder_begin_array (b);
  spdx_image (b, sbom);
  for (guint i = 0; i < sbom->packages->len; i++)
    spdx_package (b, sbom, i);
  json_builder_end_array (b);

  json_builder_set_member_name (b, "relationships");
  json_builder_begin_array (b);
  spdx_relationship (b, "SPDXRef-DOCUMENT", "DESCRIBES", "SPDXRef-Image");
  for (guint i = 0; i < sbom->packages->len; i++)
    {
      g_autofree char *id = g_strdup_printf ("SPDXRef-Package-%u", i + 1);
      spdx_relationship (b, "SPDXRef-Image", "CONTAINS", id);
    }
  for (guint i = 0; i < sbom->packages->len; i++)
    {
      SbomPackage *p = sbom->packages->pdata[i];
      g_autofree char *id = g_strdup_printf ("SPDXRef-Package-%u", i + 1);
      for (guint k = 0; k < p->depends_on->len; k++)
        {
          g_autofree char *to = g_strdup_printf ("SPDXRef-Package-%u",
                                                 GPOINTER_TO_UINT (p->depends_on->pdata[k]) + 1);
          spdx_relationship (b, id, "DEPENDS_ON", to);
        }
    }
  json_builder_end_array (b);

  g_autoptr(GList) refs = g_list_sort (g_hash_table_get_keys (sbom->license_texts),
                                       (GCompareFunc) strcmp);
  if (refs != NULL)
    {
      json_builder_set_member_name (b, "hasExtractedLicensingInfos");
      json_builder_begin_array (b);
      for (GList *l = refs; l != NULL; l = l->next)
        {
          json_builder_begin_object (b);
          add_string (b, "licenseId", l->data);
          add_string (b, "extractedText", g_hash_table_lookup (sbom->license_texts, l->data));
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
}

/* A UUID (version 5 layout) from a SHA-256 digest: a serial number that is
 * the same for the same document. */
static char *
uuid_from_digest (const char *hex)
{
  g_autofree char *uuid = util_uuid_from_hex (hex, '5');
  return g_strconcat ("urn:uuid:", uuid, NULL);
}

static void
cyclonedx_component (JsonBuilder *b, SbomPackage *p)
{
  g_autofree char *purl = package_purl (p);
  json_builder_begin_object (b);
  add_string (b, "type", "library");
  add_string (b, "bom-ref", purl);
  add_string (b, "name", p->name);
  add_string (b, "version", p->version);
  add_string (b, "purl", purl);
  if (p->sha256 != NULL)
    {
      json_builder_set_member_name (b, "hashes");
      json_builder_begin_array (b);
      add_sha256 (b, "alg", "SHA-256", "content", p->sha256);
      json_builder_end_array (b);
    }
  if (p->license != NULL)
    {
      json_builder_set_member_name (b, "licenses");
      json_builder_begin_array (b);
      json_builder_begin_object (b);
      add_string (b, "expression", p->license);
      json_builder_end_object (b);
      json_builder_end_array (b);
    }
  json_builder_set_member_name (b, "properties");
  json_builder_begin_array (b);
  const char *props[][2] = { { "apt2ostree:architecture", p->architecture },
                             { "apt2ostree:source-package", p->source },
                             { "apt2ostree:source-version", p->source_version },
                             { "apt2ostree:apt-source", p->local ? NULL : p->apt_source },
                             { "apt2ostree:local-deb", p->local ? "true" : NULL },
                             { "apt2ostree:filename", p->filename } };
  for (guint i = 0; i < G_N_ELEMENTS (props); i++)
    {
      if (props[i][1] == NULL)
        continue;
      json_builder_begin_object (b);
      add_string (b, "name", props[i][0]);
      add_string (b, "value", props[i][1]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

static void
cyclonedx_document (JsonBuilder *b, Sbom *sbom)
{
  g_autofree char *digest = sbom_digest (sbom);
  g_autofree char *serial = uuid_from_digest (digest);
  g_autofree char *created = iso_time (sbom->created);
  json_builder_begin_object (b);
  add_string (b, "bomFormat", "CycloneDX");
  add_string (b, "specVersion", "1.5");
  add_string (b, "serialNumber", serial);
  json_builder_set_member_name (b, "version");
  json_builder_add_int_value (b, 1);
  json_builder_set_member_name (b, "metadata");
  json_builder_begin_object (b);
  add_string (b, "timestamp", created);
  json_builder_set_member_name (b, "tools");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "components");
  json_builder_begin_array (b);
  json_builder_begin_object (b);
  add_string (b, "type", "application");
  add_string (b, "name", "apt2ostree");
  add_string (b, "version", PACKAGE_VERSION);
  json_builder_end_object (b);
  json_builder_end_array (b);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "component");
  json_builder_begin_object (b);
  add_string (b, "type", "operating-system");
  add_string (b, "bom-ref", "image");
  add_string (b, "name", sbom->name);
  if (sbom->commit != NULL)
    add_string (b, "version", sbom->commit);
  json_builder_set_member_name (b, "hashes");
  json_builder_begin_array (b);
  add_sha256 (b, "alg", "SHA-256", "content",
              sbom->commit != NULL ? sbom->commit : sbom->lockfile_sha256);
  json_builder_end_array (b);
  json_builder_end_object (b);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "components");
  json_builder_begin_array (b);
  for (guint i = 0; i < sbom->packages->len; i++)
    cyclonedx_component (b, sbom->packages->pdata[i]);
  json_builder_end_array (b);

  json_builder_set_member_name (b, "dependencies");
  json_builder_begin_array (b);
  json_builder_begin_object (b);
  add_string (b, "ref", "image");
  json_builder_set_member_name (b, "dependsOn");
  json_builder_begin_array (b);
  for (guint i = 0; i < sbom->packages->len; i++)
    {
      g_autofree char *purl = package_purl (sbom->packages->pdata[i]);
      json_builder_add_string_value (b, purl);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  for (guint i = 0; i < sbom->packages->len; i++)
    {
      SbomPackage *p = sbom->packages->pdata[i];
      g_autofree char *purl = package_purl (p);
      json_builder_begin_object (b);
      add_string (b, "ref", purl);
      json_builder_set_member_name (b, "dependsOn");
      json_builder_begin_array (b);
      for (guint k = 0; k < p->depends_on->len; k++)
        {
          g_autofree char *to = package_purl (
              sbom->packages->pdata[GPOINTER_TO_UINT (p->depends_on->pdata[k])]);
          json_builder_add_string_value (b, to);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

char *
sbom_to_json (Sbom *sbom, const char *format)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  if (g_str_equal (format, "cyclonedx"))
    cyclonedx_document (b, sbom);
  else
    spdx_document (b, sbom);
  g_autoptr(JsonNode) root = json_builder_get_root (b);
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_indent (gen, 2);
  json_generator_set_root (gen, root);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  return g_strconcat (text, "\n", NULL);
}
