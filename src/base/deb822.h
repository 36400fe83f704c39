/* deb822.h — Debian's control-file syntax (RFC 822-like stanzas), read into
 * tables: dpkg's status file, a machine-readable copyright file, apt's
 * deb822 sources.
 *
 * Field names are case-insensitive and kept lower-cased; a value keeps its
 * continuation lines joined by "\n" with their first space removed, so the
 * first line is the field's "short" value (a License: name) and the rest its
 * body; a continuation line holding only "." stands for an empty line.
 * Comment lines ("#") are skipped.  Stanzas are separated by lines holding
 * only white space; a field repeated in a stanza keeps its last value.
 * (The Packages indices of a lock have a faster reader of their own,
 * apt/packages.c, that reads them in place for libsolv.) */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  DEB822_NONE = 0,
  /* A line that is neither a field nor a continuation of one is an error
   * naming ORIGIN and the line; without it, such a line is skipped. */
  DEB822_STRICT = 1 << 0,
  /* A continuation line loses all white space at both ends (as apt reads
   * its sources), and an empty first line adds no "\n" before it. */
  DEB822_TRIM_CONTINUATIONS = 1 << 1,
} Deb822Flags;

/* Called with each stanza as it ends: FIELDS (lower-cased field name ->
 * value, both char*; the callee may keep a reference) and LINE, the line
 * its first field is on (from 1).  Returning FALSE (with ERROR set) stops
 * the reading. */
typedef gboolean (*Deb822StanzaFunc) (GHashTable *fields, guint line, gpointer user_data,
                                      GError **error);

/* Read TEXT (named ORIGIN in errors), calling FUNC on each stanza in order;
 * FALSE on the first error, FUNC's or (with DEB822_STRICT) the text's. */
gboolean deb822_read (const char *text, const char *origin, Deb822Flags flags,
                      Deb822StanzaFunc func, gpointer user_data, GError **error);

/* The stanzas of TEXT, in order, read without DEB822_STRICT: each a
 * GHashTable (lower-cased field name -> value, both char*). */
GPtrArray *deb822_parse (const char *text);

/* The first line of FIELD in STANZA, stripped, or NULL when absent. */
char *deb822_first_line (GHashTable *stanza, const char *field);

G_END_DECLS
