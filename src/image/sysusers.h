/* sysusers.h — an image's users and groups as a sysusers.d file.
 *
 * OSTree merges /etc three ways: a device that changed /etc/passwd or
 * /etc/group (a user it added) keeps its own copy through an upgrade, so
 * the users and groups a new image's packages made (a daemon's system
 * user) never reach it.  systemd-sysusers, which runs early on the first
 * boot of each new deployment (ConditionNeedsUpdate=/etc), adds what a
 * sysusers.d file names and /etc lacks, with the numbers given when they
 * are free: the image's /etc/passwd and /etc/group as such a file.  The
 * device's own entries are never changed. */
#pragma once

#include <glib.h>

/* The sysusers.d text for PASSWD and GROUP (the files' contents): "g NAME
 * GID" per group, "u NAME UID:GID GECOS HOME SHELL" per user, "m USER
 * GROUP" per supplementary member, each field quoted as sysusers reads it.
 * A malformed line, or a control character in a field, is an error naming
 * the file (PASSWD_NAME, GROUP_NAME) and the line. */
char *sysusers_from_accounts (const char *passwd, const char *passwd_name, const char *group,
                              const char *group_name, GError **error);
