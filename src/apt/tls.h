/* tls.h — which certificate authorities an https:// download trusts, as
 * apt decides it (apt-transport-https(1)): the file of PEM certificates
 * that the first of these settings names, else the system's
 * (ca-certificates, libcurl's default):
 *
 *  1. Acquire::https::HOST::CaInfo (the per-host form apt reads) or
 *     Acquire::https::CaInfo::HOST (the one apt-transport-https(1) shows),
 *     then the same under Acquire::http (apt's https settings fall back
 *     to http's);
 *  2. Acquire::https::CaInfo, then Acquire::http::CaInfo.
 *
 * Keys ignore case ("CAInfo" is "CaInfo"); the settings come from the
 * host's apt configuration (aptconf.h).  Verify-Peer, Verify-Host,
 * SslCert, SslKey and CrlFile are not read: certificates are always
 * checked, against the system's authorities or the file named. */
#pragma once

#include <curl/curl.h>
#include <glib.h>

G_BEGIN_DECLS

/* The CA file for URL: *OUT_PATH is NULL for the system's (always for a
 * URL that is not https://); with OUT_WHY, where it is set ("KEY in
 * FILE:LINE").  FALSE with ERROR set when the configuration cannot be read
 * or the file it names cannot be used ("FILE:LINE: KEY: PATH: No such file
 * or directory"). */
gboolean tls_cainfo_for_url (const char *url, char **out_path, char **out_why, GError **error);

/* Make CURL's next transfer of URL trust tls_cainfo_for_url's choice
 * (CURLOPT_CAINFO when a file is named). */
gboolean tls_apply (CURL *curl, const char *url, GError **error);

G_END_DECLS
