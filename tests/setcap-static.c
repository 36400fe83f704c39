/* setcap-static.c — a fixture of tests/test-dpkg-differential-configured.sh:
 * "setcap-static CAP FILE" gives FILE the capability numbered CAP,
 * permitted and effective, as libcap2-bin's "setcap cap_xxx=ep FILE" does.
 * dpkg does not carry xattrs from data.tar, so packages set capabilities
 * from their postinst; the test's base image has no libcap2-bin, so its
 * package ships this program, linked statically, to run there. */
#define _DEFAULT_SOURCE /* htole32 */
#include <endian.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

int
main (int argc, char **argv)
{
  if (argc != 3)
    {
      fprintf (stderr, "usage: setcap-static CAP FILE\n");
      return 2;
    }
  unsigned long cap = strtoul (argv[1], NULL, 10);
  if (cap > CAP_LAST_CAP)
    {
      fprintf (stderr, "setcap-static: %s: no such capability\n", argv[1]);
      return 2;
    }

  struct vfs_cap_data data;
  memset (&data, 0, sizeof data);
  data.magic_etc = htole32 (VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE);
  data.data[cap / 32].permitted = htole32 ((uint32_t) 1 << (cap % 32));
  if (setxattr (argv[2], "security.capability", &data, XATTR_CAPS_SZ_2, 0) != 0)
    {
      perror (argv[2]);
      return 1;
    }
  return 0;
}
