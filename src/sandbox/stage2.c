/* stage2.c — dpkg --configure -a over an unpacked image, in the sandbox.
 *
 * The packages were unpacked by apt2ostree, not by dpkg, so stage 2 first
 * does what dpkg (and a bootstrap tool) would have done by then, in this
 * order:
 *   1. /etc/passwd and /etc/group from base-passwd's masters, so that the
 *      maintainer scripts find root, shadow, etc.;
 *   2. a policy-rc.d that forbids starting services;
 *   3. every package's preinst ("install"), in install order, as dpkg runs
 *      it before unpacking: from var/lib/dpkg/tmp.ci beside the package's
 *      control files (debootstrap and mmdebstrap do the same through
 *      dpkg --install); then, for each diversion a preinst added
 *      (dpkg-divert in a preinst, as NVIDIA's L4T packages do), another
 *      package's file at the diverted path is moved to the diversion's name,
 *      where dpkg would have unpacked it (--rename has done so already);
 *   4. the trigger database dpkg records at unpack: each package's
 *      "interest" lines into var/lib/dpkg/triggers/, and the file triggers
 *      whose directories the packages ship, activated;
 *   5. the caller's hooks;
 *   6. dpkg --configure -a;
 *   7. cleaning, as mmdebstrap does, of what would make the image differ
 *      from one build to the next: dpkg's and apt's logs, the *-old copies
 *      of dpkg's and debconf's databases, ldconfig's aux-cache; policy-rc.d
 *      removed; the empty available and statoverride files stage 1 made go,
 *      as dpkg recreates them when it needs them;
 *   8. per-machine state a postinst made, which every device running the
 *      image would otherwise share: ssh host keys, the machine id
 *      (/etc/machine-id left empty: systemd's "first boot"; the D-Bus copy
 *      removed unless it is a link to it), random seeds, systemd's
 *      credential secret.  Where openssh-server is installed, a unit
 *      regenerates the host keys at first boot (Debian's sshd refuses to
 *      start without them, and only its postinst makes them).
 * The sandbox's host name is fixed (sandbox.h), so what a script writes
 * never names the build machine.
 *
 * The incremental form (build --incremental) starts from the configured
 * image it replaces instead: 2, dpkg --purge of the packages that left,
 * dpkg's own --unpack of the .debs that changed or arrived (dpkg runs the
 * preinsts and records the triggers), then 5 to 8, the same text. */
#include "config.h"

#include <string.h>

#include "sandbox/foreign.h"
#include "sandbox/mod.h"
#include "store/repo.h"
#include "sandbox/stage2.h"
#include "store/treeread.h"
#include "base/util.h"

/* The steps both scripts share (the from-scratch one below, the
 * incremental one after it), as text pasted into each: the from-scratch
 * script's bytes are in every image commit's metadata, so they must not move. */
#define STAGE2_PROLOGUE \
  "set -e\n" \
  "export DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true\n" \
  "cd /\n" \
  "step() { echo \"apt2ostree configure: $*\"; }\n"

/* 2. (both scripts) */
#define STAGE2_NO_SERVICES \
  "# 2. no services\n" \
  "printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d\n" \
  "chmod 755 /usr/sbin/policy-rc.d\n" \
  "\n"

/* 5. (both scripts) */
#define STAGE2_HOOKS \
  "# 5. hooks\n" \
  "if [ -n \"${APT2OSTREE_HOOKS:-}\" ]; then\n" \
  "  step \"hooks\"\n" \
  "  sh -e -c \"$APT2OSTREE_HOOKS\"\n" \
  "fi\n" \
  "\n"

/* 6. (both scripts) */
#define STAGE2_CONFIGURE \
  "# 6. configure\n" \
  "step \"dpkg --configure -a\"\n" \
  "# dpkg's output goes to a file, shown as it grows, not through a pipe: a\n" \
  "# process a maintainer script leaves running (a daemon) would hold a pipe,\n" \
  "# and its reader would wait for it for ever.\n" \
  ": > /tmp/dpkg.log\n" \
  "dpkg --configure -a >> /tmp/dpkg.log 2>&1 &\n" \
  "dpkg=$!\n" \
  "tail -n +1 -s 0.02 -f --pid=$dpkg /tmp/dpkg.log\n" \
  "status=0\n" \
  "wait $dpkg || status=$?\n" \
  "echo $status > /tmp/dpkg.status\n" \
  "if [ \"$(cat /tmp/dpkg.status)\" != 0 ]; then\n" \
  "  # dpkg's own report scrolls away behind what it says next: say last which\n" \
  "  # package's script failed, and what that script printed.\n" \
  "  awk '/^Setting up / { name = $3; said = \"\"; next }\n" \
  "       /^dpkg: error processing package / { failed = $5; getline why; sub(/^ +/, \"\", why)\n" \
  "         if (why ~ /script/) printf \"apt2ostree configure: package %s: %s; it said: %s\\n\",\n" \
  "           failed, why, (failed == name && said != \"\") ? said : \"(nothing)\"; next }\n" \
  "       name != \"\" { said = (said == \"\") ? $0 : said \" / \" $0 }' /tmp/dpkg.log >&2\n" \
  "  exit 1\n" \
  "fi\n" \
  "dpkg --audit\n" \
  "\n"

/* 7. and 8. (both scripts) */
#define STAGE2_CLEAN \
  "# 7. clean\n" \
  "rm -f /usr/sbin/policy-rc.d\n" \
  "rm -f /var/log/dpkg.log /var/log/alternatives.log /var/log/apt/history.log \\\n" \
  "      /var/log/apt/term.log /var/log/apt/eipp.log.xz /var/cache/ldconfig/aux-cache \\\n" \
  "      /var/lib/dpkg/*-old /var/cache/debconf/*-old\n" \
  "# stage 1 made these for dpkg; like mmdebstrap's images, keep them only if used\n" \
  "for f in available statoverride; do\n" \
  "  [ -s /var/lib/dpkg/$f ] || rm -f /var/lib/dpkg/$f\n" \
  "done\n" \
  "\n" \
  "# 8. per-machine state, made again on each machine at first boot\n" \
  "rm -f /etc/ssh/ssh_host_* /var/lib/systemd/random-seed /var/lib/urandom/random-seed \\\n" \
  "      /var/lib/systemd/credential.secret\n" \
  "if [ -e /etc/machine-id ]; then : > /etc/machine-id; fi\n" \
  "[ -L /var/lib/dbus/machine-id ] || rm -f /var/lib/dbus/machine-id\n" \
  "if [ \"$(dpkg-query -W -f '${db:Status-Status}' openssh-server 2>/dev/null)\" = installed ]; then\n" \
  "  unit=" STAGE2_SSH_KEYGEN_UNIT "\n" \
  "  mkdir -p /etc/systemd/system/multi-user.target.wants\n" \
  "  cat > /etc/systemd/system/$unit <<'EOF'\n" \
  "# Written by apt2ostree configure: the image ships no SSH host keys (every\n" \
  "# machine running it would share them).  This makes the missing ones before\n" \
  "# sshd starts (its unit's \"sshd -t\" fails without them).\n" \
  "[Unit]\n" \
  "Description=Generate this machine's SSH host keys\n" \
  "DefaultDependencies=no\n" \
  "Requires=local-fs.target\n" \
  "After=local-fs.target\n" \
  "Before=ssh.service ssh.socket sshd.service shutdown.target\n" \
  "Conflicts=shutdown.target\n" \
  "\n" \
  "[Service]\n" \
  "Type=oneshot\n" \
  "ExecStart=/usr/bin/ssh-keygen -A\n" \
  "RemainAfterExit=yes\n" \
  "\n" \
  "[Install]\n" \
  "WantedBy=multi-user.target\n" \
  "EOF\n" \
  "  chmod 644 /etc/systemd/system/$unit\n" \
  "  ln -sf ../$unit /etc/systemd/system/multi-user.target.wants/$unit\n" \
  "fi\n"

static const char stage2_script[] =
  STAGE2_PROLOGUE
  "\n"
  "# 1. users and groups\n"
  "for f in passwd group; do\n"
  "  if [ ! -e /etc/$f ] && [ -e /usr/share/base-passwd/$f.master ]; then\n"
  "    cp /usr/share/base-passwd/$f.master /etc/$f\n"
  "  fi\n"
  "done\n"
  "\n"
  STAGE2_NO_SERVICES
  "# 3. preinst scripts, in install order, run the way dpkg runs them: from\n"
  "#    var/lib/dpkg/tmp.ci beside the package's control files (debconf reads\n"
  "#    the package's name and templates there)\n"
  "[ -e /var/lib/dpkg/diversions ] || : > /var/lib/dpkg/diversions\n"
  "cp /var/lib/dpkg/diversions /tmp/apt2ostree-diversions\n"
  "ci=/var/lib/dpkg/tmp.ci\n"
  "for p in \"$@\"; do\n"
  "  [ -e /var/lib/dpkg/info/$p.preinst ] || continue\n"
  "  name=${p%%:*}\n"
  "  rm -rf $ci && mkdir -p $ci\n"
  "  for f in /var/lib/dpkg/info/$p.*; do\n"
  "    case ${f##*.} in list|md5sums|conffiles) ;; *) cp -p \"$f\" $ci/${f##*.} ;; esac\n"
  "  done\n"
  "  dpkg-query -s \"$p\" > $ci/control\n"
  "  step \"$name: preinst install\"\n"
  "  if ! DPKG_MAINTSCRIPT_PACKAGE=$name DPKG_MAINTSCRIPT_PACKAGE_REFCOUNT=1 \\\n"
  "       DPKG_MAINTSCRIPT_ARCH=$(dpkg-query -f '${Architecture}' -W \"$p\") \\\n"
  "       DPKG_MAINTSCRIPT_NAME=preinst PERL_DL_NONLAZY=1 \\\n"
  "       DPKG_RUNNING_VERSION=$(dpkg-query -f '${Version}' -W dpkg) \\\n"
  "       $ci/preinst install; then\n"
  "    echo \"apt2ostree configure: package $name ($(dpkg-query -f '${Version}' -W \"$p\")): its preinst script failed\" >&2\n"
  "    exit 1\n"
  "  fi\n"
  "done\n"
  "rm -rf $ci\n"
  "\n"
  "# 3a. files two packages both ship.  Stage 1 kept the earlier package's at\n"
  "#     the path and set the later one's aside; now that the preinsts have\n"
  "#     made their diversions, put each where dpkg would have: the diverting\n"
  "#     package's file at the path, the other's at the diversion's name.\n"
  "#     Without a diversion, the later package must Replace the earlier one.\n"
  "aside=/var/lib/apt2ostree/set-aside\n"
  "if [ -e $aside.list ]; then\n"
  "  while read -r path earlier later; do\n"
  "    by=$(dpkg-divert --listpackage \"$path\")\n"
  "    to=$(dpkg-divert --truename \"$path\")\n"
  "    if [ \"$by\" = \"${later%%:*}\" ] && [ \"$to\" != \"$path\" ]; then\n"
  "      if [ -e \"$path\" ] && [ ! -e \"$to\" ]; then mv \"$path\" \"$to\"; fi\n"
  "      mv \"$aside/$later$path\" \"$path\"\n"
  "    elif [ \"$by\" = \"${earlier%%:*}\" ] && [ \"$to\" != \"$path\" ]; then\n"
  "      if [ ! -e \"$path\" ] && [ -e \"$to\" ]; then mv \"$to\" \"$path\"; fi\n"
  "      mv \"$aside/$later$path\" \"$to\"\n"
  "    elif dpkg-query -W -f '${Replaces}\\n' \"$later\" | tr ',' '\\n' \\\n"
  "         | grep -q \"^ *${earlier%%:*}\\( \\|:\\|$\\)\"; then\n"
  "      mv \"$aside/$later$path\" \"$path\"\n"
  "      # The path is the later package's now: dpkg drops it from the\n"
  "      # earlier one's file list (not from its md5sums).\n"
  "      l=/var/lib/dpkg/info/$earlier.list\n"
  "      grep -v -x -F -e \"$path\" $l > $l.new || true\n"
  "      cat $l.new > $l && rm $l.new\n"
  "    else\n"
  "      echo \"apt2ostree configure: packages ${earlier%%:*} and ${later%%:*} both ship $path \\\n"
  "(no diversion, and ${later%%:*} does not Replace ${earlier%%:*}), as dpkg refuses\" >&2\n"
  "      exit 1\n"
  "    fi\n"
  "  done < $aside.list\n"
  "fi\n"
  "rm -rf /var/lib/apt2ostree\n"
  "\n"
  "# 3b. diversions the preinsts added.  dpkg would have unpacked every other\n"
  "#     package's copy of a diverted file under the diversion's name; here all\n"
  "#     files were in place before any preinst ran.  \"dpkg-divert --rename\"\n"
  "#     has already moved it; without --rename, move it now.\n"
  "while read -r from && read -r to && read -r by; do\n"
  "  was=\n"
  "  while read -r f && read -r t && read -r b; do\n"
  "    [ \"$f\" = \"$from\" ] && [ \"$t\" = \"$to\" ] && [ \"$b\" = \"$by\" ] && was=1\n"
  "  done < /tmp/apt2ostree-diversions\n"
  "  [ -z \"$was\" ] || continue\n"
  "  { [ -e \"$from\" ] || [ -L \"$from\" ]; } || continue\n"
  "  { [ -e \"$to\" ] || [ -L \"$to\" ]; } && continue\n"
  "  # one grep over every file list (in the order of the glob), not a\n"
  "  # basename and a grep for each package\n"
  "  for l in $(grep -l -x -F -e \"$from\" /var/lib/dpkg/info/*.list); do\n"
  "    owner=${l##*/}; owner=${owner%.list}\n"
  "    [ \"${owner%%:*}\" != \"$by\" ] || continue\n"
  "    step \"${owner%%:*}: $from diverted by $by, moved to $to\"\n"
  "    mv \"$from\" \"$to\"\n"
  "    break\n"
  "  done\n"
  "done < /var/lib/dpkg/diversions\n"
  "rm -f /tmp/apt2ostree-diversions\n"
  "\n"
  "# 4. triggers: interests, then file triggers the unpacked files activate\n"
  "mkdir -p /var/lib/dpkg/triggers\n"
  ": > /var/lib/dpkg/triggers/File\n"
  "for t in /var/lib/dpkg/info/*.triggers; do\n"
  "  [ -e \"$t\" ] || continue\n"
  "  p=$(basename \"$t\" .triggers)\n"
  "  while read -r directive trigger rest; do\n"
  "    case $directive in\n"
  "      interest) suffix= ;;\n"
  "      interest-await) suffix= ;;\n"
  "      interest-noawait) suffix=/noawait ;;\n"
  "      *) continue ;;\n"
  "    esac\n"
  "    case $trigger in\n"
  "      /*) echo \"$trigger $p$suffix\" >> /var/lib/dpkg/triggers/File ;;\n"
  "      *) echo \"$p$suffix\" >> /var/lib/dpkg/triggers/$trigger ;;\n"
  "    esac\n"
  "  done < \"$t\"\n"
  "done\n"
  "while read -r path p; do\n"
  "  if grep -q -h -x -F -e \"$path\" -e \"$path/\" /var/lib/dpkg/info/*.list \\\n"
  "     || grep -q -h \"^$path/\" /var/lib/dpkg/info/*.list; then\n"
  "    dpkg-trigger --no-await --by-package=\"${p%%/*}\" \"$path\"\n"
  "  fi\n"
  "done < /var/lib/dpkg/triggers/File\n"
  "[ -s /var/lib/dpkg/triggers/File ] || rm /var/lib/dpkg/triggers/File\n"
  "\n"
  STAGE2_HOOKS
  STAGE2_CONFIGURE
  STAGE2_CLEAN;

/* The incremental script (build --incremental): over the configured image
 * it replaces, what apt-get does on a running device.  $1 is the dpkg names
 * of the packages that left, space-separated; the other arguments are the
 * .debs that changed or arrived, in install order.  Users, preinsts, the
 * trigger database: dpkg itself sees to them here, as it unpacks. */
static const char stage2_incremental_script[] =
  STAGE2_PROLOGUE
  "\n"
  STAGE2_NO_SERVICES
  "# the packages that left, purged (dependencies come right again below)\n"
  "purge=$1; shift\n"
  "if [ -n \"$purge\" ]; then\n"
  "  step \"dpkg --purge$(printf ' %s' $purge)\"\n"
  "  dpkg --purge --no-triggers --force-depends --force-remove-essential $purge\n"
  "fi\n"
  "\n"
  "# the packages that changed or arrived, unpacked by dpkg (preinsts; the\n"
  "# triggers they activate run once, in dpkg --configure -a); a conffile takes\n"
  "# the package's version, as a from-scratch image has it.  No fsync or\n"
  "# early writeback of each file (--force-unsafe-io): the files land in the\n"
  "# overlay's upper directory, which only the commit reads (and syncs)\n"
  "if [ $# -gt 0 ]; then\n"
  "  step \"dpkg --unpack ($# packages)\"\n"
  "  dpkg --unpack --force-unsafe-io --no-triggers --auto-deconfigure --force-depends \\\n"
  "    --force-confnew --force-confmiss \"$@\"\n"
  "fi\n"
  "\n"
  STAGE2_HOOKS
  STAGE2_CONFIGURE
  STAGE2_CLEAN;

/* The packages of a stage-1 commit, in install order. */
static GPtrArray *
stage1_packages (OstreeRepo *repo, const char *rev, GError **error)
{
  g_autofree char *commit = NULL;
  if (!ostree_repo_resolve_rev (repo, rev, FALSE, &commit, error))
    return NULL;
  g_autoptr(GVariant) commit_v = NULL;
  if (!ostree_repo_load_commit (repo, commit, &commit_v, NULL, error))
    return NULL;
  g_autoptr(GVariant) metadata = g_variant_get_child_value (commit_v, 0);
  g_autoptr(GVariant) names = g_variant_lookup_value (metadata, STAGE1_META_PACKAGES,
                                                      G_VARIANT_TYPE_STRING_ARRAY);
  if (names == NULL)
    return util_fail (error, "\"%s\" is not a stage-1 tree made by \"apt2ostree stage1\"", rev),
           NULL;

  g_autoptr(GPtrArray) packages = g_ptr_array_new_with_free_func (g_free);
  gsize n;
  g_autofree const char **strv = g_variant_get_strv (names, &n);
  for (gsize i = 0; i < n; i++)
    g_ptr_array_add (packages, g_strdup (strv[i]));
  return g_steal_pointer (&packages);
}

/* The image's dpkg architecture: the first line of var/lib/dpkg/arch, which
 * stage 1 writes. */
static char *
stage1_arch (OstreeRepo *repo, const char *rev, GCancellable *cancellable, GError **error)
{
  g_autoptr(GFile) root = NULL;
  if (!ostree_repo_read_commit (repo, rev, &root, NULL, cancellable, error))
    return NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *text = treeread_text (root, "var/lib/dpkg/arch", cancellable, &local_error);
  if (local_error != NULL)
    return util_fail (error, "\"%s\": %s", rev, local_error->message), NULL;
  if (text == NULL)
    return util_fail (error, "\"%s\": no var/lib/dpkg/arch (not a stage-1 tree?)", rev), NULL;
  text[strcspn (text, "\n")] = '\0';
  g_strstrip (text);
  if (text[0] == '\0')
    return util_fail (error, "\"%s\": var/lib/dpkg/arch is empty", rev), NULL;
  return g_steal_pointer (&text);
}

/* What the stage-2 script was doing, from its output (OUTPUT): the last
 * package dpkg set up or processed triggers for, or the last step the
 * script announced; for an error on timeout. */
static char *
stage2_progress (const char *output)
{
  static const struct { const char *prefix, *before, *after; } marks[] = {
    { "Setting up ", " while configuring ", "" },
    { "Processing triggers for ", " while processing the triggers for ", "" },
    { "apt2ostree configure: ", " at the step \"", "\"" },
  };
  g_autofree char *found = NULL;
  g_auto(GStrv) lines = g_strsplit (output, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    for (guint i = 0; i < G_N_ELEMENTS (marks); i++)
      if (g_str_has_prefix (*l, marks[i].prefix))
        {
          g_autofree char *what = g_strdup (*l + strlen (marks[i].prefix));
          g_strstrip (what);
          if (g_str_has_suffix (what, " ..."))
            what[strlen (what) - 4] = '\0';
          g_free (found);
          found = g_strconcat (marks[i].before, what, marks[i].after, NULL);
          break;
        }
  return g_steal_pointer (&found);
}

/* With --verbose, where the time around the script went (mod.h). */
static void
report_timings (const Stage2Options *options, const ModTimings *t)
{
  if (options->verbose)
    g_printerr ("apt2ostree configure: checkout %.3f s, command %.3f s, commit %.3f s, "
                "keeping the checkout %.3f s, cleanup %.3f s\n", t->checkout, t->command,
                t->commit, t->keep, t->cleanup);
}

gboolean
stage2_configure (OstreeRepo *repo, const Stage2Options *options, char **out_commit,
                  GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) packages = stage1_packages (repo, options->in, error);
  if (packages == NULL)
    return FALSE;
  /* Everything below runs the image's own programs: say now, in one line,
   * when this machine cannot. */
  g_autofree char *arch = stage1_arch (repo, options->in, cancellable, error);
  if (arch == NULL)
    return FALSE;
  if (!foreign_check_arch (arch, error))
    {
      g_prefix_error (error, "configure %s: ", options->in);
      return FALSE;
    }

  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, "/bin/sh");
  g_ptr_array_add (argv, "-c");
  g_ptr_array_add (argv, (char *) stage2_script);
  g_ptr_array_add (argv, "apt2ostree-configure");
  for (guint i = 0; i < packages->len; i++)
    g_ptr_array_add (argv, packages->pdata[i]);
  g_ptr_array_add (argv, NULL);

  g_autofree char *hooks = options->hooks != NULL ? g_strjoinv ("\n", (char **) options->hooks) : NULL;
  const char *setenv[] = { "APT2OSTREE_HOOKS", hooks != NULL ? hooks : "", NULL };

  ModTimings timings = { 0, };
  ModOptions mod = {
    .in = options->in,
    .out_ref = options->out_ref,
    .chroot = TRUE,
    .setenv = setenv,
    .verbose = options->verbose,
    .argv = (char **) argv->pdata,
    .description = "the stage-2 script (preinsts, triggers, hooks, dpkg --configure -a)",
    .timings = &timings,
    .limits = options->limits,
    .progress = stage2_progress,
  };
  if (!mod_run (repo, &mod, out_commit, cancellable, error))
    {
      g_prefix_error (error, "configure %s: ", options->in);
      return FALSE;
    }
  report_timings (options, &timings);
  return TRUE;
}

/* Where the incremental script finds the .debs: each bound read-only, as
 * DEBS_DIR/N.deb (mount points, so never part of the result). */
#define DEBS_DIR "/run/apt2ostree-debs"

gboolean
stage2_configure_incremental (OstreeRepo *repo, const Stage2Options *options,
                              const Stage2Incremental *incremental, char **out_commit,
                              GCancellable *cancellable, GError **error)
{
  g_autoptr(RepoRev) prev = repo_resolve (repo, incremental->prev, error);
  g_autoptr(RepoRev) stage1 = prev != NULL ? repo_resolve (repo, options->in, error) : NULL;
  if (stage1 == NULL)
    return FALSE;
  g_autofree char *arch = stage1_arch (repo, options->in, cancellable, error);
  if (arch == NULL)
    return FALSE;
  if (!foreign_check_arch (arch, error))
    return g_prefix_error (error, "configure %s: ", options->in), FALSE;

  g_autofree char *purge = incremental->purge != NULL
                           ? g_strjoinv (" ", (char **) incremental->purge) : g_strdup ("");
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) binds = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (argv, g_strdup ("/bin/sh"));
  g_ptr_array_add (argv, g_strdup ("-c"));
  g_ptr_array_add (argv, g_strdup (stage2_incremental_script));
  g_ptr_array_add (argv, g_strdup ("apt2ostree-configure-incremental"));
  g_ptr_array_add (argv, g_strdup (purge));
  for (guint i = 0; incremental->debs != NULL && incremental->debs[i] != NULL; i++)
    {
      char *dest = g_strdup_printf (DEBS_DIR "/%u.deb", i);
      g_ptr_array_add (binds, g_strdup (incremental->debs[i]));
      g_ptr_array_add (binds, dest);
      g_ptr_array_add (argv, g_strdup (dest));
    }
  g_ptr_array_add (argv, NULL);
  g_ptr_array_add (binds, NULL);

  g_autofree char *hooks = options->hooks != NULL ? g_strjoinv ("\n", (char **) options->hooks) : NULL;
  const char *setenv[] = { "APT2OSTREE_HOOKS", hooks != NULL ? hooks : "", NULL };
  /* What tells this image from a from-scratch one: where it started. */
  GVariantBuilder meta;
  g_variant_builder_init (&meta, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&meta, "{sv}", STAGE2_META_INCREMENTAL, g_variant_new_string (prev->commit));
  g_variant_builder_add (&meta, "{sv}", STAGE2_META_INCREMENTAL_STAGE1,
                         g_variant_new_string (stage1->commit));
  g_autoptr(GVariant) metadata = g_variant_ref_sink (g_variant_builder_end (&meta));

  ModTimings timings = { 0, };
  ModOptions mod = {
    .in = prev->commit,
    .out_ref = options->out_ref,
    .chroot = TRUE,
    .ro_binds = (const char *const *) binds->pdata,
    .setenv = setenv,
    .verbose = options->verbose,
    .argv = (char **) argv->pdata,
    .description = "the incremental stage-2 script (dpkg --purge, dpkg --unpack, hooks, "
                   "dpkg --configure -a)",
    .metadata = metadata,
    .keep_checkout = TRUE,
    .timings = &timings,
    .limits = options->limits,
    .progress = stage2_progress,
  };
  if (!mod_run (repo, &mod, out_commit, cancellable, error))
    return g_prefix_error (error, "configure %s incrementally from %s: ", options->in,
                           prev->commit), FALSE;
  report_timings (options, &timings);
  return TRUE;
}
