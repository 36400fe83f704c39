/* sources.h — apt sources: the one-line format of sources.list and the
 * deb822 format of *.sources, read from a file given by the user or from the
 * host's own apt configuration.
 *
 * A Source is one suite of an archive with its components, reachable at one
 * or more URIs (mirrors of each other, tried in order): a deb822 stanza with
 * two URIs and three suites gives three Sources.  A suite
 * that ends in "/" is an exact path (a flat repository, "deb URI ./"), as in
 * apt: no components, and its name, unless given, is the suite's path or,
 * for "./", the last element of the URI's path (never its host).
 *
 * Names.  A lockfile must not contain mirror host names, so every source has
 * a name that says *what* it is, not *where*: the deb822 field "X-Name:" (or
 * "Name:") or the one-line option "[name=NAME]" when given (a stanza with
 * several suites gives "NAME-SUITE" to each, "/" as "-"); otherwise the
 * suite ("bookworm", "bookworm-security", with "/" turned into "-").  When two
 * sources of one list would get the same derived name, both get the suite
 * followed by their components ("bookworm-main", "bookworm-contrib"); when
 * that still collides, it is an error asking for an explicit name.  A name,
 * given or derived, is a letter or digit, then letters, digits and "+-._"
 * (a package name's grammar, upper case allowed): it is written into
 * lockfiles and given on command lines.  Suites and components are paths
 * inside the archive (no "..", empty or "." component), architectures
 * dpkg's; a bad value is an error naming FILE:LINE.  Sources
 * with the same URI and suite are merged into one (their components are
 * added together), as apt does. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct {
  char *name;           /* see above */
  char *uri;            /* without a trailing slash: the first of URIS */
  char **uris;          /* every URI, in the order they are tried (deb822
                         * "URIs:" with several, --mirror NAME=URI given
                         * several times): the next is tried when one does
                         * not answer or lacks a file */
  char *suite;
  char **components;
  char **architectures; /* "arch=" / Architectures:, or NULL: any */
  char *signed_by;      /* a keyring path, or an armored key block, or NULL */
  int pin_priority;     /* Pin-Priority: / [pin-priority=N]; default 500 */
  gboolean ignore_valid_until;  /* Check-Valid-Until: no / [check-valid-until=no],
                                 * as apt: an expired Release (a snapshot
                                 * archive, a frozen mirror) is accepted */
  gboolean trusted;     /* Trusted: yes / [trusted=yes]: the Release is read
                         * without checking any signature */
  gboolean flat;        /* the suite ends in "/" ("./", "dir/"): a flat
                         * repository, its Release and Packages in
                         * URI/SUITE, no components, Filenames relative to URI */
  char *origin;         /* "FILE:LINE" it was read from, for error messages */
  gboolean explicit_name;
} Source;

typedef struct {
  GPtrArray *sources;   /* Source*, in the order they were read */
  char *path;           /* the file read, or NULL for the host configuration */
} SourcesList;

void source_free (Source *source);
void sources_list_free (SourcesList *list);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Source, source_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SourcesList, sources_list_free)

#define SOURCE_DEFAULT_PIN_PRIORITY 500

/* Parse TEXT, in the one-line format or in deb822 (told apart by FORMAT_HINT,
 * a file name: "*.sources" is deb822; otherwise the content decides).  ORIGIN
 * names the file in errors.  Sources are appended to LIST.  "deb-src" entries
 * and disabled stanzas ("Enabled: no") are skipped. */
gboolean sources_parse_text (SourcesList *list, const char *text, const char *origin,
                             gboolean deb822, GError **error);

/* A flat suite's path inside the URI: "./" and "." give "", "./l4t/" gives
 * "l4t". */
char *flat_path (const char *suite);

/* NULL when SUITE is a suite's path inside an archive or a flat path
 * ("./", "l4t/"), else what is wrong with it (debpolicy's words). */
const char *source_suite_problem (const char *suite);

/* Read PATH (either format). */
SourcesList *sources_load_file (const char *path, GError **error);

/* Read the host's configuration: ROOT/etc/apt/sources.list and
 * ROOT/etc/apt/sources.list.d/ *.list and *.sources, in apt's order (the
 * directory sorted by name).  ROOT is "/" normally; $APT2OSTREE_APT_ROOT
 * overrides it (tests).  Files ending in anything else are ignored, as apt
 * ignores them. */
SourcesList *sources_load_host (GError **error);

/* ROOT/etc/apt, where the host's apt configuration is (ROOT as above). */
char *sources_host_etc_dir (void);

/* Load PATH, or the host's configuration when PATH is NULL. */
SourcesList *sources_load (const char *path, GError **error);

/* The source named NAME, or NULL. */
Source *sources_list_lookup (SourcesList *list, const char *name);

/* Keep only the sources named in NAMES (in that order); an unknown name is an
 * error naming what the list holds. */
gboolean sources_list_select (SourcesList *list, const char *const *names, GError **error);

/* Keep only the sources whose architectures include ARCH (or are unset). */
void sources_list_filter_arch (SourcesList *list, const char *arch);

/* Apply "--mirror NAME=URI" overrides: each replaces the URI of the source
 * NAME, or adds a source of that name (for "build", which needs only the
 * URI).  NAMES (or NULL: any) are the names an override may give, those of
 * NAMES_WHERE ("the lockfile x.lock.json"): any other is an error listing
 * them, as are a malformed override and a URI debpolicy_uri_problem()
 * refuses (an unsupported scheme). */
gboolean sources_list_apply_mirrors (SourcesList *list, const char *const *mirrors,
                                     const char *const *names, const char *names_where,
                                     GError **error);

/* SOURCE's URI is one apt2ostree fetches from (http://, https://, file://);
 * else an error naming the source, where it was read and the scheme.
 * Checked where a source is used, not where it is read: a host's apt
 * configuration may hold sources of other schemes that are never used. */
gboolean source_check_uri (Source *source, GError **error);

/* Make LIST name another release of the same archives, as mmdebstrap's
 * SUITE does: the release of the first source named after its suite (its
 * suite up to the first "-" or "/", "bookworm") becomes SUITE in every
 * source of that release named after its suite, "bookworm-security" giving
 * "trixie-security"; their names follow.  Sources with names of their own
 * are left alone.  For sid, unstable and experimental, which have no
 * -updates or -security suites, those sources are left out. */
gboolean sources_list_set_suite (SourcesList *list, const char *suite, GError **error);

/* Give every source of LIST but flat ones the components COMPONENTS
 * (mmdebstrap's --components): an error names a component that is not
 * one. */
gboolean sources_list_set_components (SourcesList *list, const char *const *components,
                                      GError **error);

G_END_DECLS
