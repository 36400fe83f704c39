/* resolve-deps.c — a package's dependencies as the Packages file writes
 * them: read back in the written order (the walk follows it) as the ids
 * libsolv made of them, and written out again for messages. */
#define _GNU_SOURCE
#include "config.h"

#include "apt/resolver.h"
#include "base/util.h"

#include <string.h>

#include <solv/pool.h>

/* The name a dependency is about, without version or ":any". */
Id
dep_name (Pool *pool, Id dep)
{
  while (ISRELDEP (dep))
    {
      Reldep *rd = GETRELDEP (pool, dep);
      if (rd->flags == REL_OR)
        return 0;
      dep = rd->name;
    }
  return dep;
}

/* A dependency the way a Packages file writes it. */
static void
append_dep (Pool *pool, GString *out, Id dep)
{
  if (!ISRELDEP (dep))
    {
      g_string_append (out, pool_id2str (pool, dep));
      return;
    }
  Reldep *rd = GETRELDEP (pool, dep);
  if (rd->flags == REL_OR)
    {
      append_dep (pool, out, rd->name);
      g_string_append (out, " | ");
      append_dep (pool, out, rd->evr);
      return;
    }
  if (rd->flags == REL_MULTIARCH)
    {
      append_dep (pool, out, rd->name);
      g_string_append_printf (out, ":%s", pool_id2str (pool, rd->evr));
      return;
    }
  const char *op = NULL;
  switch (rd->flags)
    {
    case REL_EQ: op = "="; break;
    case REL_GT | REL_EQ: op = ">="; break;
    case REL_LT | REL_EQ: op = "<="; break;
    case REL_GT: op = ">>"; break;
    case REL_LT: op = "<<"; break;
    default: break;
    }
  append_dep (pool, out, rd->name);
  if (op != NULL)
    g_string_append_printf (out, " (%s %s)", op, pool_id2str (pool, rd->evr));
}

char *
dep_to_string (Pool *pool, Id dep)
{
  GString *out = g_string_new (NULL);
  append_dep (pool, out, dep);
  return g_string_free (out, FALSE);
}

/* --- dependencies in the order the Packages file writes them ---
 *
 * apt walks a package's dependencies in the order they are written; libsolv
 * keeps them in that order when it parses an index but not in its .solv
 * cache (which sorts them).  So the walk reads the fields we keep and turns
 * them into the very same ids libsolv made of them (ids are unique per name,
 * version and relation, so parsing "b (>= 2) | c" again finds libsolv's). */


void
dep_lists_free (DepLists *l)
{
  queue_free (&l->pre_depends);
  queue_free (&l->depends);
  queue_free (&l->recommends);
  g_free (l);
}

/* "(>= 1.0)" after a name, *PP at its "(": ID so restricted.  *PP moves
 * past it and the blanks after it. */
static Id
parse_relation (Pool *pool, Id id, const char **pp, const char *end)
{
  const char *p = *pp + 1;
  while (p < end && g_ascii_isspace (*p))
    p++;
  int flags = 0;
  for (int i = 0; i < 2 && p < end; i++)
    {
      int f = *p == '>' ? REL_GT : *p == '=' ? REL_EQ : *p == '<' ? REL_LT : 0;
      if (f == 0)
        break;
      flags |= f;
      p++;
    }
  while (p < end && g_ascii_isspace (*p))
    p++;
  const char *evr = p;
  while (p < end && !g_ascii_isspace (*p) && *p != ')')
    p++;
  Id evr_id = pool_strn2id (pool, evr, p - evr, 1);
  while (p < end && *p != ')')
    p++;
  if (p < end)
    p++;
  while (p < end && g_ascii_isspace (*p))
    p++;
  *pp = p;
  return pool_rel2id (pool, id, evr_id, flags, 1);
}

/* One alternative, or an OR of the rest: as libsolv's repo_deb.c reads it. */
static Id
parse_dep (Pool *pool, const char **pp, const char *end)
{
  const char *p = *pp;
  while (p < end && g_ascii_isspace (*p))
    p++;
  const char *name = p;
  while (p < end && !g_ascii_isspace (*p) && *p != '(' && *p != '|')
    p++;
  const char *name_end = p;
  if (name_end == name)
    return 0;
  while (p < end && g_ascii_isspace (*p))
    p++;

  Id id;
  if (name_end - name > 4 && strncmp (name_end - 4, ":any", 4) == 0)
    id = pool_rel2id (pool, pool_strn2id (pool, name, name_end - name - 4, 1), ARCH_ANY,
                      REL_MULTIARCH, 1);
  else
    id = pool_strn2id (pool, name, name_end - name, 1);

  if (p < end && *p == '(')
    id = parse_relation (pool, id, &p, end);
  if (p < end && *p == '|')
    {
      p++;
      Id rest = parse_dep (pool, &p, end);
      if (rest != 0)
        id = pool_rel2id (pool, id, rest, REL_OR, 1);
    }
  *pp = p;
  return id;
}

static void
parse_dep_field (Pool *pool, const char *field, Queue *out)
{
  for (const char *p = field; p != NULL && *p;)
    {
      const char *end = strchr (p, ',');
      if (end == NULL)
        end = p + strlen (p);
      const char *q = p;
      Id id = parse_dep (pool, &q, end);
      if (id != 0)
        queue_push (out, id);
      p = *end ? end + 1 : end;
    }
}

DepLists *
dep_lists (Resolver *r, Id p)
{
  DepLists *l = g_hash_table_lookup (r->dep_lists, GINT_TO_POINTER (p));
  if (l != NULL)
    return l;
  l = g_new0 (DepLists, 1);
  queue_init (&l->pre_depends);
  queue_init (&l->depends);
  queue_init (&l->recommends);
  const PackagesFields *f = packages_store_lookup (r->store, p);
  if (f != NULL)
    {
      parse_dep_field (r->pool, f->pre_depends, &l->pre_depends);
      parse_dep_field (r->pool, f->depends, &l->depends);
      parse_dep_field (r->pool, f->recommends, &l->recommends);
    }
  g_hash_table_insert (r->dep_lists, GINT_TO_POINTER (p), l);
  return l;
}
