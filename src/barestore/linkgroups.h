/* linkgroups.h — which paths of a tree are one file (hard links), kept in
 * commit metadata.  OSTree stores no link identity: hard-linked files are
 * one content object, but so are any two files with the same content,
 * owner and mode.  Where the links matter (a tar export should link what
 * the .deb linked, and nothing else), the commit says which paths were
 * linked: an "aas", each group's paths ("/usr/bin/a") sorted, the groups
 * sorted by their first path, no group of fewer than two.
 *
 * GLib only (no libostree): the lean unpack path records them. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The commit metadata key and its type. */
#define LINKGROUPS_META_KEY "apt2ostree.hardlinks"
#define LINKGROUPS_TYPE "aas"

typedef struct LinkGroups LinkGroups;

LinkGroups *linkgroups_new (void);
void linkgroups_free (LinkGroups *groups);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LinkGroups, linkgroups_free)

/* A and B are one file: their groups become one. */
void linkgroups_link (LinkGroups *groups, const char *a, const char *b);

/* Add every group of the commit metadata METADATA (a{sv}) that has the key;
 * a value of another type is ignored (nothing is linked for it). */
void linkgroups_add_metadata (LinkGroups *groups, GVariant *metadata);

/* The groups as an "aas" in the order above (floating), or NULL when no
 * two paths are linked. */
GVariant *linkgroups_to_variant (LinkGroups *groups);

/* For a writer: each linked path of METADATA's groups -> its group's number
 * (GUINT_TO_POINTER, from 1); NULL when the metadata has none. */
GHashTable *linkgroups_index_metadata (GVariant *metadata);

G_END_DECLS
