/* foreign.c — can this machine run the programs of an image's architecture? */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "sandbox/foreign.h"
#include "base/util.h"

#define ELF_HEADER_LEN 20  /* e_ident, e_type, e_machine */

typedef struct {
  const char *dpkg;    /* dpkg architecture */
  const char *qemu;    /* qemu's name, as in qemu-NAME-static and its binfmt handler */
  guint8 elf_class;    /* 1: 32 bits, 2: 64 bits */
  guint8 elf_data;     /* 1: little endian, 2: big endian */
  guint16 machine;     /* e_machine */
} ForeignArch;

static const ForeignArch arches[] = {
  { "amd64", "x86_64", 2, 1, 62 },
  { "i386", "i386", 1, 1, 3 },
  { "arm64", "aarch64", 2, 1, 183 },
  { "armhf", "arm", 1, 1, 40 },
  { "armel", "arm", 1, 1, 40 },
  { "ppc64el", "ppc64le", 2, 1, 21 },
  { "ppc64", "ppc64", 2, 2, 21 },
  { "s390x", "s390x", 2, 2, 22 },
  { "riscv64", "riscv64", 2, 1, 243 },
  { "mips64el", "mips64el", 2, 1, 8 },
  { "mipsel", "mipsel", 1, 1, 8 },
  { "loong64", "loongarch64", 2, 1, 258 },
};

static const ForeignArch *
lookup_arch (const char *dpkg)
{
  for (gsize i = 0; i < G_N_ELEMENTS (arches); i++)
    if (g_str_equal (arches[i].dpkg, dpkg))
      return &arches[i];
  return NULL;
}

const char *
foreign_qemu_name (const char *arch)
{
  const ForeignArch *a = lookup_arch (arch);
  return a != NULL ? a->qemu : NULL;
}

/* The first bytes of an ELF program of ARCH, of type E_TYPE (2: executable,
 * 3: shared object, which is what a PIE program is). */
static void
elf_header (const ForeignArch *arch, guint16 e_type, guint8 out[ELF_HEADER_LEN])
{
  memset (out, 0, ELF_HEADER_LEN);
  memcpy (out, "\177ELF", 4);
  out[4] = arch->elf_class;
  out[5] = arch->elf_data;
  out[6] = 1;  /* EV_CURRENT */
  gboolean little = arch->elf_data == 1;
  out[16] = little ? e_type & 0xff : e_type >> 8;
  out[17] = little ? e_type >> 8 : e_type & 0xff;
  out[18] = little ? arch->machine & 0xff : arch->machine >> 8;
  out[19] = little ? arch->machine >> 8 : arch->machine & 0xff;
}

/* Whether the ELF header of the running program says it is ARCH's. */
static gboolean
host_is (const ForeignArch *arch)
{
  guint8 host[ELF_HEADER_LEN], want[ELF_HEADER_LEN];
  FILE *self = fopen ("/proc/self/exe", "re");
  if (self == NULL)
    return FALSE;
  gsize len = fread (host, 1, ELF_HEADER_LEN, self);
  fclose (self);
  if (len < ELF_HEADER_LEN)
    return FALSE;
  elf_header (arch, 0, want);
  return host[4] == want[4] && host[5] == want[5] && host[18] == want[18] && host[19] == want[19];
}

/* One binfmt_misc handler, as its file under binfmt_misc/ describes it. */
typedef struct {
  char *name;
  gboolean enabled;
  char *interpreter;
  char *flags;
  guint offset;
  GBytes *magic;   /* NULL for extension handlers */
  GBytes *mask;    /* NULL: all ones */
} Handler;

static void
handler_free (Handler *h)
{
  g_free (h->name);
  g_free (h->interpreter);
  g_free (h->flags);
  g_clear_pointer (&h->magic, g_bytes_unref);
  g_clear_pointer (&h->mask, g_bytes_unref);
  g_free (h);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Handler, handler_free)

static GBytes *
parse_hex (const char *hex)
{
  gsize n = strlen (hex) / 2;
  g_autofree guint8 *bytes = g_new0 (guint8, n + 1);
  for (gsize i = 0; i < n; i++)
    {
      int hi = g_ascii_xdigit_value (hex[2 * i]), lo = g_ascii_xdigit_value (hex[2 * i + 1]);
      if (hi < 0 || lo < 0)
        return NULL;
      bytes[i] = (guint8) (hi << 4 | lo);
    }
  return g_bytes_new_take (g_steal_pointer (&bytes), n);
}

static Handler *
handler_load (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  g_autoptr(Handler) h = g_new0 (Handler, 1);
  h->name = g_strdup (name);
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      const char *line = *l;
      if (g_str_equal (line, "enabled"))
        h->enabled = TRUE;
      else if (g_str_has_prefix (line, "interpreter "))
        h->interpreter = g_strdup (line + strlen ("interpreter "));
      else if (g_str_has_prefix (line, "flags: "))
        h->flags = g_strdup (line + strlen ("flags: "));
      else if (g_str_has_prefix (line, "offset "))
        h->offset = (guint) g_ascii_strtoull (line + strlen ("offset "), NULL, 10);
      else if (g_str_has_prefix (line, "magic "))
        h->magic = parse_hex (line + strlen ("magic "));
      else if (g_str_has_prefix (line, "mask "))
        h->mask = parse_hex (line + strlen ("mask "));
    }
  return g_steal_pointer (&h);
}

/* Whether H hands a file starting with HEADER to its interpreter, as the
 * kernel decides it: every magic byte equal under the mask. */
static gboolean
handler_matches (const Handler *h, const guint8 header[ELF_HEADER_LEN])
{
  if (h->magic == NULL)
    return FALSE;
  gsize n;
  const guint8 *magic = g_bytes_get_data (h->magic, &n);
  const guint8 *mask = h->mask != NULL ? g_bytes_get_data (h->mask, NULL) : NULL;
  if (n == 0 || h->offset + n > ELF_HEADER_LEN
      || (h->mask != NULL && g_bytes_get_size (h->mask) < n))
    return FALSE;
  for (gsize i = 0; i < n; i++)
    {
      guint8 m = mask != NULL ? mask[i] : 0xff;
      if (((header[h->offset + i] ^ magic[i]) & m) != 0)
        return FALSE;
    }
  return TRUE;
}

/* The handler that runs ARCH's programs (enabled ones first), or NULL. */
static Handler *
find_handler (const char *dir, const ForeignArch *arch, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GDir) d = g_dir_open (dir, 0, &local_error);
  if (d == NULL)
    return util_fail (error, "%s: %s", dir, local_error->message), NULL;

  guint8 exec[ELF_HEADER_LEN], dyn[ELF_HEADER_LEN];
  elf_header (arch, 2, exec);
  elf_header (arch, 3, dyn);
  g_autoptr(Handler) disabled = NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, (GCompareFunc) g_strcmp0);
  for (guint i = 0; i < names->len; i++)
    {
      name = names->pdata[i];
      if (g_str_equal (name, "register") || g_str_equal (name, "status"))
        continue;
      g_autoptr(Handler) h = handler_load (dir, name);
      if (h == NULL || !handler_matches (h, exec) || !handler_matches (h, dyn))
        continue;
      if (h->enabled)
        return g_steal_pointer (&h);
      if (disabled == NULL)
        disabled = g_steal_pointer (&h);
    }
  return g_steal_pointer (&disabled);
}

static gboolean
binfmt_enabled (const char *dir)
{
  g_autofree char *path = g_build_filename (dir, "status", NULL);
  g_autofree char *status = NULL;
  return g_file_get_contents (path, &status, NULL, NULL) && g_str_has_prefix (status, "enabled");
}

gboolean
foreign_check_arch (const char *arch, GError **error)
{
  const ForeignArch *target = lookup_arch (arch);
  if (target == NULL)
    {
      /* Not a known name: only the host's own dpkg architecture is safe. */
      g_autofree char *host = NULL;
      g_spawn_command_line_sync ("dpkg --print-architecture", &host, NULL, NULL, NULL);
      if (host != NULL && g_str_equal (g_strstrip (host), arch))
        return TRUE;
      return util_fail (error, "the image's architecture \"%s\" is not one apt2ostree knows how "
                        "to run on this machine", arch);
    }
  if (host_is (target))
    return TRUE;

  const char *dir = g_getenv ("APT2OSTREE_BINFMT_DIR");
  if (dir == NULL)
    dir = "/proc/sys/fs/binfmt_misc";
  g_autofree char *how = g_strdup_printf ("apt-get install qemu-user-static binfmt-support && "
                                          "update-binfmts --enable qemu-%s", target->qemu);
  g_autofree char *register_path = g_build_filename (dir, "register", NULL);
  if (!g_file_test (register_path, G_FILE_TEST_EXISTS))
    return util_fail (error, "the image is %s, this machine cannot run %s programs: binfmt_misc "
                      "is not mounted at %s; run \"mount -t binfmt_misc binfmt_misc %s\" and "
                      "\"%s\"", arch, arch, dir, dir, how);
  if (!binfmt_enabled (dir))
    return util_fail (error, "the image is %s, this machine cannot run %s programs: binfmt_misc "
                      "is disabled (%s/status); run \"echo 1 > %s/status\"", arch, arch, dir, dir);

  g_autoptr(GError) local_error = NULL;
  g_autoptr(Handler) handler = find_handler (dir, target, &local_error);
  if (local_error != NULL)
    return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
  /* The kernel runs some foreign programs itself (i386 on amd64, 32-bit
   * arm on most arm64 machines): without a handler, let it try. */
  gboolean compat = (g_str_equal (target->qemu, "i386") && host_is (lookup_arch ("amd64")))
                    || (g_str_equal (target->qemu, "arm") && host_is (lookup_arch ("arm64")));
  if (handler == NULL && compat)
    return TRUE;
  if (handler == NULL)
    return util_fail (error, "the image is %s, this machine cannot run %s programs: no "
                      "binfmt_misc handler in %s runs them; install and register qemu-user: "
                      "\"%s\"", arch, arch, dir, how);
  if (!handler->enabled)
    return util_fail (error, "the image is %s: the binfmt_misc handler \"%s\" that runs %s "
                      "programs is disabled; run \"update-binfmts --enable %s\"", arch,
                      handler->name, arch, handler->name);
  if (handler->flags == NULL || strchr (handler->flags, 'F') == NULL)
    return util_fail (error, "the image is %s: the binfmt_misc handler \"%s\" has no F (fix "
                      "binary) flag, so its interpreter %s cannot be found inside the image's "
                      "sandbox; use qemu-user-static's handler, which has it: \"update-binfmts "
                      "--disable %s && %s\"", arch, handler->name,
                      handler->interpreter != NULL ? handler->interpreter : "(none)",
                      handler->name, how);
  return TRUE;
}
