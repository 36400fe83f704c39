/* resolve-names.c — the error for a requested name that no usable package
 * has: the architectures it is built for when none is the image's, else the
 * closest names the sources do have. Computed only on that error path, so a
 * successful lock pays nothing for it. */
#define _GNU_SOURCE
#include "config.h"

#include "apt/resolver.h"
#include "base/util.h"

#include <string.h>

#define SUGGEST_MAX_DISTANCE 2
#define SUGGEST_MAX_COUNT 3

/* Levenshtein distance of A and B, or MAX + 1 when it is over MAX. */
static guint
edit_distance (const char *a, const char *b, guint max)
{
  gsize la = strlen (a), lb = strlen (b);
  if ((la > lb ? la - lb : lb - la) > max)
    return max + 1;
  g_autofree guint *prev = g_new (guint, lb + 1);
  g_autofree guint *cur = g_new (guint, lb + 1);
  for (gsize j = 0; j <= lb; j++)
    prev[j] = j;
  for (gsize i = 1; i <= la; i++)
    {
      guint row_min = cur[0] = i;
      for (gsize j = 1; j <= lb; j++)
        {
          guint sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
          guint del = prev[j] + 1, ins = cur[j - 1] + 1;
          cur[j] = MIN (sub, MIN (del, ins));
          row_min = MIN (row_min, cur[j]);
        }
      if (row_min > max)
        return max + 1;
      guint *t = prev;
      prev = cur;
      cur = t;
    }
  return MIN (prev[lb], max + 1);
}

typedef struct
{
  const char *name;
  guint distance;
} Suggestion;

static int
compare_suggestions (gconstpointer pa, gconstpointer pb)
{
  const Suggestion *a = pa, *b = pb;
  if (a->distance != b->distance)
    return a->distance < b->distance ? -1 : 1;
  return strcmp (a->name, b->name);
}

/* '; did you mean "a", "b"?' for the candidates' names nearest to NAME, or
 * "" when none is near. */
static char *
suggest_names (Resolver *r, const char *name)
{
  g_autoptr(GArray) found = g_array_new (FALSE, FALSE, sizeof (Suggestion));
  for (Id n = 1; n < r->ncandidate; n++)
    {
      if (r->candidate[n] == 0)
        continue;
      Suggestion s = { pool_id2str (r->pool, n), 0 };
      s.distance = edit_distance (name, s.name, SUGGEST_MAX_DISTANCE);
      if (s.distance <= SUGGEST_MAX_DISTANCE)
        g_array_append_val (found, s);
    }
  if (found->len == 0)
    return g_strdup ("");
  g_array_sort (found, compare_suggestions);
  g_autoptr(GString) text = g_string_new ("; did you mean ");
  for (guint i = 0; i < found->len && i < SUGGEST_MAX_COUNT; i++)
    g_string_append_printf (text, "%s\"%s\"", i ? ", " : "",
                            g_array_index (found, Suggestion, i).name);
  g_string_append_c (text, '?');
  return g_string_free (g_steal_pointer (&text), FALSE);
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* "arm64, i386 in main and i386 in extra": the architectures NAME is built
 * for in each usable source; NULL when a package of that name is of the
 * image's architecture (or "all"), or in no usable source. */
static char *
other_architectures (Resolver *r, const char *name)
{
  Pool *pool = r->pool;
  Id name_id = pool_str2id (pool, name, 0);
  if (name_id == 0)
    return NULL;
  for (Id p = 2; p < pool->nsolvables; p++)
    {
      Solvable *s = pool->solvables + p;
      if (s->repo != NULL && s->name == name_id && (s->arch == r->arch || s->arch == ARCH_ALL))
        return NULL;
    }
  g_autoptr(GString) text = g_string_new (NULL);
  Repo *repo;
  int repo_id;
  FOR_REPOS (repo_id, repo)
    {
      const ResolveSource *source = repo->appdata;
      if (source->pin_priority < 0)
        continue;
      g_autoptr(GPtrArray) arches = g_ptr_array_new ();
      Solvable *s;
      Id p;
      FOR_REPO_SOLVABLES (repo, p, s)
        {
          const char *arch = pool_id2str (pool, s->arch);
          if (s->name == name_id && !g_ptr_array_find_with_equal_func (arches, arch, g_str_equal, NULL))
            g_ptr_array_add (arches, (gpointer) arch);
        }
      if (arches->len == 0)
        continue;
      g_ptr_array_sort (arches, compare_strings);
      g_ptr_array_add (arches, NULL);
      g_autofree char *list = g_strjoinv (", ", (char **) arches->pdata);
      g_string_append_printf (text, "%s%s in %s", text->len ? " and " : "", list, source->name);
    }
  if (text->len == 0)
    return NULL;
  return g_string_free (g_steal_pointer (&text), FALSE);
}

gboolean
fail_unknown_name (Resolver *r, const char *name, GError **error)
{
  g_autofree char *built_for = other_architectures (r, name);
  if (built_for != NULL)
    return util_fail (error, "package \"%s\" is only built for %s, not for %s", name, built_for,
                      pool_id2str (r->pool, r->arch));
  g_autofree char *suggestions = suggest_names (r, name);
  return util_fail (error, "package \"%s\" is not in any source%s", name, suggestions);
}
