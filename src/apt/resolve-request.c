/* resolve-request.c — the request: the variants, the entries of a package
 * list ("name", "name=version", "name:arch") and the checks made before
 * any index is read, and once the pool is loaded the packages each apt run
 * installs (the Essential set, the variant's Priority set, the listed
 * packages, a virtual package through its one provider). */
#define _GNU_SOURCE
#include "config.h"

#include "apt/resolver.h"
#include "base/util.h"

#include <string.h>

#include <solv/pool.h>
#include <solv/queue.h>

static const char *const variants[] = {
  "essential", "apt", "minbase", "required", "buildd", "important", "standard", "custom", NULL
};

const char *const *
resolve_variants (void)
{
  return variants;
}

static gboolean
check_variant (const char *variant, GError **error)
{
  if (variant == NULL || g_strv_contains ((const char *const *) variants, variant))
    return TRUE;
  g_autofree char *known = g_strjoinv (", ", (char **) variants);
  return util_fail (error, "unknown variant \"%s\" (known: %s)", variant, known);
}


void
request_item_free (RequestItem *item)
{
  g_free (item->spec);
  g_free (item->name);
  g_free (item->arch);
  g_free (item->version);
  g_free (item);
}

RequestItem *
request_item_parse (const char *spec, GError **error)
{
  g_autofree char *name = NULL;
  RequestItem *item = g_new0 (RequestItem, 1);
  item->spec = g_strdup (spec);

  const char *eq = strchr (spec, '=');
  name = eq ? g_strndup (spec, eq - spec) : g_strdup (spec);
  if (eq != NULL)
    item->version = g_strdup (eq + 1);
  char *colon = strchr (name, ':');
  if (colon != NULL)
    {
      item->arch = g_strdup (colon + 1);
      *colon = '\0';
    }
  item->name = g_steal_pointer (&name);
  if (*item->name == '\0' || (item->version != NULL && *item->version == '\0')
      || (item->arch != NULL && *item->arch == '\0') || strpbrk (item->name, " \t,|()") != NULL)
    {
      util_fail (error, "\"%s\" is not a package: write name, name=version or name:arch", spec);
      request_item_free (item);
      return NULL;
    }
  return item;
}

static gboolean
parse_items (char **specs, GPtrArray *out, GError **error)
{
  for (char **s = specs; s != NULL && *s != NULL; s++)
    {
      RequestItem *item = request_item_parse (*s, error);
      if (item == NULL)
        return FALSE;
      g_ptr_array_add (out, item);
    }
  return TRUE;
}

/* The request's own checks, before any index is read. */
gboolean
check_resolve_request (const ResolveRequest *request, GPtrArray *items, GError **error)
{
  if (!check_variant (request->variant, error))
    return FALSE;
  if (request->arch == NULL || *request->arch == '\0')
    return util_fail (error, "no architecture given for the resolution");
  if (g_str_equal (request->arch, "all") || g_str_equal (request->arch, "any"))
    return util_fail (error, "\"%s\" is not an image architecture", request->arch);
  if (!parse_items (request->packages, items, error))
    return FALSE;
  for (guint i = 0; i < items->len; i++)
    {
      RequestItem *item = items->pdata[i];
      if (item->arch != NULL && !g_str_equal (item->arch, request->arch)
          && !g_str_equal (item->arch, "all"))
        return util_fail (error, "package \"%s\": architecture %s is not the image's (%s); "
                          "multiarch images are not supported", item->spec, item->arch,
                          request->arch);
    }
  return TRUE;
}

int
compare_names (const void *pa, const void *pb, void *data)
{
  Resolver *r = data;
  return strcmp (solvable_name (r, *(const Id *) pa), solvable_name (r, *(const Id *) pb));
}

/* The candidates with Essential: yes, or (essential FALSE) a Priority of at
 * most MAX_RANK that are not Essential; in name order. */
void
select_candidates (Resolver *r, gboolean essential, int max_rank, Queue *out)
{
  Queue found;
  queue_init (&found);
  for (Id name = 1; name < r->ncandidate; name++)
    {
      Id p = r->candidate[name];
      if (p == 0)
        continue;
      const PackagesFields *f = packages_store_lookup (r->store, p);
      if (f == NULL)
        continue;
      if (essential ? f->essential : (!f->essential && priority_rank (f->priority) <= max_rank))
        queue_push (&found, p);
    }
  g_qsort_with_data (found.elements, found.count, sizeof (Id), compare_names, r);
  for (int i = 0; i < found.count; i++)
    queue_pushunique (out, found.elements[i]);
  queue_free (&found);
}

/* A requested name to a solvable; 0 (no error) when it is a virtual package
 * that an already chosen package provides. */
static gboolean
resolve_item (Resolver *r, RequestItem *item, Id *out, GError **error)
{
  Pool *pool = r->pool;
  *out = 0;

  Id name = pool_str2id (pool, item->name, 0);
  Id p = candidate_of (r, name);
  if (p != 0)
    {
      const char *arch = pool_id2str (pool, pool->solvables[p].arch);
      if (item->arch != NULL && !g_str_equal (item->arch, arch))
        return util_fail (error, "package \"%s\" is \"%s:%s\", not \"%s\"", item->spec,
                          item->name, arch, item->spec);
      *out = p;
      return TRUE;
    }

  /* Not a real package: a virtual one, or nothing we can use. */
  Queue providers;
  queue_init (&providers);
  if (name != 0)
    {
      Id q, qq;
      FOR_PROVIDES (q, qq, name)
        queue_push (&providers, q);
    }
  gboolean ok = TRUE;
  if (providers.count == 1)
    *out = providers.elements[0];
  else if (providers.count > 1)
    {
      for (int i = 0; i < providers.count; i++)
        if (MAPTST (&r->marked, providers.elements[i]))
          {
            queue_free (&providers);
            return TRUE;
          }
      g_qsort_with_data (providers.elements, providers.count, sizeof (Id), compare_names, r);
      g_autoptr(GString) list = g_string_new (NULL);
      for (int i = 0; i < providers.count; i++)
        g_string_append_printf (list, "%s%s", i ? ", " : "", solvable_name (r, providers.elements[i]));
      ok = util_fail (error, "package \"%s\" is virtual and several packages provide it: %s; name one",
                      item->name, list->str);
    }
  else
    ok = fail_unknown_name (r, item->name, error);
  queue_free (&providers);
  return ok;
}

gboolean
resolve_items (Resolver *r, GPtrArray *items, Queue *out, GError **error)
{
  for (guint i = 0; i < items->len; i++)
    {
      Id p;
      if (!resolve_item (r, items->pdata[i], &p, error))
        return FALSE;
      if (p != 0)
        queue_pushunique (out, p);
    }
  return TRUE;
}

/* What the request installs, as mmdebstrap's two apt runs: FIRST the
 * Essential set (plus apt for the apt variant), SECOND everything else. */
void
request_targets (Resolver *r, const ResolveRequest *request, Queue *first,
                 GPtrArray *second_items, int *out_max_rank)
{
  const char *variant = request->variant ? request->variant : "essential";
  *out_max_rank = 0;
  if (g_str_equal (variant, "custom"))
    return;
  select_candidates (r, TRUE, 0, first);
  if (g_str_equal (variant, "apt"))
    {
      Id p = candidate_of (r, pool_str2id (r->pool, "apt", 0));
      if (p != 0)
        queue_pushunique (first, p);
      else
        g_ptr_array_add (second_items, request_item_parse ("apt", NULL));
    }
  if (g_str_equal (variant, "buildd"))
    g_ptr_array_add (second_items, request_item_parse ("build-essential", NULL));
  if (g_str_equal (variant, "minbase") || g_str_equal (variant, "required")
      || g_str_equal (variant, "buildd"))
    *out_max_rank = priority_rank ("required");
  else if (g_str_equal (variant, "important"))
    *out_max_rank = priority_rank ("important");
  else if (g_str_equal (variant, "standard"))
    *out_max_rank = priority_rank ("standard");
}
