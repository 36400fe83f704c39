/* foreign.h — can this machine run the programs of an image's architecture?
 *
 * Stage 2 runs the image's own dpkg and maintainer scripts.  For an image of
 * the host's architecture (or one the kernel runs natively, i386 on amd64)
 * nothing is needed.  For another (arm64 on amd64: Jetson/L4T images) the
 * kernel must hand the image's ELF binaries to an emulator through
 * binfmt_misc: a handler that matches the architecture's ELF header, is
 * enabled, and has the F ("fix binary") flag, so that the emulator was
 * opened when it was registered and works inside the sandbox's chroot, where
 * its path does not exist.  qemu-user-static registers such handlers
 * (update-binfmts, from binfmt-support).
 *
 * The handlers are read from /proc/sys/fs/binfmt_misc, or from
 * $APT2OSTREE_BINFMT_DIR (tests). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* TRUE when programs of dpkg architecture ARCH run here; otherwise a
 * one-line error saying what is missing and the command that adds it. */
gboolean foreign_check_arch (const char *arch, GError **error);

/* The qemu name of dpkg architecture ARCH ("aarch64" for arm64), or NULL
 * when it is not one this module knows. */
const char *foreign_qemu_name (const char *arch);

G_END_DECLS
