/* sources.c — read apt sources in both formats; see sources.h. */
#include "config.h"

#include <string.h>

#include "base/deb822.h"
#include "base/debpolicy.h"
#include "apt/sources.h"
#include "base/util.h"

void
source_free (Source *source)
{
  if (source == NULL)
    return;
  g_free (source->name);
  g_free (source->uri);
  g_strfreev (source->uris);
  g_free (source->suite);
  g_strfreev (source->components);
  g_strfreev (source->architectures);
  g_free (source->signed_by);
  g_free (source->origin);
  g_free (source);
}

void
sources_list_free (SourcesList *list)
{
  if (list == NULL)
    return;
  g_ptr_array_unref (list->sources);
  g_free (list->path);
  g_free (list);
}

static SourcesList *
sources_list_new (const char *path)
{
  SourcesList *list = g_new0 (SourcesList, 1);
  list->sources = g_ptr_array_new_with_free_func ((GDestroyNotify) source_free);
  list->path = g_strdup (path);
  return list;
}

/* Split on spaces and tabs, dropping empty words. */
static char **
split_words (const char *text)
{
  g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func (g_free);
  const char *p = text;
  while (*p != '\0')
    {
      while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
      const char *start = p;
      while (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\n')
        p++;
      if (p > start)
        g_ptr_array_add (words, g_strndup (start, p - start));
    }
  g_ptr_array_add (words, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&words), FALSE);
}

static char *
strip_trailing_slashes (const char *uri)
{
  char *s = g_strdup (uri);
  gsize len = strlen (s);
  while (len > 0 && s[len - 1] == '/')
    s[--len] = '\0';
  return s;
}

char *
flat_path (const char *suite)
{
  const char *p = suite;
  while (g_str_has_prefix (p, "./"))
    p += 2;
  char *path = g_strdup (p);
  gsize len = strlen (path);
  while (len > 0 && path[len - 1] == '/')
    path[--len] = '\0';
  if (g_str_equal (path, "."))
    path[0] = '\0';
  return path;
}

static gboolean
parse_pin_priority (const char *value, const char *origin, int *out, GError **error)
{
  gint64 n;
  if (!g_ascii_string_to_signed (value, 10, -10000, 10000, &n, NULL))
    return util_fail (error, "%s: Pin-Priority \"%s\" is not a number", origin, value);
  *out = (int) n;
  return TRUE;
}

/* FIELD's VALUE is allowed when PROBLEM (debpolicy's verdict) is NULL;
 * else a one-line error naming ORIGIN (FILE:LINE) and the value, escaped. */
static gboolean
check_value (const char *origin, const char *field, const char *value, const char *problem,
             GError **error)
{
  if (problem == NULL)
    return TRUE;
  g_autofree char *shown = g_strescape (value, NULL);
  return util_fail (error, "%s: %s \"%s\" %s", origin, field, shown, problem);
}

/* A suite is a path inside the archive; a flat one ends in "/" and may be
 * "./", the URI itself. */
const char *
source_suite_problem (const char *suite)
{
  if (!g_str_has_suffix (suite, "/"))
    return debpolicy_archive_path_problem (suite);
  g_autofree char *path = flat_path (suite);
  if (*path == '\0')
    return NULL;
  return debpolicy_archive_path_problem (path);
}

/* What a stanza or line gives is data that reaches URLs, lockfiles and
 * Ninja files: each value by its grammar (see sources.h). */
static gboolean
check_values (char **uris, char **suites, char **components, char **architectures,
              const char *signed_by, const char *name, const char *origin, GError **error)
{
  for (char **u = uris; *u != NULL; u++)
    if (!check_value (origin, "URI", *u, debpolicy_text_problem (*u), error))
      return FALSE;
  for (char **s = suites; *s != NULL; s++)
    if (!check_value (origin, "suite", *s, source_suite_problem (*s), error))
      return FALSE;
  for (char **c = components; *c != NULL; c++)
    if (!check_value (origin, "component", *c, debpolicy_archive_path_problem (*c), error))
      return FALSE;
  for (char **a = architectures; a != NULL && *a != NULL; a++)
    if (!check_value (origin, "architecture", *a, debpolicy_arch_problem (*a), error))
      return FALSE;
  /* An inline key block is lines by nature; a keyring path is one line. */
  if (signed_by != NULL && strstr (signed_by, "-----BEGIN PGP PUBLIC KEY BLOCK-----") == NULL
      && !check_value (origin, "Signed-By", signed_by, debpolicy_text_problem (signed_by), error))
    return FALSE;
  if (name != NULL && !check_value (origin, "name", name, debpolicy_name_problem (name), error))
    return FALSE;
  return TRUE;
}

/* What a line's options or a stanza's fields say of its sources. */
typedef struct {
  char **architectures;
  const char *signed_by;
  int pin_priority;
  const char *name;
  gboolean ignore_valid_until;
  gboolean trusted;
} SourceOptions;

/* apt's boolean option values. */
static gboolean
parse_yes_no (const char *value, const char *origin, const char *option, gboolean *out,
              GError **error)
{
  if (g_ascii_strcasecmp (value, "yes") == 0 || g_ascii_strcasecmp (value, "true") == 0)
    *out = TRUE;
  else if (g_ascii_strcasecmp (value, "no") == 0 || g_ascii_strcasecmp (value, "false") == 0)
    *out = FALSE;
  else
    return util_fail (error, "%s: %s must be \"yes\" or \"no\", not \"%s\"", origin, option, value);
  return TRUE;
}

/* Add one Source per (URI, suite), merging with an existing source of the
 * same URI and suite as apt does. */
static gboolean
add_sources (SourcesList *list, char **uris, char **suites, char **components,
             const SourceOptions *opts, const char *origin, GError **error)
{
  char **architectures = opts->architectures;
  const char *signed_by = opts->signed_by;
  const char *name = opts->name;
  if (uris == NULL || uris[0] == NULL)
    return util_fail (error, "%s: no URI", origin);
  if (suites == NULL || suites[0] == NULL)
    return util_fail (error, "%s: no suite", origin);
  gboolean flat = g_str_has_suffix (suites[0], "/");
  for (char **s = suites; *s != NULL; s++)
    if (g_str_has_suffix (*s, "/") != flat)
      return util_fail (error, "%s: suites \"%s\" and \"%s\" mix a flat repository (a path ending "
                        "in \"/\") with a dists/ suite; give them separately", origin, suites[0], *s);
  if (flat && components != NULL && components[0] != NULL)
    return util_fail (error, "%s: suite \"%s\" is a flat repository (it ends in \"/\"), which has "
                      "no components, but \"%s\" is given", origin, suites[0], components[0]);
  if (!flat && (components == NULL || components[0] == NULL))
    return util_fail (error, "%s: no components", origin);
  char *no_components[] = { NULL };
  if (components == NULL)
    components = no_components;
  if (!check_values (uris, suites, components, architectures, signed_by, name, origin, error))
    return FALSE;

  guint n_pairs = g_strv_length (suites);
  g_autoptr(GStrvBuilder) all_uris = g_strv_builder_new ();
  for (char **u = uris; *u != NULL; u++)
    {
      g_autofree char *stripped_uri = strip_trailing_slashes (*u);
      g_strv_builder_add (all_uris, stripped_uri);
    }
  g_auto(GStrv) stripped = g_strv_builder_end (all_uris);
  for (char **s = suites; *s != NULL; s++)
      {
        g_autofree char *uri = g_strdup (stripped[0]);
        Source *existing = NULL;
        for (guint i = 0; i < list->sources->len; i++)
          {
            Source *other = list->sources->pdata[i];
            if (g_str_equal (other->uri, uri) && g_str_equal (other->suite, *s))
              existing = other;
          }
        if (existing != NULL)
          {
            g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
            g_strv_builder_addv (b, (const char **) existing->components);
            for (char **c = components; *c != NULL; c++)
              if (!g_strv_contains ((const char *const *) existing->components, *c))
                g_strv_builder_add (b, *c);
            g_strfreev (existing->components);
            existing->components = g_strv_builder_end (b);
            existing->ignore_valid_until |= opts->ignore_valid_until;
            existing->trusted |= opts->trusted;
            continue;
          }

        Source *source = g_new0 (Source, 1);
        source->uri = g_steal_pointer (&uri);
        source->uris = g_strdupv (stripped);
        source->suite = g_strdup (*s);
        source->components = g_strdupv (components);
        source->architectures = g_strdupv (architectures);
        source->signed_by = g_strdup (signed_by);
        source->pin_priority = opts->pin_priority;
        source->ignore_valid_until = opts->ignore_valid_until;
        source->trusted = opts->trusted;
        source->flat = flat;
        source->origin = g_strdup (origin);
        if (name != NULL)
          {
            source->explicit_name = TRUE;
            /* One name for several (URI, suite) pairs: tell them apart by suite. */
            source->name = n_pairs > 1 ? g_strdelimit (g_strdup_printf ("%s-%s", name, *s), "/", '-')
                                       : g_strdup (name);
          }
        g_ptr_array_add (list->sources, source);
      }
  return TRUE;
}

/* --- one-line format --- */

static gboolean
parse_one_line (SourcesList *list, const char *line, const char *origin, GError **error)
{
  g_autofree char *text = g_strdup (line);
  char *hash = strchr (text, '#');
  if (hash != NULL)
    *hash = '\0';
  g_strstrip (text);
  if (*text == '\0')
    return TRUE;

  /* Options in brackets may contain spaces: "[ arch=amd64 signed-by=/k ]". */
  g_autofree char *options = NULL;
  char *open = strchr (text, '[');
  if (open != NULL)
    {
      char *close = strchr (open, ']');
      if (close == NULL)
        return util_fail (error, "%s: unterminated \"[\" in \"%s\"", origin, line);
      options = g_strndup (open + 1, close - open - 1);
      memmove (open, close + 1, strlen (close + 1) + 1);
    }

  g_auto(GStrv) words = split_words (text);
  if (words[0] == NULL)
    return TRUE;
  if (g_str_equal (words[0], "deb-src"))
    return TRUE;
  if (!g_str_equal (words[0], "deb"))
    return util_fail (error, "%s: expected \"deb\" or \"deb-src\", got \"%s\"", origin, words[0]);
  if (g_strv_length (words) < 3)
    return util_fail (error, "%s: expected \"deb [OPTIONS] URI SUITE COMPONENT...\" or \"deb "
                      "[OPTIONS] URI PATH/\"", origin);

  g_auto(GStrv) architectures = NULL;
  g_autofree char *signed_by = NULL;
  g_autofree char *name = NULL;
  int pin_priority = SOURCE_DEFAULT_PIN_PRIORITY;
  gboolean check_valid_until = TRUE;
  gboolean trusted = FALSE;
  g_auto(GStrv) opts = split_words (options != NULL ? options : "");
  for (char **o = opts; *o != NULL; o++)
    {
      const char *eq = strchr (*o, '=');
      if (eq == NULL)
        return util_fail (error, "%s: option \"%s\" is not KEY=VALUE", origin, *o);
      g_autofree char *key = g_strndup (*o, eq - *o);
      const char *value = eq + 1;
      /* A repeated option: the last one counts. */
      if (g_str_equal (key, "arch"))
        {
          g_strfreev (architectures);
          architectures = g_strsplit (value, ",", -1);
        }
      else if (g_str_equal (key, "signed-by"))
        {
          g_free (signed_by);
          signed_by = g_strdup (value);
        }
      else if (g_str_equal (key, "name"))
        {
          g_free (name);
          name = g_strdup (value);
        }
      else if (g_str_equal (key, "pin-priority"))
        {
          if (!parse_pin_priority (value, origin, &pin_priority, error))
            return FALSE;
        }
      else if (g_str_equal (key, "check-valid-until"))
        {
          if (!parse_yes_no (value, origin, "check-valid-until", &check_valid_until, error))
            return FALSE;
        }
      else if (g_str_equal (key, "trusted"))
        {
          if (!parse_yes_no (value, origin, "trusted", &trusted, error))
            return FALSE;
        }
      /* Other apt options (lang=, target=...) do not change what is locked. */
    }

  char *uris[] = { words[1], NULL };
  char *suites[] = { words[2], NULL };
  SourceOptions source_options = {
    .architectures = architectures, .signed_by = signed_by, .pin_priority = pin_priority,
    .name = name, .ignore_valid_until = !check_valid_until, .trusted = trusted,
  };
  return add_sources (list, uris, suites, words + 3, &source_options, origin, error);
}

static gboolean
parse_one_line_text (SourcesList *list, const char *text, const char *origin, GError **error)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autofree char *where = g_strdup_printf ("%s:%u", origin, i + 1);
      if (!parse_one_line (list, lines[i], where, error))
        return FALSE;
    }
  return TRUE;
}

/* --- deb822 --- */

/* What parse_deb822_stanza() reads into. */
typedef struct {
  SourcesList *list;
  const char *origin;
} Deb822Sources;

static gboolean
parse_deb822_stanza (GHashTable *stanza, guint line, gpointer user_data, GError **error)
{
  Deb822Sources *in = user_data;
  g_autofree char *where = g_strdup_printf ("%s:%u", in->origin, line);
  const char *enabled = g_hash_table_lookup (stanza, "enabled");
  if (enabled != NULL && g_ascii_strcasecmp (enabled, "no") == 0)
    return TRUE;

  const char *types = g_hash_table_lookup (stanza, "types");
  if (types == NULL)
    return util_fail (error, "%s: stanza has no \"Types:\" field", where);
  g_auto(GStrv) type_words = split_words (types);
  if (!g_strv_contains ((const char *const *) type_words, "deb"))
    return TRUE;

  const char *uris = g_hash_table_lookup (stanza, "uris");
  const char *suites = g_hash_table_lookup (stanza, "suites");
  const char *components = g_hash_table_lookup (stanza, "components");
  if (uris == NULL || suites == NULL)
    return util_fail (error, "%s: stanza needs \"URIs:\" and \"Suites:\"", where);
  g_auto(GStrv) uri_words = split_words (uris);
  g_auto(GStrv) suite_words = split_words (suites);
  g_auto(GStrv) component_words = split_words (components != NULL ? components : "");

  const char *archs = g_hash_table_lookup (stanza, "architectures");
  g_auto(GStrv) arch_words = archs != NULL ? split_words (archs) : NULL;

  int pin_priority = SOURCE_DEFAULT_PIN_PRIORITY;
  const char *pin = g_hash_table_lookup (stanza, "pin-priority");
  if (pin != NULL && !parse_pin_priority (pin, where, &pin_priority, error))
    return FALSE;

  const char *name = g_hash_table_lookup (stanza, "x-name");
  if (name == NULL)
    name = g_hash_table_lookup (stanza, "name");
  gboolean check_valid_until = TRUE;
  const char *check = g_hash_table_lookup (stanza, "check-valid-until");
  if (check != NULL && !parse_yes_no (check, where, "Check-Valid-Until", &check_valid_until, error))
    return FALSE;
  gboolean trusted = FALSE;
  const char *trusted_value = g_hash_table_lookup (stanza, "trusted");
  if (trusted_value != NULL && !parse_yes_no (trusted_value, where, "Trusted", &trusted, error))
    return FALSE;

  SourceOptions source_options = {
    .architectures = arch_words, .signed_by = g_hash_table_lookup (stanza, "signed-by"),
    .pin_priority = pin_priority, .name = name, .ignore_valid_until = !check_valid_until,
    .trusted = trusted,
  };
  return add_sources (in->list, uri_words, suite_words, component_words, &source_options, where,
                      error);
}

/* apt's reading: a line that is no field is an error, and continuation
 * lines lose their indentation (inline Signed-By keys). */
static gboolean
parse_deb822_text (SourcesList *list, const char *text, const char *origin, GError **error)
{
  Deb822Sources in = { list, origin };
  return deb822_read (text, origin, DEB822_STRICT | DEB822_TRIM_CONTINUATIONS,
                      parse_deb822_stanza, &in, error);
}

/* --- names --- */

static char *
sanitize_name (const char *s)
{
  char *name = g_strdup (s);
  g_strdelimit (name, "/ \t", '-');
  return name;
}

/* What a source is called when nothing names it: its suite, or for a flat
 * repository its path, or for "./" the last element of the URI's path (the
 * host is never used: it would reach the lockfile).  "" when there is none. */
static char *
derived_name (Source *s)
{
  if (!s->flat)
    return g_strdup (s->suite);
  g_autofree char *path = flat_path (s->suite);
  if (*path != '\0')
    return g_steal_pointer (&path);
  const char *scheme_end = strstr (s->uri, "://");
  const char *uri_path = scheme_end != NULL ? strchr (scheme_end + 3, '/') : NULL;
  if (uri_path == NULL)
    return g_strdup ("");
  const char *last = strrchr (uri_path, '/');
  return g_strdup (last + 1);
}

/* Give every source without an explicit name one derived from its suite
 * (and components when the suite alone is ambiguous); see sources.h. */
static gboolean
assign_names (SourcesList *list, GError **error)
{
  GPtrArray *sources = list->sources;
  for (guint i = 0; i < sources->len; i++)
    {
      Source *s = sources->pdata[i];
      if (s->explicit_name)
        continue;
      guint same_suite = 0;
      for (guint j = 0; j < sources->len; j++)
        {
          Source *o = sources->pdata[j];
          if (!o->explicit_name && g_str_equal (o->suite, s->suite))
            same_suite++;
        }
      g_free (s->name);
      if (s->flat)
        {
          g_autofree char *derived = derived_name (s);
          s->name = sanitize_name (derived);
        }
      else if (same_suite > 1)
        {
          g_autofree char *components = g_strjoinv ("-", s->components);
          g_autofree char *joined = g_strdup_printf ("%s-%s", s->suite, components);
          s->name = sanitize_name (joined);
        }
      else
        s->name = sanitize_name (s->suite);
    }

  for (guint i = 0; i < sources->len; i++)
    {
      Source *s = sources->pdata[i];
      const char *problem = debpolicy_name_problem (s->name);
      g_autofree char *shown = g_strescape (s->name, NULL);
      if (problem != NULL)
        return util_fail (error, "%s: the source name \"%s\" %s; a source name is a letter or digit, "
                          "then letters, digits and \"+-._\": give one (deb822 \"X-Name:\", one-line "
                          "\"[name=NAME]\")", s->origin, shown, problem);
    }

  for (guint i = 0; i < sources->len; i++)
    for (guint j = i + 1; j < sources->len; j++)
      {
        Source *a = sources->pdata[i], *b = sources->pdata[j];
        if (g_str_equal (a->name, b->name))
          return util_fail (error, "%s and %s: two sources are both named \"%s\"; give them "
                            "distinct names (deb822 \"X-Name:\", one-line \"[name=NAME]\")",
                            a->origin, b->origin, a->name);
      }
  return TRUE;
}

/* --- loading --- */

gboolean
sources_parse_text (SourcesList *list, const char *text, const char *origin,
                    gboolean deb822, GError **error)
{
  if (deb822)
    return parse_deb822_text (list, text, origin, error);
  return parse_one_line_text (list, text, origin, error);
}

/* deb822 unless the file looks like one-line "deb ..." lines. */
static gboolean
looks_like_deb822 (const char *path, const char *text)
{
  if (g_str_has_suffix (path, ".sources"))
    return TRUE;
  if (g_str_has_suffix (path, ".list"))
    return FALSE;
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      g_autofree char *t = g_strstrip (g_strdup (*l));
      if (*t == '\0' || *t == '#')
        continue;
      return !(g_str_has_prefix (t, "deb ") || g_str_has_prefix (t, "deb\t")
               || g_str_has_prefix (t, "deb-src ") || g_str_has_prefix (t, "deb-src\t"));
    }
  return FALSE;
}

static gboolean
load_into (SourcesList *list, const char *path, GError **error)
{
  g_autofree char *text = NULL;
  g_autoptr(GError) local_error = NULL;
  if (!g_file_get_contents (path, &text, NULL, &local_error))
    return util_fail (error, "sources file \"%s\": %s", path, local_error->message);
  return sources_parse_text (list, text, path, looks_like_deb822 (path, text), error);
}

SourcesList *
sources_load_file (const char *path, GError **error)
{
  g_autoptr(SourcesList) list = sources_list_new (path);
  if (!load_into (list, path, error))
    return NULL;
  if (list->sources->len == 0)
    return util_fail (error, "sources file \"%s\" names no \"deb\" source", path), NULL;
  if (!assign_names (list, error))
    return NULL;
  return g_steal_pointer (&list);
}

char *
sources_host_etc_dir (void)
{
  const char *root = g_getenv ("APT2OSTREE_APT_ROOT");
  if (root == NULL || *root == '\0')
    root = "/";
  return g_build_filename (root, "etc/apt", NULL);
}

SourcesList *
sources_load_host (GError **error)
{
  g_autofree char *etc = sources_host_etc_dir ();
  g_autoptr(SourcesList) list = sources_list_new (NULL);

  g_autofree char *main_list = g_build_filename (etc, "sources.list", NULL);
  if (g_file_test (main_list, G_FILE_TEST_EXISTS) && !load_into (list, main_list, error))
    return NULL;

  g_autofree char *dir_path = g_build_filename (etc, "sources.list.d", NULL);
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *entry;
  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (entry, ".list") || g_str_has_suffix (entry, ".sources"))
      g_ptr_array_add (names, g_strdup (entry));
  g_ptr_array_sort (names, util_compare_strings);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (dir_path, names->pdata[i], NULL);
      if (!load_into (list, path, error))
        return NULL;
    }

  if (list->sources->len == 0)
    return util_fail (error, "the host's apt configuration (%s/sources.list, sources.list.d/) "
                      "names no \"deb\" source; give one with --sources FILE", etc), NULL;
  if (!assign_names (list, error))
    return NULL;
  return g_steal_pointer (&list);
}

SourcesList *
sources_load (const char *path, GError **error)
{
  return path != NULL ? sources_load_file (path, error) : sources_load_host (error);
}

Source *
sources_list_lookup (SourcesList *list, const char *name)
{
  for (guint i = 0; i < list->sources->len; i++)
    {
      Source *s = list->sources->pdata[i];
      if (g_str_equal (s->name, name))
        return s;
    }
  return NULL;
}

static char *
sources_list_describe (SourcesList *list)
{
  g_autoptr(GString) names = g_string_new ("");
  for (guint i = 0; i < list->sources->len; i++)
    {
      Source *s = list->sources->pdata[i];
      g_string_append_printf (names, "%s\"%s\"", i > 0 ? ", " : "", s->name);
    }
  g_autofree char *where = list->path != NULL ? g_strdup_printf ("\"%s\"", list->path)
                                              : g_strdup ("the host's apt configuration");
  return g_strdup_printf ("%s names %s", where, names->len > 0 ? names->str : "no source");
}

gboolean
sources_list_select (SourcesList *list, const char *const *names, GError **error)
{
  g_autoptr(GPtrArray) selected = g_ptr_array_new_with_free_func ((GDestroyNotify) source_free);
  for (const char *const *n = names; *n != NULL; n++)
    {
      guint index;
      gboolean found = FALSE;
      for (index = 0; index < list->sources->len; index++)
        if (g_str_equal (((Source *) list->sources->pdata[index])->name, *n))
          {
            found = TRUE;
            break;
          }
      if (!found)
        {
          g_autofree char *described = sources_list_describe (list);
          return util_fail (error, "no source named \"%s\": %s", *n, described);
        }
      g_ptr_array_add (selected, g_ptr_array_steal_index (list->sources, index));
    }
  g_ptr_array_unref (list->sources);
  list->sources = g_steal_pointer (&selected);
  return TRUE;
}

void
sources_list_filter_arch (SourcesList *list, const char *arch)
{
  for (guint i = 0; i < list->sources->len;)
    {
      Source *s = list->sources->pdata[i];
      if (s->architectures != NULL
          && !g_strv_contains ((const char *const *) s->architectures, arch))
        g_ptr_array_remove_index (list->sources, i);
      else
        i++;
    }
}

static gboolean
check_one_uri (Source *source, const char *uri, GError **error)
{
  g_autofree char *problem = debpolicy_uri_problem (uri);
  g_autofree char *shown = uri != NULL ? g_strescape (uri, NULL) : g_strdup ("");
  if (problem != NULL)
    return util_fail (error, "%s: source \"%s\": URI \"%s\" %s", source->origin, source->name,
                      shown, problem);
  return TRUE;
}

gboolean
source_check_uri (Source *source, GError **error)
{
  if (source->uris == NULL)
    return check_one_uri (source, source->uri, error);
  for (char **u = source->uris; *u != NULL; u++)
    if (!check_one_uri (source, *u, error))
      return FALSE;
  return TRUE;
}

gboolean
sources_list_apply_mirrors (SourcesList *list, const char *const *mirrors,
                            const char *const *names, const char *names_where, GError **error)
{
  g_autoptr(GHashTable) replaced = g_hash_table_new (NULL, NULL);
  for (const char *const *m = mirrors; m != NULL && *m != NULL; m++)
    {
      const char *eq = strchr (*m, '=');
      g_autofree char *shown = g_strescape (*m, NULL);
      if (eq == NULL || eq == *m || eq[1] == '\0')
        return util_fail (error, "--mirror \"%s\": expected NAME=URI", shown);
      g_autofree char *name = g_strndup (*m, eq - *m);
      if (names != NULL && !g_strv_contains (names, name))
        {
          g_autoptr(GString) known = g_string_new ("");
          for (const char *const *n = names; *n != NULL; n++)
            g_string_append_printf (known, "%s\"%s\"", n == names ? "" : ", ", *n);
          return util_fail (error, "--mirror \"%s\": no source named \"%s\" in %s, whose sources "
                            "are %s", shown, name, names_where, known->len > 0 ? known->str : "none");
        }
      g_autofree char *problem = debpolicy_uri_problem (eq + 1);
      if (problem != NULL)
        return util_fail (error, "--mirror \"%s\": the URI %s", shown, problem);
      Source *s = sources_list_lookup (list, name);
      if (s == NULL)
        {
          s = g_new0 (Source, 1);
          s->name = g_strdup (name);
          s->explicit_name = TRUE;
          s->pin_priority = SOURCE_DEFAULT_PIN_PRIORITY;
          s->origin = g_strdup ("--mirror");
          g_ptr_array_add (list->sources, s);
        }
      /* The first --mirror of a name replaces the source's URIs, later ones
       * add fallbacks. */
      g_autofree char *uri = strip_trailing_slashes (eq + 1);
      if (!g_hash_table_contains (replaced, s))
        {
          g_hash_table_add (replaced, s);
          g_clear_pointer (&s->uris, g_strfreev);
        }
      g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
      if (s->uris != NULL)
        g_strv_builder_addv (b, (const char **) s->uris);
      g_strv_builder_add (b, uri);
      g_strfreev (s->uris);
      s->uris = g_strv_builder_end (b);
      g_free (s->uri);
      s->uri = g_strdup (s->uris[0]);
    }
  return TRUE;
}

/* --- another release of the same archive --- */

/* The release a suite belongs to: "bookworm" for "bookworm",
 * "bookworm-security" and "bookworm/updates". */
static gsize
release_length (const char *suite)
{
  return strcspn (suite, "-/");
}

/* Releases that have no -updates or -security suite. */
static gboolean
release_is_unstable (const char *release)
{
  return g_str_equal (release, "sid") || g_str_equal (release, "unstable")
         || g_str_equal (release, "experimental") || g_str_equal (release, "rc-buggy");
}

static gboolean
source_named_after_suite (Source *s)
{
  return !s->explicit_name && !s->flat;
}

gboolean
sources_list_set_suite (SourcesList *list, const char *suite, GError **error)
{
  const char *problem = debpolicy_release_problem (suite);
  if (problem != NULL)
    {
      g_autofree char *shown = g_strescape (suite, NULL);
      return util_fail (error, "--suite \"%s\" %s: expected a release name such as \"trixie\" "
                        "or \"sid\"", shown, problem);
    }
  Source *first = NULL;
  for (guint i = 0; i < list->sources->len && first == NULL; i++)
    if (source_named_after_suite (list->sources->pdata[i]))
      first = list->sources->pdata[i];
  if (first == NULL)
    return util_fail (error, "--suite %s: every source of %s has a name of its own; "
                      "--suite changes only sources named after their suite", suite,
                      list->path != NULL ? list->path : "the host's apt configuration");
  g_autofree char *from = g_strndup (first->suite, release_length (first->suite));
  for (guint i = 0; i < list->sources->len;)
    {
      Source *s = list->sources->pdata[i];
      gsize len = release_length (s->suite);
      if (!source_named_after_suite (s) || len != strlen (from) || strncmp (s->suite, from, len) != 0)
        {
          i++;
          continue;
        }
      const char *rest = s->suite + len;   /* "", "-security", "/updates" */
      if (*rest != '\0' && release_is_unstable (suite))
        {
          g_ptr_array_remove_index (list->sources, i);
          continue;
        }
      char *moved = g_strconcat (suite, rest, NULL);  /* REST points into the old suite */
      g_free (s->suite);
      s->suite = moved;
      i++;
    }
  return assign_names (list, error);
}

gboolean
sources_list_set_components (SourcesList *list, const char *const *components, GError **error)
{
  if (components == NULL || components[0] == NULL)
    return util_fail (error, "--components: no component given");
  for (const char *const *c = components; *c != NULL; c++)
    if (debpolicy_archive_path_problem (*c) != NULL)
      {
        g_autofree char *shown = g_strescape (*c, NULL);
        return util_fail (error, "--components: \"%s\" %s", shown,
                          debpolicy_archive_path_problem (*c));
      }
  for (guint i = 0; i < list->sources->len; i++)
    {
      Source *s = list->sources->pdata[i];
      if (s->flat)
        continue;
      g_strfreev (s->components);
      s->components = g_strdupv ((char **) components);
    }
  return TRUE;
}
