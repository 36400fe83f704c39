/* resolve.c — which packages apt would install, solved by libsolv.
 *
 * libsolv finds *a* solution; apt's is a particular one.  Three things make
 * them the same:
 *
 * - Candidates.  apt installs only a package's candidate version: the one
 *   from the source with the highest pin priority, the highest version among
 *   equals (or the version the request names).  Every other version is left
 *   out of the pool's "considered" map, so libsolv never sees it.
 *
 * - Choices.  Where a dependency has several solutions ("a | b", a virtual
 *   package), apt takes the first alternative that can be installed, and
 *   among the providers of one alternative the package of that name, then an
 *   Essential one, then the higher Priority.  A dependency that an already
 *   chosen package satisfies needs nothing new, and a package once chosen
 *   stays, unless a later choice conflicts with it: then the later one
 *   takes its place, what depended on it is mended, and what only it needed
 *   is dropped (apt's problem resolver and MarkAndSweep).  We walk the
 *   dependencies the way apt's MarkInstall does (depth first, in the order
 *   written, Pre-Depends before Depends) and have libsolv install exactly
 *   what the walk chose; when the walk gets stuck, its choices become
 *   SOLVER_FAVOR jobs and libsolv finds the way (or the problems to report).
 *
 * - Phases.  mmdebstrap installs the Essential set first and everything else
 *   (Priority sets, build-essential, the user's packages) in a second apt run
 *   on top of it, so the second run's choices see the first run's packages
 *   as installed.  The walk runs the phases in that order.
 *
 * libsolv checks the result (conflicts, versions) and reports problems in
 * the unsolvable case; the install order is our own (resolve-order.c).
 *
 * This file holds the two apt runs and libsolv's jobs; the parts are in
 * resolve-request.c (the request), resolve-pool.c (the pool, the
 * candidates), resolve-deps.c (dependencies in the written order),
 * resolve-walk.c (the walk and its choices), resolve-problems.c (problems
 * in apt's words) and resolve-order.c (the result), sharing resolver.h. */

#define _GNU_SOURCE
#include "config.h"

#include "apt/resolver.h"
#include "base/util.h"

#include <string.h>

#include <solv/pool.h>
#include <solv/queue.h>
#include <solv/solver.h>
#include <solv/transaction.h>

ResolveSource *
resolve_source_new (const char *name, int pin_priority)
{
  ResolveSource *source = g_new0 (ResolveSource, 1);
  source->name = g_strdup (name);
  source->pin_priority = pin_priority;
  source->index_paths = g_ptr_array_new_with_free_func (g_free);
  return source;
}

void
resolve_source_free (ResolveSource *source)
{
  if (source == NULL)
    return;
  g_free (source->name);
  g_ptr_array_unref (source->index_paths);
  g_free (source);
}

/* libsolv on INSTALL and TARGETS (TARGETS may be NULL) plus the apt walk's
 * choices: as packages to install when EXACT, else as favors. */
static Solver *
run_solver (Resolver *r, Queue *install, Queue *targets, gboolean exact)
{
  Queue job;
  queue_init (&job);
  for (int i = 0; i < install->count; i++)
    queue_push2 (&job, SOLVER_INSTALL | SOLVER_SOLVABLE, install->elements[i]);
  for (int i = 0; targets != NULL && i < targets->count; i++)
    queue_push2 (&job, SOLVER_INSTALL | SOLVER_SOLVABLE, targets->elements[i]);
  Queue marked;
  queue_init (&marked);
  marked_packages (r, &marked);
  for (int i = 0; i < marked.count; i++)
    queue_push2 (&job, (exact ? SOLVER_INSTALL : SOLVER_FAVOR) | SOLVER_SOLVABLE,
                 marked.elements[i]);
  queue_free (&marked);

  Solver *solv = solver_create (r->pool);
  /* In the exact run the walk has already followed Recommends. */
  solver_set_flag (solv, SOLVER_FLAG_IGNORE_RECOMMENDED, exact || !r->recommends);
  solver_solve (solv, &job);
  queue_free (&job);
  return solv;
}

/* One apt run's packages.  What apt's walk chose is installed as it is:
 * apt never takes back a package it marked, even when a package marked
 * later would have met the same dependency (lsb-base stays next to the
 * sysvinit-utils that provides it).  Only when the walk got stuck, or its
 * choices do not hold together, does libsolv choose, with the walk's
 * choices as favors, and report the problems if there is no solution.
 * On success either the installed packages go to OUT_INSTALLED or the
 * ordered packages to OUT_RESULT. */
static gboolean
solve (Resolver *r, Queue *install, Queue *targets, GPtrArray **out_result, Queue *out_installed,
       GError **error)
{
  Solver *solv = NULL;
  if (!r->walk_failed)
    {
      solv = run_solver (r, install, targets, TRUE);
      if (solver_problem_count (solv) != 0)
        {
          g_debug ("resolve: the apt walk's choices do not hold together; libsolv chooses");
          solver_free (solv);
          solv = NULL;
        }
    }
  if (solv == NULL)
    solv = run_solver (r, install, targets, FALSE);

  gboolean ok = solver_problem_count (solv) == 0;
  if (!ok)
    report_problems (r, solv, error);
  else if (out_result != NULL)
    *out_result = collect_result (r, solv);
  else
    {
      Transaction *trans = solver_create_transaction (solv);
      for (int i = 0; i < trans->steps.count; i++)
        queue_push (out_installed, trans->steps.elements[i]);
      transaction_free (trans);
    }
  solver_free (solv);
  return ok;
}

GPtrArray *
resolve_request (GPtrArray *sources, const ResolveRequest *request, GError **error)
{
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func ((GDestroyNotify) request_item_free);
  if (!check_resolve_request (request, items, error))
    return NULL;
  g_autoptr(Resolver) r = resolver_new (sources, request, items, error);
  if (r == NULL)
    return NULL;

  /* mmdebstrap's first apt run (the Essential set)... */
  Queue first, installed, second;
  queue_init (&first);
  queue_init (&installed);
  queue_init (&second);
  g_autoptr(GPtrArray) extra_items = g_ptr_array_new_with_free_func ((GDestroyNotify) request_item_free);
  int max_rank;
  request_targets (r, request, &first, extra_items, &max_rank);
  walk_phase (r, &first, NULL);

  /* ...ends with its packages installed: the second run cannot take them
   * back (a first-run choice such as usrmerge stays even when a second-run
   * package would have met the same dependency). */
  gboolean ok = first.count == 0 || solve (r, &first, NULL, NULL, &installed, error);

  /* The second run: the listed packages, build-essential, the Priority set. */
  ok = ok && resolve_items (r, items, &second, error)
       && resolve_items (r, extra_items, &second, error);
  if (ok && max_rank > 0)
    select_candidates (r, FALSE, max_rank, &second);
  GPtrArray *result = NULL;
  if (ok)
    {
      walk_phase (r, &second, &installed);
      solve (r, &installed, &second, &result, NULL, error);
    }
  queue_free (&first);
  queue_free (&installed);
  queue_free (&second);
  return result;
}
