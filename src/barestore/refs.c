/* refs.c — ref files staged, then renamed into place; ref names checked
 * and read from a list file. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "barestore/refs.h"
#include "base/util.h"

typedef struct {
  int fd;
  char *ref;
} StagedRef;

struct RefsBatch {
  int repo_dfd;        /* not owned */
  int heads_dfd;
  char *repo_path;
  GArray *staged;      /* of StagedRef */
  guint max;           /* how many may wait as open files */
};

static void
staged_ref_clear (gpointer data)
{
  StagedRef *r = data;
  util_fd_close (&r->fd);
  g_free (r->ref);
}

RefsBatch *
refs_batch_new (int repo_dfd, const char *repo_path)
{
  RefsBatch *batch = g_new0 (RefsBatch, 1);
  batch->repo_dfd = repo_dfd;
  batch->heads_dfd = openat (repo_dfd, "refs/heads", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  batch->repo_path = g_strdup (repo_path);
  batch->staged = g_array_new (FALSE, FALSE, sizeof (StagedRef));
  g_array_set_clear_func (batch->staged, staged_ref_clear);
  batch->max = refs_max_staged ();
  return batch;
}

guint
refs_max_staged (void)
{
  struct rlimit nofile;
  return getrlimit (RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur > 256
             ? (guint) MIN (nofile.rlim_cur - 128, G_MAXUINT)
             : 0;
}

void
refs_batch_free (RefsBatch *batch)
{
  if (batch == NULL)
    return;
  util_fd_close (&batch->heads_dfd);
  g_array_unref (batch->staged);
  g_free (batch->repo_path);
  g_free (batch);
}

/* Make DIR (relative to DFD) and its parents, as OSTree makes a ref's. */
static void
make_dirs (int dfd, const char *dir)
{
  g_autofree char *path = g_strdup (dir);
  for (char *slash = strchr (path, '/');; slash = strchr (slash + 1, '/'))
    {
      if (slash != NULL)
        *slash = '\0';
      (void) mkdirat (dfd, path, 0777);
      if (slash == NULL)
        return;
      *slash = '/';
    }
}

gboolean
refs_batch_stage (RefsBatch *batch, const char *ref, const char *commit)
{
  if (commit == NULL || batch->heads_dfd < 0 || batch->staged->len >= batch->max)
    return FALSE;
  struct stat st;
  if (fstatat (batch->heads_dfd, ref, &st, AT_SYMLINK_NOFOLLOW) == 0 ? !S_ISREG (st.st_mode)
                                                                    : errno != ENOENT)
    return FALSE;
  g_autofree char *dir = g_path_get_dirname (ref);
  if (!g_str_equal (dir, "."))
    make_dirs (batch->heads_dfd, dir);
  util_autofd int fd = openat (batch->heads_dfd, dir, O_WRONLY | O_TMPFILE | O_CLOEXEC, 0644);
  g_autofree char *line = g_strconcat (commit, "\n", NULL);
  size_t len = strlen (line);
  if (fd < 0 || write (fd, line, len) != (ssize_t) len || fchmod (fd, 0644) < 0)
    return FALSE;
  StagedRef r = { fd, g_strdup (ref) };
  fd = -1;
  g_array_append_val (batch->staged, r);
  return TRUE;
}

static gboolean
ref_fail (RefsBatch *batch, const char *ref, int errsv, GError **error)
{
  return util_fail (error, "%s: writing ref %s: %s", batch->repo_path, ref, g_strerror (errsv));
}

/* Put the staged R in place: linked in under a temporary name in its
 * directory, then renamed over the ref. */
static gboolean
publish (RefsBatch *batch, StagedRef *r, gboolean *by_fd, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (r->ref);
  g_autofree char *tmp = NULL;
  for (int attempt = 0;; attempt++)
    {
      g_free (tmp);
      tmp = g_strdup_printf ("%s/tmp.%08x", dir, g_random_int ());
      if (util_link_tmpfile (r->fd, batch->heads_dfd, tmp, by_fd) == 0)
        break;
      if (errno != EEXIST || attempt == 100)
        return ref_fail (batch, r->ref, errno, error);
    }
  if (renameat (batch->heads_dfd, tmp, batch->heads_dfd, r->ref) < 0)
    {
      int errsv = errno;
      (void) unlinkat (batch->heads_dfd, tmp, 0);
      return ref_fail (batch, r->ref, errsv, error);
    }
  return TRUE;
}

gboolean
refs_batch_publish (RefsBatch *batch, GError **error)
{
  gboolean by_fd = TRUE;
  for (guint i = 0; i < batch->staged->len; i++)
    if (!publish (batch, &g_array_index (batch->staged, StagedRef, i), &by_fd, error))
      return FALSE;
  if (batch->staged->len > 0)
    (void) futimens (batch->repo_dfd, NULL);
  g_array_set_size (batch->staged, 0);
  return TRUE;
}

char *
refs_file_path (const char *repo, const char *ref)
{
  return repo != NULL ? g_build_filename (repo, "refs", "heads", ref, NULL)
                      : g_build_filename ("refs", "heads", ref, NULL);
}

gboolean
refs_read (int repo_dfd, const char *ref, char **out_commit)
{
  *out_commit = NULL;
  g_autofree char *path = refs_file_path (NULL, ref);
  util_autofd int fd = openat (repo_dfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT;
  struct stat st;
  char buf[80];
  ssize_t n;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || (n = read (fd, buf, sizeof buf - 1)) < 0)
    return FALSE;
  buf[n] = '\0';
  g_strchomp (buf);
  if (strlen (buf) != 64 || strspn (buf, "0123456789abcdef") != 64)
    return FALSE;
  *out_commit = g_strdup (buf);
  return TRUE;
}

gboolean
refs_check_name (const char *ref, GError **error)
{
  /* OSTree's rule (ostree_validate_rev()): components of word characters,
   * digits, "-", "." and "_", each starting with a word character or a
   * digit, joined by "/". */
  static GRegex *regex;
  static gsize once;
  if (g_once_init_enter (&once))
    {
      regex = g_regex_new ("^(?:[\\w\\d][-._\\w\\d]*/)*[\\w\\d][-._\\w\\d]*$", G_REGEX_DOLLAR_ENDONLY, 0, NULL);
      g_once_init_leave (&once, 1);
    }
  if (!g_utf8_validate (ref, -1, NULL))
    return util_fail (error, "\"%s\" is not a valid ref name: not valid UTF-8", ref);
  if (!g_regex_match (regex, ref, 0, NULL))
    return util_fail (error, "\"%s\" is not a valid ref name: Invalid ref name %s", ref, ref);
  return TRUE;
}

/* The largest list refs_read_list() reads: 650,000 package refs. */
#define REFS_LIST_MAX (64 * 1024 * 1024)

/* The word [START, END) of line LINE of the list SHOWN_PATH, checked. */
static gboolean
add_listed (GPtrArray *names, const char *start, const char *end, const char *shown_path,
            guint line, GError **error)
{
  g_autofree char *name = g_strndup (start, end - start);
  if (!refs_check_name (name, NULL))
    {
      g_autofree char *shown = util_shown_path (name);
      return util_fail (error, "%s:%u: \"%s\" is not a valid ref name", shown_path, line, shown);
    }
  g_ptr_array_add (names, g_steal_pointer (&name));
  return TRUE;
}

char **
refs_read_list (const char *path, GError **error)
{
  g_autofree char *shown_path = util_shown_path (path);
  g_autoptr(GBytes) bytes = util_read_file (path, REFS_LIST_MAX, error);
  if (bytes == NULL)
    return NULL;
  gsize size;
  const char *text = g_bytes_get_data (bytes, &size);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  guint line = 1;
  const char *word = NULL;
  for (gsize i = 0; i <= size; i++)
    {
      char c = i < size ? text[i] : '\n';
      if (c == '\0')
        return util_fail (error, "%s:%u: a NUL byte, which no ref name holds", shown_path,
                          line), NULL;
      gboolean space = c == ' ' || c == '\t' || c == '\n';
      if (!space && word == NULL)
        word = text + i;
      if (space && word != NULL
          && !add_listed (names, word, text + i, shown_path, line, error))
        return NULL;
      if (space)
        word = NULL;
      if (c == '\n')
        line++;
    }
  if (names->len == 0)
    return util_fail (error, "%s: lists no ref names", shown_path), NULL;
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&names), FALSE);
}
