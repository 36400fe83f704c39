/* lockfile.c — write and read lockfiles; see lockfile.h. */
#include "config.h"

#include <errno.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <unistd.h>

#include "base/debpolicy.h"
#include "base/pathfilter.h"
#include "apt/lockfile.h"
#include "base/util.h"

void
lock_source_free (LockSource *source)
{
  if (source == NULL)
    return;
  g_free (source->name);
  g_free (source->suite);
  g_free (source->codename);
  g_free (source->origin);
  g_free (source->version);
  g_strfreev (source->components);
  g_strfreev (source->architectures);
  g_free (source->fingerprint);
  g_free (source->inrelease_sha256);
  g_free (source->date);
  g_free (source->uri);
  g_free (source->dir);
  g_free (source);
}

void
lock_package_free (LockPackage *package)
{
  if (package == NULL)
    return;
  g_free (package->name);
  g_free (package->version);
  g_free (package->architecture);
  g_free (package->source);
  g_free (package->filename);
  g_free (package->sha256);
  g_free (package->priority);
  g_free (package->multi_arch);
  g_free (package->path);
  g_free (package);
}

Lockfile *
lockfile_new (void)
{
  Lockfile *lock = g_new0 (Lockfile, 1);
  lock->format = LOCKFILE_FORMAT;
  lock->sources = g_ptr_array_new_with_free_func ((GDestroyNotify) lock_source_free);
  lock->packages = g_ptr_array_new_with_free_func ((GDestroyNotify) lock_package_free);
  lock->install_order = g_ptr_array_new_with_free_func (g_free);
  return lock;
}

void
lockfile_free (Lockfile *lock)
{
  if (lock == NULL)
    return;
  g_strfreev (lock->request.packages);
  g_free (lock->request.variant);
  g_free (lock->request.architecture);
  g_strfreev (lock->request.sources);
  g_free (lock->request.sources_file);
  g_free (lock->request.merged_usr);
  g_free (lock->request.suite);
  g_strfreev (lock->request.components);
  g_strfreev (lock->request.path_filters);
  g_ptr_array_unref (lock->sources);
  g_ptr_array_unref (lock->packages);
  g_ptr_array_unref (lock->install_order);
  g_free (lock);
}

static int
compare_packages (gconstpointer a, gconstpointer b)
{
  const LockPackage *pa = *(LockPackage **) a, *pb = *(LockPackage **) b;
  int c = strcmp (pa->name, pb->name);
  return c != 0 ? c : strcmp (pa->architecture, pb->architecture);
}

void
lockfile_sort (Lockfile *lock)
{
  g_ptr_array_sort (lock->packages, compare_packages);
}

/* --- writing: a fixed layout, built by hand so that it never moves --- */

/* Not json-glib's JsonGenerator (which reads it back): its pretty form
 * differs at byte 13 of every lockfile ('"format" : 1', a space before the
 * colon) and puts each member of a package on a line of its own; its compact
 * form has no space after ':' and ','.  Committed lockfiles would all change. */

static void
append_string (GString *out, const char *s)
{
  if (s == NULL)
    {
      g_string_append (out, "null");
      return;
    }
  g_string_append_c (out, '"');
  for (const char *p = s; *p != '\0'; p++)
    {
      guchar c = *p;
      if (c == '"' || c == '\\')
        g_string_append_printf (out, "\\%c", c);
      else if (c == '\n')
        g_string_append (out, "\\n");
      else if (c == '\t')
        g_string_append (out, "\\t");
      else if (c < 0x20)
        g_string_append_printf (out, "\\u%04x", c);
      else
        g_string_append_c (out, c);
    }
  g_string_append_c (out, '"');
}

static void
append_strv (GString *out, char **strv)
{
  g_string_append_c (out, '[');
  for (guint i = 0; strv != NULL && strv[i] != NULL; i++)
    {
      if (i > 0)
        g_string_append (out, ", ");
      append_string (out, strv[i]);
    }
  g_string_append_c (out, ']');
}

static void
append_key (GString *out, const char *key, gboolean first)
{
  if (!first)
    g_string_append (out, ", ");
  append_string (out, key);
  g_string_append (out, ": ");
}

static void
append_source (GString *out, gconstpointer item)
{
  const LockSource *s = item;
  g_string_append (out, "{");
  append_key (out, "name", TRUE);
  append_string (out, s->name);
  append_key (out, "suite", FALSE);
  append_string (out, s->suite);
  append_key (out, "codename", FALSE);
  append_string (out, s->codename);
  append_key (out, "origin", FALSE);
  append_string (out, s->origin);
  append_key (out, "version", FALSE);
  append_string (out, s->version);
  append_key (out, "components", FALSE);
  append_strv (out, s->components);
  append_key (out, "architectures", FALSE);
  append_strv (out, s->architectures);
  append_key (out, "pin-priority", FALSE);
  g_string_append_printf (out, "%d", s->pin_priority);
  append_key (out, "fingerprint", FALSE);
  append_string (out, s->fingerprint);
  append_key (out, "inrelease-sha256", FALSE);
  append_string (out, s->inrelease_sha256);
  append_key (out, "date", FALSE);
  append_string (out, s->date);
  if (s->trusted)
    {
      append_key (out, "trusted", FALSE);
      g_string_append (out, "true");
    }
  if (s->uri != NULL)
    {
      append_key (out, "uri", FALSE);
      append_string (out, s->uri);
    }
  if (s->local)
    {
      append_key (out, "local", FALSE);
      g_string_append (out, "true");
    }
  if (s->dir != NULL)
    {
      append_key (out, "dir", FALSE);
      append_string (out, s->dir);
    }
  g_string_append (out, "}");
}

static void
append_package (GString *out, gconstpointer item)
{
  const LockPackage *p = item;
  g_string_append (out, "{");
  append_key (out, "name", TRUE);
  append_string (out, p->name);
  append_key (out, "version", FALSE);
  append_string (out, p->version);
  append_key (out, "architecture", FALSE);
  append_string (out, p->architecture);
  append_key (out, "source", FALSE);
  append_string (out, p->source);
  append_key (out, "essential", FALSE);
  g_string_append (out, p->essential ? "true" : "false");
  append_key (out, "priority", FALSE);
  append_string (out, p->priority);
  append_key (out, "multi-arch", FALSE);
  append_string (out, p->multi_arch);
  append_key (out, "size", FALSE);
  g_string_append_printf (out, "%" G_GINT64_FORMAT, p->size);
  append_key (out, "sha256", FALSE);
  append_string (out, p->sha256);
  append_key (out, "filename", FALSE);
  append_string (out, p->filename);
  if (p->path != NULL)
    {
      append_key (out, "path", FALSE);
      append_string (out, p->path);
    }
  g_string_append (out, "}");
}

typedef void (*AppendItem) (GString *out, gconstpointer item);

static void
append_name (GString *out, gconstpointer name)
{
  append_string (out, name);
}

/* "  NAME": [ one item a line ] and, when MORE follows, a comma. */
static void
append_array (GString *out, const char *name, GPtrArray *items, AppendItem append_item,
              gboolean more)
{
  g_string_append_printf (out, "  \"%s\": [\n", name);
  for (guint i = 0; i < items->len; i++)
    {
      g_string_append (out, "    ");
      append_item (out, items->pdata[i]);
      g_string_append (out, i + 1 < items->len ? ",\n" : "\n");
    }
  g_string_append (out, more ? "  ],\n" : "  ]\n");
}

char *
lockfile_to_string (Lockfile *lock)
{
  GString *out = g_string_new ("{\n");
  LockRequest *r = &lock->request;

  g_string_append_printf (out, "  \"format\": %d,\n", lock->format);
  g_string_append (out, "  \"request\": {\n    \"packages\": ");
  append_strv (out, r->packages);
  g_string_append (out, ",\n    \"variant\": ");
  append_string (out, r->variant);
  g_string_append (out, ",\n    \"architecture\": ");
  append_string (out, r->architecture);
  g_string_append_printf (out, ",\n    \"recommends\": %s", r->recommends ? "true" : "false");
  g_string_append (out, ",\n    \"sources\": ");
  append_strv (out, r->sources);
  g_string_append (out, ",\n    \"sources-file\": ");
  append_string (out, r->sources_file);
  g_string_append (out, ",\n    \"merged-usr\": ");
  append_string (out, r->merged_usr);
  if (r->suite != NULL)
    {
      g_string_append (out, ",\n    \"suite\": ");
      append_string (out, r->suite);
    }
  if (r->components != NULL)
    {
      g_string_append (out, ",\n    \"components\": ");
      append_strv (out, r->components);
    }
  if (r->record_uris)
    g_string_append (out, ",\n    \"record-uris\": true");
  if (r->path_filters != NULL && r->path_filters[0] != NULL)
    {
      g_string_append (out, ",\n    \"path-filters\": ");
      append_strv (out, r->path_filters);
    }
  g_string_append (out, "\n  },\n");

  g_string_append_printf (out, "  \"merged-usr\": %s,\n", lock->merged_usr ? "true" : "false");

  append_array (out, "sources", lock->sources, append_source, TRUE);
  append_array (out, "packages", lock->packages, append_package, TRUE);
  append_array (out, "install-order", lock->install_order, append_name, FALSE);
  g_string_append (out, "}\n");
  return g_string_free (out, FALSE);
}

static gboolean check_lockfile (Lockfile *lock, const char *path, GError **error);

gboolean
lockfile_write (Lockfile *lock, const char *path, GError **error)
{
  if (!check_lockfile (lock, path, error))
    return FALSE;
  g_autofree char *text = lockfile_to_string (lock);
  g_autoptr(GError) local_error = NULL;

  /* The same bytes are not written again, so the file keeps its mtime and
   * whatever depends on it (build.ninja, a Ninja restat) sees no change. */
  g_autofree char *existing = NULL;
  if (g_file_get_contents (path, &existing, NULL, NULL) && g_str_equal (existing, text))
    return TRUE;

  /* g_file_set_contents writes a temporary file next to PATH and renames it. */
  if (!g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644, &local_error))
    return util_fail (error, "writing the lockfile %s: %s", path, local_error->message);
  return TRUE;
}

/* --- reading --- */

typedef struct {
  const char *path;
  const char *context;  /* "package \"libc6\"" etc. */
  const char *remedy;   /* what to do about a value that is not allowed */
} Reader;

#define REMEDY_LOAD "a lockfile holds only what \"apt2ostree lock\" writes: make it again with " \
                    "\"apt2ostree lock\""
#define REMEDY_WRITE "an archive's index or Release gave it, and no lockfile may hold it: " \
                     "nothing was written"

static gboolean
read_fail (Reader *r, GError **error, const char *member, const char *expected)
{
  return util_fail (error, "lockfile %s: %s%s\"%s\" is missing or not %s; the lockfile is damaged, "
                    "make it again with \"apt2ostree lock\"", r->path,
                    r->context != NULL ? r->context : "", r->context != NULL ? ": " : "",
                    member, expected);
}

static gboolean
get_string (Reader *r, JsonObject *o, const char *member, gboolean nullable, char **out,
            GError **error)
{
  JsonNode *node = json_object_get_member (o, member);
  if (node != NULL && JSON_NODE_HOLDS_NULL (node) && nullable)
    {
      *out = NULL;
      return TRUE;
    }
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return read_fail (r, error, member, nullable ? "a string or null" : "a string");
  *out = g_strdup (json_node_get_string (node));
  return TRUE;
}

static gboolean
get_int (Reader *r, JsonObject *o, const char *member, gint64 *out, GError **error)
{
  JsonNode *node = json_object_get_member (o, member);
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return read_fail (r, error, member, "an integer");
  *out = json_node_get_int (node);
  return TRUE;
}

/* MEMBER's VALUE (NULL: absent or null, nothing to check) is what the
 * field may hold when PROBLEM, debpolicy's verdict on it, is NULL.  The
 * value is shown escaped, so the error stays one line whatever it holds. */
static gboolean
check_field (Reader *r, const char *member, const char *value, const char *problem,
             GError **error)
{
  if (value == NULL || problem == NULL)
    return TRUE;
  g_autofree char *cut = g_strndup (value, 100);
  g_autofree char *shown = g_strescape (cut, NULL);
  return util_fail (error, "lockfile %s: %s%s\"%s\" (\"%s%s\") %s; %s", r->path,
                    r->context != NULL ? r->context : "", r->context != NULL ? ": " : "",
                    member, shown, strlen (value) > 100 ? "..." : "", problem, r->remedy);
}

/* Each of the list MEMBER's VALUES by CHECK. */
static gboolean
check_list (Reader *r, const char *member, char **values, const char *(*check) (const char *),
            GError **error)
{
  for (char **v = values; v != NULL && *v != NULL; v++)
    if (!check_field (r, member, *v, check (*v), error))
      return FALSE;
  return TRUE;
}

static gboolean
get_bool (Reader *r, JsonObject *o, const char *member, gboolean *out, GError **error)
{
  JsonNode *node = json_object_get_member (o, member);
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    return read_fail (r, error, member, "true or false");
  *out = json_node_get_boolean (node);
  return TRUE;
}

static gboolean
get_strv (Reader *r, JsonObject *o, const char *member, char ***out, GError **error)
{
  JsonNode *node = json_object_get_member (o, member);
  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    return read_fail (r, error, member, "a list of strings");
  JsonArray *a = json_node_get_array (node);
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *e = json_array_get_element (a, i);
      if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_STRING)
        return read_fail (r, error, member, "a list of strings");
      g_strv_builder_add (b, json_node_get_string (e));
    }
  *out = g_strv_builder_end (b);
  return TRUE;
}

static JsonArray *
get_array (Reader *r, JsonObject *o, const char *member, GError **error)
{
  JsonNode *node = json_object_get_member (o, member);
  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    return read_fail (r, error, member, "a list"), NULL;
  return json_node_get_array (node);
}

static JsonObject *
get_object (Reader *r, JsonNode *node, const char *what, GError **error)
{
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return read_fail (r, error, what, "an object"), NULL;
  return json_node_get_object (node);
}

/* The request's sources file is read, never run; it is relative to the
 * lockfile and may lead out of its directory ("../sources.list"). */
static const char *
sources_file_problem (const char *path)
{
  return path != NULL && *path == '\0' ? "is empty" : debpolicy_text_problem (path);
}

static const char *const merged_usr_values[] = { "auto", "yes", "no", NULL };

gboolean
lockfile_is_local_deb (const char *entry)
{
  return strchr (entry, '/') != NULL && g_str_has_suffix (entry, ".deb");
}

const char *
lockfile_local_path_problem (const char *path)
{
  if (path == NULL || *path == '\0')
    return "is empty";
  if (g_path_is_absolute (path))
    return "is an absolute path (a lockfile names local files relative to its own directory)";
  return debpolicy_text_problem (path);
}

/* A request's package: a package ("name=version"...) or a local .deb. */
static const char *
request_package_problem (const char *entry)
{
  if (entry != NULL && lockfile_is_local_deb (entry))
    return lockfile_local_path_problem (entry);
  return debpolicy_request_problem (entry);
}

/* Every value of REQ (R's context set) is one the field may hold. */
static gboolean
check_request (Reader *r, LockRequest *req, GError **error)
{
  return check_list (r, "packages", req->packages, request_package_problem, error)
         && check_field (r, "variant", req->variant, debpolicy_name_problem (req->variant), error)
         && check_field (r, "architecture", req->architecture,
                         debpolicy_arch_problem (req->architecture), error)
         && check_list (r, "sources", req->sources, debpolicy_name_problem, error)
         && check_field (r, "sources-file", req->sources_file, sources_file_problem (req->sources_file),
                         error)
         && check_field (r, "merged-usr", req->merged_usr,
                         g_strv_contains (merged_usr_values, req->merged_usr) ? NULL
                         : "is not \"auto\", \"yes\" or \"no\"", error)
         && check_field (r, "suite", req->suite, debpolicy_release_problem (req->suite), error)
         && check_list (r, "components", req->components, debpolicy_archive_path_problem, error)
         && check_list (r, "path-filters", req->path_filters, pathfilter_rule_problem, error);
}

/* The same for a source, whose pin priority is PIN (as read, before it
 * is narrowed to an int). */
static gboolean
check_source (Reader *r, LockSource *s, gint64 pin, GError **error)
{
  g_autofree char *uri_problem = s->uri != NULL ? debpolicy_uri_problem (s->uri) : NULL;
  g_autofree char *pin_text = g_strdup_printf ("%" G_GINT64_FORMAT, pin);
  return check_field (r, "name", s->name, debpolicy_name_problem (s->name), error)
         && check_field (r, "suite", s->suite, source_suite_problem (s->suite), error)
         && check_field (r, "codename", s->codename, debpolicy_archive_path_problem (s->codename), error)
         && check_field (r, "origin", s->origin, debpolicy_text_problem (s->origin), error)
         && check_field (r, "version", s->version, debpolicy_text_problem (s->version), error)
         && check_list (r, "components", s->components, debpolicy_archive_path_problem, error)
         && check_list (r, "architectures", s->architectures, debpolicy_arch_problem, error)
         && check_field (r, "pin-priority", pin_text,
                         pin < -10000 || pin > 10000 ? "is not from -10000 to 10000" : NULL, error)
         && check_field (r, "fingerprint", s->fingerprint, debpolicy_fingerprint_problem (s->fingerprint),
                         error)
         && check_field (r, "inrelease-sha256", s->inrelease_sha256,
                         debpolicy_sha256_problem (s->inrelease_sha256), error)
         && check_field (r, "date", s->date, debpolicy_text_problem (s->date), error)
         && check_field (r, "uri", s->uri, uri_problem, error)
         && check_field (r, "dir", s->dir, s->dir == NULL ? NULL : !s->local
                         ? "is only for a local source (\"local\": true)"
                         : lockfile_local_path_problem (s->dir), error);
}

/* The same for a package (R's context naming it). */
static gboolean
check_package (Reader *r, LockPackage *p, GError **error)
{
  static const char *const multi_arch_values[] = { "same", "foreign", "allowed", "no", NULL };
  g_autofree char *size = g_strdup_printf ("%" G_GINT64_FORMAT, p->size);
  return check_field (r, "name", p->name, debpolicy_name_problem (p->name), error)
         && check_field (r, "version", p->version, debpolicy_version_problem (p->version), error)
         && check_field (r, "architecture", p->architecture, debpolicy_arch_problem (p->architecture),
                         error)
         && check_field (r, "source", p->source, debpolicy_name_problem (p->source), error)
         && check_field (r, "priority", p->priority, debpolicy_name_problem (p->priority), error)
         && check_field (r, "multi-arch", p->multi_arch,
                         p->multi_arch == NULL || g_strv_contains (multi_arch_values, p->multi_arch)
                         ? NULL : "is not \"same\", \"foreign\", \"allowed\" or \"no\"", error)
         /* A negative size is not "no size check": a lockfile always has one. */
         && check_field (r, "size", size, p->size < 0 ? "is not a number of bytes (0 or more)" : NULL,
                         error)
         && check_field (r, "sha256", p->sha256, debpolicy_sha256_problem (p->sha256), error)
         && check_field (r, "filename", p->filename, debpolicy_archive_path_problem (p->filename), error)
         && check_field (r, "path", p->path, p->path == NULL ? NULL
                         : !g_str_has_suffix (p->path, ".deb") ? "does not end in \".deb\""
                         : lockfile_local_path_problem (p->path), error);
}

/* A local source's packages have a path, and only theirs. */
static gboolean
check_package_source (Reader *r, LockPackage *p, LockSource *source, GError **error)
{
  if (source == NULL || source->local == (p->path != NULL))
    return TRUE;
  if (p->path != NULL)
    return check_field (r, "path", p->path, "is only for a package of a local source", error);
  return util_fail (error, "lockfile %s: %s: \"path\" is missing, and its source \"%s\" is local "
                    ".debs; %s", r->path, r->context, source->name, r->remedy);
}

/* Before writing: a lockfile lockfile_load() would refuse (a Filename
 * "../x" from an archive's index, a Codename with a space) is never
 * written, so what "lock" writes, "build" reads. */
static gboolean
check_lockfile (Lockfile *lock, const char *path, GError **error)
{
  Reader r = { path, "request", REMEDY_WRITE };
  if (!check_request (&r, &lock->request, error))
    return FALSE;
  for (guint i = 0; i < lock->sources->len; i++)
    {
      LockSource *s = lock->sources->pdata[i];
      g_autofree char *context = g_strdup_printf ("source %u", i + 1);
      r.context = context;
      if (!check_source (&r, s, s->pin_priority, error))
        return FALSE;
    }
  for (guint i = 0; i < lock->packages->len; i++)
    {
      LockPackage *p = lock->packages->pdata[i];
      g_autofree char *name = g_strescape (p->name, NULL);
      g_autofree char *context = g_strdup_printf ("package \"%s\"", name);
      r.context = context;
      if (!check_package (&r, p, error)
          || !check_package_source (&r, p, lockfile_lookup_source (lock, p->source), error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
read_request (Reader *r, JsonObject *root, LockRequest *req, GError **error)
{
  JsonObject *o = get_object (r, json_object_get_member (root, "request"), "request", error);
  if (o == NULL)
    return FALSE;
  r->context = "request";
  gboolean ok = get_strv (r, o, "packages", &req->packages, error)
                && get_string (r, o, "variant", TRUE, &req->variant, error)
                && get_string (r, o, "architecture", FALSE, &req->architecture, error)
                && get_bool (r, o, "recommends", &req->recommends, error)
                && get_strv (r, o, "sources", &req->sources, error)
                && get_string (r, o, "sources-file", TRUE, &req->sources_file, error)
                && get_string (r, o, "merged-usr", FALSE, &req->merged_usr, error)
                && (!json_object_has_member (o, "suite")
                    || get_string (r, o, "suite", FALSE, &req->suite, error))
                && (!json_object_has_member (o, "components")
                    || get_strv (r, o, "components", &req->components, error))
                && (!json_object_has_member (o, "record-uris")
                    || get_bool (r, o, "record-uris", &req->record_uris, error))
                && (!json_object_has_member (o, "path-filters")
                    || get_strv (r, o, "path-filters", &req->path_filters, error))
           && check_request (r, req, error);
  r->context = NULL;
  return ok;
}

static LockSource *
read_source (Reader *r, JsonNode *node, guint index, GError **error)
{
  g_autofree char *context = g_strdup_printf ("source %u", index + 1);
  r->context = context;
  JsonObject *o = get_object (r, node, "sources[]", error);
  if (o == NULL)
    return NULL;
  g_autoptr(LockSource) s = g_new0 (LockSource, 1);
  gint64 pin = 0;
  if (!get_string (r, o, "name", FALSE, &s->name, error)
      || !get_string (r, o, "suite", FALSE, &s->suite, error)
      || !get_string (r, o, "codename", TRUE, &s->codename, error)
      || !get_string (r, o, "origin", TRUE, &s->origin, error)
      || !get_string (r, o, "version", TRUE, &s->version, error)
      || !get_strv (r, o, "components", &s->components, error)
      || !get_strv (r, o, "architectures", &s->architectures, error)
      || !get_int (r, o, "pin-priority", &pin, error)
      || (json_object_has_member (o, "trusted") && !get_bool (r, o, "trusted", &s->trusted, error))
      || (json_object_has_member (o, "local") && !get_bool (r, o, "local", &s->local, error))
      || (json_object_has_member (o, "dir") && !get_string (r, o, "dir", FALSE, &s->dir, error))
      || !get_string (r, o, "fingerprint", s->trusted || s->local, &s->fingerprint, error)
      || !get_string (r, o, "inrelease-sha256", FALSE, &s->inrelease_sha256, error)
      || !get_string (r, o, "date", TRUE, &s->date, error)
      || (json_object_has_member (o, "uri") && !get_string (r, o, "uri", FALSE, &s->uri, error)))
    return NULL;
  if (!check_source (r, s, pin, error))
    return NULL;
  s->pin_priority = (int) pin;
  r->context = NULL;
  return g_steal_pointer (&s);
}

static LockPackage *
read_package (Reader *r, JsonNode *node, guint index, GError **error)
{
  g_autofree char *context = g_strdup_printf ("package %u", index + 1);
  r->context = context;
  JsonObject *o = get_object (r, node, "packages[]", error);
  if (o == NULL)
    return NULL;
  g_autoptr(LockPackage) p = g_new0 (LockPackage, 1);
  if (!get_string (r, o, "name", FALSE, &p->name, error)
      || !check_field (r, "name", p->name, debpolicy_name_problem (p->name), error))
    return NULL;
  g_free (context);
  context = g_strdup_printf ("package \"%s\"", p->name);
  r->context = context;
  if (!get_string (r, o, "version", FALSE, &p->version, error)
      || !get_string (r, o, "architecture", FALSE, &p->architecture, error)
      || !get_string (r, o, "source", FALSE, &p->source, error)
      || !get_bool (r, o, "essential", &p->essential, error)
      || !get_string (r, o, "priority", TRUE, &p->priority, error)
      || !get_string (r, o, "multi-arch", TRUE, &p->multi_arch, error)
      || !get_int (r, o, "size", &p->size, error)
      || !get_string (r, o, "sha256", FALSE, &p->sha256, error)
      || !get_string (r, o, "filename", FALSE, &p->filename, error)
      || (json_object_has_member (o, "path") && !get_string (r, o, "path", FALSE, &p->path, error)))
    return NULL;
  if (!check_package (r, p, error))
    return NULL;
  r->context = NULL;
  return g_steal_pointer (&p);
}

/* A file that is not JSON at all (its first non-blank character is not
 * "{"): most likely the package list "lock" reads, given to build. */
static gboolean
looks_like_package_list (const char *path)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents (path, &text, &len, NULL))
    return FALSE;
  for (gsize i = 0; i < len; i++)
    if (!g_ascii_isspace (text[i]))
      return text[i] != '{';
  return FALSE;
}

Lockfile *
lockfile_load (const char *path, GError **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) local_error = NULL;
  if (!json_parser_load_from_file (parser, path, &local_error))
    {
      if (looks_like_package_list (path))
        return util_fail (error, "%s looks like a package list, not a lockfile: run "
                          "\"apt2ostree lock %s\" first, and give the lockfile it writes", path,
                          path), NULL;
      return util_fail (error, "lockfile %s: %s", path, local_error->message), NULL;
    }

  Reader r = { path, NULL, REMEDY_LOAD };
  JsonObject *root = get_object (&r, json_parser_get_root (parser), "(top level)", error);
  if (root == NULL)
    return NULL;

  g_autoptr(Lockfile) lock = lockfile_new ();
  gint64 format;
  if (!get_int (&r, root, "format", &format, error))
    return NULL;
  if (format != LOCKFILE_FORMAT)
    return util_fail (error, "lockfile %s has format %" G_GINT64_FORMAT "; this apt2ostree reads "
                      "format %d", path, format, LOCKFILE_FORMAT), NULL;
  if (!read_request (&r, root, &lock->request, error)
      || !get_bool (&r, root, "merged-usr", &lock->merged_usr, error))
    return NULL;

  JsonArray *sources = get_array (&r, root, "sources", error);
  if (sources == NULL)
    return NULL;
  for (guint i = 0; i < json_array_get_length (sources); i++)
    {
      LockSource *s = read_source (&r, json_array_get_element (sources, i), i, error);
      if (s == NULL)
        return NULL;
      g_ptr_array_add (lock->sources, s);
    }

  JsonArray *packages = get_array (&r, root, "packages", error);
  if (packages == NULL)
    return NULL;
  for (guint i = 0; i < json_array_get_length (packages); i++)
    {
      g_autoptr(LockPackage) p = read_package (&r, json_array_get_element (packages, i), i, error);
      if (p == NULL)
        return NULL;
      LockSource *source = lockfile_lookup_source (lock, p->source);
      if (source == NULL)
        return util_fail (error, "lockfile %s: package \"%s\" names source \"%s\", which the "
                          "lockfile does not list", path, p->name, p->source), NULL;
      g_autofree char *context = g_strdup_printf ("package \"%s\"", p->name);
      r.context = context;
      if (!check_package_source (&r, p, source, error))
        return NULL;
      r.context = NULL;
      g_ptr_array_add (lock->packages, g_steal_pointer (&p));
    }

  g_auto(GStrv) order = NULL;
  if (!get_strv (&r, root, "install-order", &order, error))
    return NULL;
  g_autoptr(GHashTable) ordered = g_hash_table_new (NULL, NULL);
  for (char **o = order; *o != NULL; o++)
    {
      g_auto(GStrv) parts = g_strsplit (*o, ":", 2);
      /* (An empty entry splits into no parts at all.) */
      LockPackage *package = parts[0] == NULL ? NULL
                             : lockfile_lookup_package (lock, parts[0], parts[1]);
      g_autofree char *shown = g_strescape (*o, NULL);
      if (package != NULL && !g_hash_table_add (ordered, package))
        return util_fail (error, "lockfile %s: install-order names \"%s\" twice; the lockfile is "
                          "damaged, make it again with \"apt2ostree lock\"", path, shown), NULL;
      if (package == NULL)
        return util_fail (error, "lockfile %s: install-order names \"%s\", which is not among its "
                          "packages; the lockfile is damaged, make it again with \"apt2ostree lock\"",
                          path, shown), NULL;
      g_ptr_array_add (lock->install_order, g_strdup (*o));
    }
  if (lock->install_order->len != lock->packages->len)
    return util_fail (error, "lockfile %s: install-order lists %u packages, \"packages\" %u; the "
                      "lockfile is damaged, make it again with \"apt2ostree lock\"", path,
                      lock->install_order->len, lock->packages->len), NULL;
  return g_steal_pointer (&lock);
}

LockSource *
lockfile_lookup_source (Lockfile *lock, const char *name)
{
  for (guint i = 0; i < lock->sources->len; i++)
    {
      LockSource *s = lock->sources->pdata[i];
      if (g_str_equal (s->name, name))
        return s;
    }
  return NULL;
}

LockPackage *
lockfile_lookup_package (Lockfile *lock, const char *name, const char *arch)
{
  for (guint i = 0; i < lock->packages->len; i++)
    {
      LockPackage *p = lock->packages->pdata[i];
      if (g_str_equal (p->name, name) && (arch == NULL || g_str_equal (p->architecture, arch)))
        return p;
    }
  return NULL;
}

char **
lockfile_local_package_urls (const char *lock_path, LockPackage *package)
{
  g_autofree char *lock_dir = g_path_get_dirname (lock_path);
  g_autofree char *joined = g_build_filename (lock_dir, package->path, NULL);
  g_autofree char *cwd = g_get_current_dir ();
  g_autofree char *abs = g_canonicalize_filename (joined, cwd);
  /* An absolute path always has a URL; it escapes what a URL cannot
   * hold (spaces, control characters, "%"). */
  char **urls = g_new0 (char *, 2);
  urls[0] = g_filename_to_uri (abs, NULL, NULL);
  return urls;
}

char **
lockfile_package_urls (Lockfile *lock, LockPackage *package, SourcesList *sources, GError **error)
{
  if (package->path != NULL)
    return util_fail (error, "package \"%s\" is a local .deb (%s): it has no source URI",
                      package->name, package->path), NULL;
  Source *source = sources != NULL ? sources_list_lookup (sources, package->source) : NULL;
  LockSource *recorded = lockfile_lookup_source (lock, package->source);
  g_autoptr(GStrvBuilder) urls = g_strv_builder_new ();
  if ((source == NULL || source->uri == NULL) && recorded != NULL && recorded->uri != NULL)
    {
      g_autofree char *url = g_strdup_printf ("%s/%s", recorded->uri, package->filename);
      g_strv_builder_add (urls, url);
      return g_strv_builder_end (urls);
    }
  if (source == NULL || source->uri == NULL)
    {
      g_autofree char *where = sources == NULL ? g_strdup ("no sources configuration")
                               : sources->path != NULL ? g_strdup_printf ("\"%s\"", sources->path)
                               : g_strdup ("the host's apt configuration");
      return util_fail (error, "package \"%s\" comes from source \"%s\", which %s does not name; "
                        "add it there or give --mirror %s=URI", package->name, package->source,
                        where, package->source), NULL;
    }
  if (!source_check_uri (source, error))
    return NULL;
  for (char **u = source->uris; *u != NULL; u++)
    {
      g_autofree char *url = g_strdup_printf ("%s/%s", *u, package->filename);
      g_strv_builder_add (urls, url);
    }
  return g_strv_builder_end (urls);
}

static char *
absolute_path (const char *path)
{
  g_autofree char *cwd = g_get_current_dir ();
  return g_canonicalize_filename (path, cwd);
}

char *
lockfile_relative_path (const char *path, const char *lock_path)
{
  g_autofree char *abs = absolute_path (path);
  g_autofree char *lock_abs = absolute_path (lock_path);
  g_autofree char *lock_dir = g_path_get_dirname (lock_abs);

  g_auto(GStrv) a = g_strsplit (abs + 1, "/", -1);
  g_auto(GStrv) d = g_strsplit (g_str_equal (lock_dir, "/") ? "" : lock_dir + 1, "/", -1);
  guint common = 0;
  while (a[common] != NULL && d[common] != NULL && g_str_equal (a[common], d[common]))
    common++;
  g_autoptr(GString) rel = g_string_new ("");
  for (guint i = common; d[i] != NULL && *d[i] != '\0'; i++)
    g_string_append (rel, "../");
  for (guint i = common; a[i] != NULL; i++)
    {
      g_string_append (rel, a[i]);
      if (a[i + 1] != NULL)
        g_string_append_c (rel, '/');
    }
  return g_string_free (g_steal_pointer (&rel), FALSE);
}

char *
lockfile_request_sources_path (Lockfile *lock, const char *lock_path)
{
  const char *file = lock->request.sources_file;
  if (file == NULL)
    return NULL;
  if (g_path_is_absolute (file))
    return g_strdup (file);
  g_autofree char *lock_dir = g_path_get_dirname (lock_path);
  return g_build_filename (lock_dir, file, NULL);
}
