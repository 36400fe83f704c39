/* resolve-problems.c — why a request cannot be satisfied, in apt's words
 * ("a depends on b but it is not going to be installed, because b
 * conflicts with c but c 1 is to be installed"), from libsolv's problems. */
#define _GNU_SOURCE
#include "config.h"

#include "apt/resolver.h"
#include "base/util.h"

#include <string.h>

#include <solv/pool.h>
#include <solv/solver.h>

static gboolean
dep_is_prereq (Resolver *r, Id p, Id dep)
{
  DepLists *l = dep_lists (r, p);
  for (int i = 0; i < l->pre_depends.count; i++)
    if (l->pre_depends.elements[i] == dep)
      return TRUE;
  return FALSE;
}

/* Whether NAME is one of the packages a Breaks: field names. */
static gboolean
field_names (const char *field, const char *name)
{
  if (field == NULL)
    return FALSE;
  gsize len = strlen (name);
  const char *p = field;
  while (*p)
    {
      p += strspn (p, " \t\n,|");
      gsize n = strcspn (p, " \t\n,|(:");
      if (n == len && strncmp (p, name, len) == 0)
        return TRUE;
      p += n;
      p += strcspn (p, ",|");
    }
  return FALSE;
}

/* "but 1.0 is to be installed" and friends. */
static const char *
why_not (Resolver *r, Id dep, gboolean nothing_provides, char **out_buf)
{
  Id name = dep_name (r->pool, dep);
  Id cand = candidate_of (r, name);
  *out_buf = NULL;
  if (cand != 0 && !pool_match_nevr (r->pool, r->pool->solvables + cand, dep))
    return *out_buf = g_strdup_printf ("but %s is to be installed", solvable_version (r, cand));
  return nothing_provides ? "but it is not installable" : "but it is not going to be installed";
}

/* One rule of a problem in apt's words; NULL for rules that are not about
 * packages (the request's own jobs). */
static char *
describe_rule (Resolver *r, Solver *solv, Id rid, SolverRuleinfo *out_type)
{
  Pool *pool = r->pool;
  Id source = 0, target = 0, dep = 0;
  SolverRuleinfo type = solver_ruleinfo (solv, rid, &source, &target, &dep);
  *out_type = type;
  g_autofree char *dep_str = dep ? dep_to_string (pool, dep) : NULL;
  g_autofree char *buf = NULL;

  switch (type)
    {
    case SOLVER_RULE_PKG_NOTHING_PROVIDES_DEP:
    case SOLVER_RULE_PKG_REQUIRES:
      {
        const char *why = why_not (r, dep, type == SOLVER_RULE_PKG_NOTHING_PROVIDES_DEP, &buf);
        return g_strdup_printf ("%s %s %s %s", solvable_name (r, source),
                                dep_is_prereq (r, source, dep) ? "pre-depends on" : "depends on",
                                dep_str, why);
      }
    case SOLVER_RULE_PKG_CONFLICTS:
      {
        const PackagesFields *f = packages_store_lookup (r->store, source);
        const char *dname = pool_id2str (pool, dep_name (pool, dep));
        gboolean breaks = f != NULL && field_names (f->breaks, dname);
        return g_strdup_printf ("%s %s %s but %s %s is to be installed", solvable_name (r, source),
                                breaks ? "breaks" : "conflicts with", dep_str,
                                solvable_name (r, target), solvable_version (r, target));
      }
    case SOLVER_RULE_PKG_SELF_CONFLICT:
      return g_strdup_printf ("%s conflicts with itself (%s)", solvable_name (r, source), dep_str);
    case SOLVER_RULE_PKG_SAME_NAME:
      return g_strdup_printf ("%s %s and %s %s cannot both be installed",
                              solvable_name (r, source), solvable_version (r, source),
                              solvable_name (r, target), solvable_version (r, target));
    case SOLVER_RULE_PKG_NOT_INSTALLABLE:
      return g_strdup_printf ("%s %s is not installable", solvable_name (r, source),
                              solvable_version (r, source));
    default:
      return NULL;
    }
}

/* A problem: the rule libsolv thinks is at its heart, and the conflicts or
 * missing packages behind it ("a depends on b but it is not going to be
 * installed, because b conflicts with c but c 1 is to be installed"). */
static char *
describe_problem (Resolver *r, Solver *solv, Id problem)
{
  SolverRuleinfo type;
  Id main_rule = solver_findproblemrule (solv, problem);
  g_autofree char *main_text = describe_rule (r, solv, main_rule, &type);
  if (main_text == NULL)
    return g_strdup (solver_problem2str (solv, problem));

  g_autoptr(GPtrArray) causes = g_ptr_array_new_with_free_func (g_free);
  Queue rules;
  queue_init (&rules);
  solver_findallproblemrules (solv, problem, &rules);
  for (int i = 0; i < rules.count && causes->len < 3; i++)
    {
      char *text = describe_rule (r, solv, rules.elements[i], &type);
      gboolean cause = text != NULL && type != SOLVER_RULE_PKG_REQUIRES
                       && !g_str_equal (text, main_text);
      for (guint j = 0; cause && j < causes->len; j++)
        cause = !g_str_equal (causes->pdata[j], text);
      if (cause)
        g_ptr_array_add (causes, text);
      else
        g_free (text);
    }
  queue_free (&rules);
  if (causes->len == 0)
    return g_steal_pointer (&main_text);
  g_ptr_array_add (causes, NULL);
  g_autofree char *joined = g_strjoinv (", and ", (char **) causes->pdata);
  return g_strdup_printf ("%s, because %s", main_text, joined);
}

gboolean
report_problems (Resolver *r, Solver *solv, GError **error)
{
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  int count = solver_problem_count (solv);
  for (Id problem = 1; problem <= count; problem++)
    {
      char *line = describe_problem (r, solv, problem);
      gboolean seen = FALSE;
      for (guint i = 0; i < lines->len && !seen; i++)
        seen = g_str_equal (lines->pdata[i], line);
      if (seen)
        g_free (line);
      else
        g_ptr_array_add (lines, line);
    }
  g_ptr_array_add (lines, NULL);
  g_autofree char *joined = g_strjoinv ("; ", (char **) lines->pdata);
  return util_fail (error, "the request cannot be satisfied: %s", joined);
}
