/* deployable.h — a configured Debian image turned into a tree that
 * "ostree admin deploy" accepts, metadata only:
 *
 * - the kernel /boot/vmlinuz-KVER (and config-KVER, System.map-KVER) moves
 *   to /usr/lib/modules/KVER/vmlinuz (config, System.map) and the initramfs
 *   /boot/initrd.img-KVER to /usr/lib/modules/KVER/initramfs.img; device
 *   trees (Debian's /usr/lib/linux-image-KVER/, /boot/dtbs/KVER/, or *.dtb
 *   files in /boot as on Jetson boards) to /usr/lib/modules/KVER/dtb/;
 * - without merged /usr, /lib/modules moves to /usr/lib/modules (and
 *   becomes a link to it);
 * - /etc moves to /usr/etc, where OSTree keeps the image's configuration and
 *   merges it with the device's on every deployment;
 * - /var is made at boot, not deployed: what the packages put there moves
 *   to /usr/share/factory/var/ and a tmpfiles.d file
 *   (usr/lib/tmpfiles.d/apt2ostree-factory.conf) copies each top-level entry
 *   back when it is missing ("C"), so a first boot gets the packages' state
 *   and later boots keep the device's; a factory copy rather than one
 *   tmpfiles line per file because maintainer scripts leave whole trees
 *   there (the dpkg database, alternatives) that no line-by-line list keeps
 *   exact;
 * - the top-level directories that hold state become links into /var as
 *   OSTree's layout has them (/home -> var/home, /root -> var/roothome,
 *   /opt, /srv, /mnt -> var/…, /media -> run/media, /usr/local ->
 *   ../var/usrlocal), their contents kept in the factory copy, with
 *   /ostree -> sysroot/ostree and an empty /sysroot.
 *
 * The initramfs must run ostree-prepare-root: the image must have Debian's
 * ostree-boot and dracut installed, else it is an error naming the one
 * missing. */
#pragma once

#include <ostree.h>

G_BEGIN_DECLS

/* Rewrite ROOT (the tree of the image NAME, for errors) in place inside an
 * open transaction. */
gboolean deployable_apply (OstreeRepo *repo, OstreeMutableTree *root, const char *name,
                           GCancellable *cancellable, GError **error);

G_END_DECLS
