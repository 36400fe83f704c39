# libsources.sh — the host's apt sources, for the tests and the benchmarks
# (which compare with mmdebstrap from the same mirror).  Nothing here writes
# a mirror's host name: it is read from the host's configuration.

# host_debian_mirror: the Debian mirror the host's apt configuration names
# for bookworm or for the host's own release (first match; a trixie host
# names trixie), printed as a URI; nothing when none is named.
# Tests never write a mirror's host name: they ask the host.
host_debian_mirror () {
    local f rel
    rel=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-bookworm}")
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk -v rel="${rel:-bookworm}" 'BEGIN { RS=""; FS="\n" }
             { uri=""; suites=""
               for (i = 1; i <= NF; i++) {
                 if ($i ~ /^URIs:/)   { uri=$i;    sub(/^URIs:[ \t]*/, "", uri); sub(/[ \t].*/, "", uri) }
                 if ($i ~ /^Suites:/) { suites=$i }
               }
               if (uri != "" && (suites ~ /[ \t]bookworm([ \t]|$)/ || suites ~ ("[ \t]" rel "([ \t]|$)"))) { print uri; exit } }' "$f"
    done | head -n 1 | grep . && return 0
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
        | awk -v rel="${rel:-bookworm}" '$1 == "deb" { u=""; for (i = 2; i <= NF; i++) { if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; continue } if (u == "") { u=$i; continue } if ($i == "bookworm" || $i == rel) { print u; exit } break } }' \
        | head -n 1
}

# host_sources_for SUITE: the host's Debian sources moved to another release,
# as "apt2ostree lock --suite SUITE" moves them (bookworm-security becomes
# SUITE-security; sid keeps no -updates or -security suite), in deb822, for
# mmdebstrap, which takes a sources file.  The host's release is the one
# its own /etc/os-release names.
host_sources_for () {
    local to=$1 from f
    from=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [ -n "$from" ] || return 1
    {
        for f in /etc/apt/sources.list.d/*.sources; do [ -f "$f" ] && cat "$f" && echo; done
        cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
            | awk '$1 == "deb" { o=""; i=2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                               printf "Types: deb\nURIs: %s\nSuites: %s\nComponents:", $i, $(i+1)
                               for (j = i + 2; j <= NF && $j !~ /^#/; j++) printf " %s", $j
                               printf "\n\n" }'
    } | awk -v from="$from" -v to="$to" '
        BEGIN { RS = ""; FS = "\n"; unstable = (to == "sid" || to == "unstable" || to == "experimental") }
        { out = ""; keep = 0
          for (i = 1; i <= NF; i++) {
            line = $i
            if (line ~ /^Suites:/) {
              n = split(substr(line, 8), s, /[ \t]+/); line = "Suites:"
              for (j = 1; j <= n; j++) {
                if (s[j] == "") continue
                if (s[j] == from || index(s[j], from "-") == 1 || index(s[j], from "/") == 1) {
                  rest = substr(s[j], length(from) + 1)
                  if (rest != "" && unstable) continue
                  s[j] = to rest; keep = 1
                }
                line = line " " s[j]
              }
            }
            if (line !~ /^#/) out = out line "\n"
          }
          if (keep) printf "%s\n", out }'
}
