/* deb822.h — Debian's control-file syntax (RFC 822-like stanzas), read into
 * tables: dpkg's status file, a machine-readable copyright file.
 *
 * Field names are case-insensitive and kept lower-cased; a value keeps its
 * continuation lines joined by "\n" with their first space removed, so the
 * first line is the field's "short" value (a License: name) and the rest its
 * body.  Comment lines ("#") are skipped.  Stanzas are separated by lines
 * holding only white space. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The stanzas of TEXT, in order: each a GHashTable (lower-cased field name
 * -> value, both char*). */
GPtrArray *deb822_parse (const char *text);

/* The first line of FIELD in STANZA, stripped, or NULL when absent. */
char *deb822_first_line (GHashTable *stanza, const char *field);

G_END_DECLS
