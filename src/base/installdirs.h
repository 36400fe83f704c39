/* installdirs.h — where the program's own files are (the commands module,
 * the keyrings).  configure fixes bindir, pkglibdir and pkgdatadir; an
 * installation keeps their layout wherever the whole tree goes (DESTDIR,
 * "make install prefix=…", an /opt tree copied to another machine), so a
 * directory is looked for relative to the running program first, as
 * configure placed it relative to bindir, and where configure put it
 * second. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The path that leads from directory FROM to directory TO, both absolute:
 * "../lib/apt2ostree" from "/usr/bin" to "/usr/lib/apt2ostree", "." when
 * they are the same. */
char *installdirs_relative (const char *from, const char *to);

/* CONFIGURED (PKGLIBDIR, PKGDATADIR), seen from the running program: the
 * program's directory joined with the path from BINDIR to CONFIGURED, made
 * canonical; NULL when /proc/self/exe cannot be read.  The directory may
 * not exist. */
char *installdirs_from_program (const char *configured);

G_END_DECLS
