/* stage2.h — configure an unpacked image: the work of "apt2ostree
 * configure", run with mod_run() over the stage-1 tree as "/". */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

/* Commit metadata of a stage-1 commit: the packages' dpkg names
 * ("name" or "name:arch"), in install order (type "as"). */
#define STAGE1_META_PACKAGES "apt2ostree.packages"

/* The unit, in /etc/systemd/system of an image with openssh-server, that
 * makes the host keys stage 2 removed ("ssh-keygen -A") at first boot. */
#define STAGE2_SSH_KEYGEN_UNIT "ssh-keygen-first-boot.service"

typedef struct {
  const char *in;              /* the stage-1 tree */
  const char *out_ref;
  const char *const *hooks;    /* shell commands run before dpkg --configure -a, or NULL */
  gboolean verbose;            /* dpkg's output on stderr as it runs */
} Stage2Options;

/* Run the stage-2 script over IN (see stage2.c for each step) and commit the
 * configured image to OUT_REF. */
gboolean stage2_configure (OstreeRepo *repo, const Stage2Options *options, char **out_commit,
                           GCancellable *cancellable, GError **error);

G_END_DECLS
