/* aptconf.h — the host's apt configuration, read as apt reads it, for the
 * settings apt2ostree honours (proxies: proxy.h; certificate authorities:
 * tls.h).
 *
 * Read once per process: $APT_CONFIG, then ROOT/etc/apt/apt.conf.d/ (files
 * with no extension or ".conf", by name), then ROOT/etc/apt/apt.conf, a
 * later setting overriding an earlier one; ROOT as sources.h's
 * (APT2OSTREE_APT_ROOT in tests).  Both syntaxes ("A::B::C "v";" and
 * "A { B { C "v"; }; };"), comments, #clear and #include are understood;
 * keys ignore case, as apt's do. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* One setting. */
typedef struct {
  char *key;      /* as written, scopes joined with "::" */
  char *value;
  char *origin;   /* FILE:LINE */
} AptConfItem;

typedef struct AptConf AptConf;

/* The configuration, read on the first call; NULL with ERROR set (naming
 * FILE:LINE) when it cannot be read or parsed, on every call. */
const AptConf *aptconf_host (GError **error);

/* The setting of KEY (any case), when it is set and not empty; else NULL. */
const AptConfItem *aptconf_lookup (const AptConf *conf, const char *key);

G_END_DECLS
