/* resolver.h — what the resolver's own files share, and nothing outside
 * them includes (the public face is resolve.h): the state of one
 * resolution, a request entry, a package's dependency lists, and what each
 * file offers the others.  The files, in the order a resolution uses them:
 *
 *   resolve-request.c   the request: variants, its entries, its target packages
 *   resolve-pool.c      the libsolv pool of the sources' indices, the candidates
 *   resolve-deps.c      dependencies as the Packages file writes them
 *   resolve-walk.c      apt's MarkInstall walk and the choices it makes
 *   resolve.c           the two apt runs and libsolv's jobs (resolve_request)
 *   resolve-problems.c  an unsolvable request, in apt's words
 *   resolve-order.c     the result, in install order */
#pragma once

#include "apt/resolve.h"

#include <solv/bitmap.h>
#include <solv/pool.h>
#include <solv/queue.h>
#include <solv/repo.h>
#include <solv/solver.h>

G_BEGIN_DECLS

/* apt's MarkInstall walk gives up (leaving the rest to libsolv) after this
 * many tries, so a pathological index cannot make it run away. */
#define WALK_BUDGET 2000000
#define WALK_MAX_DEPTH 256

/* --- the request (resolve-request.c) --- */

/* One entry of the request: "name", "name:arch", "name=version". */
typedef struct {
  char *spec;
  char *name;
  char *arch;       /* NULL when not given */
  char *version;    /* NULL when not given */
} RequestItem;

RequestItem *request_item_parse (const char *spec, GError **error);
void request_item_free (RequestItem *item);

/* --- one resolution's state --- */

typedef struct {
  Pool *pool;
  PackagesStore *store;
  Id arch;                  /* the image's architecture */
  gboolean recommends;

  Id *candidate;            /* name id -> the candidate solvable */
  int ncandidate;
  Map considered;

  /* The apt walk. */
  Map marked;
  Queue log;                /* +p: p marked, -p: p unmarked (to undo a failed try) */
  Map requested;            /* the runs' targets: never unmarked */
  Map in_progress;          /* packages whose dependencies are being walked */
  int *forbidden;           /* solvable -> how many marked packages conflict with it */
  guint budget;
  GHashTable *dep_lists;    /* solvable -> DepLists, filled as the walk goes */
  gboolean walk_failed;     /* some target's dependencies could not be met */
  gboolean trace;           /* $A2O_RESOLVE_TRACE: print the walk as apt's Debug::pkgDepCache::AutoInstall does */
} Resolver;

static inline const char *
solvable_name (Resolver *r, Id p)
{
  return pool_id2str (r->pool, r->pool->solvables[p].name);
}

static inline const char *
solvable_version (Resolver *r, Id p)
{
  return pool_id2str (r->pool, r->pool->solvables[p].evr);
}

static inline int
source_pin (Resolver *r, Id p)
{
  ResolveSource *source = r->pool->solvables[p].repo->appdata;
  return source->pin_priority;
}

/* The candidate (the version apt would install) of a package name, or 0. */
static inline Id
candidate_of (Resolver *r, Id name)
{
  if (name <= 0 || name >= r->ncandidate)
    return 0;
  return r->candidate[name];
}

/* --- the pool (resolve-pool.c) --- */

/* A pool holding the sources' indices, in which only the candidates exist
 * (pool->considered), ready for the walk. */
Resolver *resolver_new (GPtrArray *sources, const ResolveRequest *request, GPtrArray *items,
                        GError **error);
void resolver_free (Resolver *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Resolver, resolver_free)

/* --- dependencies (resolve-deps.c) --- */

/* A package's dependencies, each list in the order the Packages file
 * writes it. */
typedef struct {
  Queue pre_depends, depends, recommends;
} DepLists;

DepLists *dep_lists (Resolver *r, Id p);
void dep_lists_free (DepLists *l);
/* The name a dependency is about, without version or ":any"; 0 for "a | b". */
Id dep_name (Pool *pool, Id dep);
/* A dependency the way a Packages file writes it. */
char *dep_to_string (Pool *pool, Id dep);

/* --- the apt walk (resolve-walk.c) --- */

/* A Priority's rank: 1 for required, larger for less important. */
int priority_rank (const char *priority);
/* One apt run over TARGETS on top of INSTALLED (NULL: nothing yet);
 * r->walk_failed says whether its choices meet every dependency. */
void walk_phase (Resolver *r, Queue *targets, Queue *installed);
/* The marked packages, in the order they were first marked. */
void marked_packages (Resolver *r, Queue *out);

/* --- the request's packages (resolve-request.c) --- */

/* A qsort_with_data comparison of solvable ids by name; DATA: the Resolver. */
int compare_names (const void *pa, const void *pb, void *data);
/* The request's own checks, before any index is read; its entries to ITEMS. */
gboolean check_resolve_request (const ResolveRequest *request, GPtrArray *items, GError **error);
/* What the request installs, as mmdebstrap's two apt runs: FIRST the
 * Essential set (plus apt for the apt variant), SECOND_ITEMS what the
 * variant adds to the listed packages, and the Priority the second run
 * takes (0: none). */
void request_targets (Resolver *r, const ResolveRequest *request, Queue *first,
                      GPtrArray *second_items, int *out_max_rank);
/* The candidates with Essential: yes, or (essential FALSE) a Priority of at
 * most MAX_RANK that are not Essential; in name order. */
void select_candidates (Resolver *r, gboolean essential, int max_rank, Queue *out);
/* ITEMS (RequestItem) to the solvables they name. */
gboolean resolve_items (Resolver *r, GPtrArray *items, Queue *out, GError **error);

/* --- unknown names (resolve-names.c) --- */

/* Fails with the architectures NAME is built for when none is the image's,
 * else with "NAME is not in any source" and the closest names there are. */
gboolean fail_unknown_name (Resolver *r, const char *name, GError **error);

/* --- problems (resolve-problems.c) --- */

/* Fails with every problem of SOLV in apt's words, on one line. */
gboolean report_problems (Resolver *r, Solver *solv, GError **error);

/* --- the result (resolve-order.c) --- */

/* What SOLV installs, as DebPackage in install order. */
GPtrArray *collect_result (Resolver *r, Solver *solv);

G_END_DECLS
