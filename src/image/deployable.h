/* deployable.h — a configured Debian image turned into a tree that
 * "ostree admin deploy" accepts, metadata only:
 *
 * - the kernel /boot/vmlinuz-KVER (and config-KVER, System.map-KVER) moves
 *   to /usr/lib/modules/KVER/vmlinuz (config, System.map) and the initramfs
 *   /boot/initrd.img-KVER to /usr/lib/modules/KVER/initramfs.img; device
 *   trees (Debian's /usr/lib/linux-image-KVER/, /boot/dtbs/KVER/, or *.dtb
 *   files in /boot as on Jetson boards) to /usr/lib/modules/KVER/dtb/;
 *   each file that leaves /boot becomes a local diversion in the dpkg
 *   database, and Debian's device tree directory a link to its new place,
 *   so dpkg --verify on the device finds every file;
 * - without merged /usr, /lib/modules moves to /usr/lib/modules (and
 *   becomes a link to it);
 * - /etc moves to /usr/etc, where OSTree keeps the image's configuration and
 *   merges it with the device's on every deployment; its passwd and group
 *   are also written as usr/lib/sysusers.d/apt2ostree-image.conf, so the
 *   users a new image's packages made reach a device that keeps its own
 *   /etc/passwd (see sysusers.h);
 * - /var is made at boot and shared by every deployment, so what describes
 *   the image stays with it: the dpkg database (var/lib/dpkg) and debconf's
 *   (var/cache/debconf) move to /usr/lib/sysimage/dpkg and
 *   /usr/lib/sysimage/debconf, read-only, and a tmpfiles.d file
 *   (usr/lib/tmpfiles.d/apt2ostree-factory.conf) links /var to them at
 *   every boot ("L+", relative targets), so dpkg, apt and dpkg-query on
 *   the device report the deployment it runs, after an upgrade and after a
 *   rollback;
 * - the rest of what the packages put in /var is the device's once made:
 *   its files move to /usr/share/factory/var/ and the same file makes it
 *   entry by entry: "d" per directory (made when missing, its owner and
 *   mode set to the image's), "C" per file and "L" per link (each only
 *   when missing), so a boot never overwrites what the device keeps there
 *   and a package an upgrade adds gets its entries on the first boot that
 *   runs it;
 * - the top-level directories that hold state become links into /var as
 *   OSTree's layout has them (/home -> var/home, /root -> var/roothome,
 *   /opt, /srv, /mnt -> var/…, /media -> run/media, /usr/local ->
 *   ../var/usrlocal), their contents made the same way, with
 *   /ostree -> sysroot/ostree and an empty /sysroot.
 *
 * The initramfs must run ostree-prepare-root: the image must have Debian's
 * ostree-boot and dracut installed, else it is an error naming the one
 * missing.  A name under /var with a control character, which no tmpfiles.d
 * line holds, is an error naming it. */
#pragma once

#include <ostree.h>

#include "barestore/sink.h"

G_BEGIN_DECLS

/* Rewrite ROOT (the tree of the image NAME, for errors) in place inside an
 * open transaction. */
gboolean deployable_apply (OstreeRepo *repo, StoreSink *sink, OstreeMutableTree *root,
                           const char *name,
                           GCancellable *cancellable, GError **error);

G_END_DECLS
