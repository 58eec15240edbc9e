// SPDX-License-Identifier: LGPL-2.1-or-later
/* The mounts this process sees: /proc/self/mountinfo, read in one place. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "base/mounts.h"

/* mountinfo escapes blanks and backslashes as \ooo. */
static void unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (s[1] - '0') * 64 + (s[2] - '0') * 8 +
			       (s[3] - '0');
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

int cgfw_mount_find(const char *fstype, unsigned long magic, char *buf,
		    size_t size, char *root)
{
	char line[4096], r[PATH_MAX], mnt[PATH_MAX], *sep;
	size_t flen = strlen(fstype);
	unsigned int maj, min;
	struct statfs sfs;
	struct stat st;
	int ret = -ENOENT;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - TYPE ... */
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, fstype, flen) || sep[3 + flen] != ' ')
			continue;
		if (sscanf(line, "%*u %*u %u:%u %4095s %4095s", &maj, &min,
			   r, mnt) != 4)
			continue;
		unescape(r);
		unescape(mnt);
		if (statfs(mnt, &sfs) || (unsigned long)sfs.f_type != magic)
			continue;
		if (stat(mnt, &st) || st.st_dev != makedev(maj, min))
			continue;
		if (strlen(mnt) >= size) {
			ret = -ENAMETOOLONG;
			continue;
		}
		strcpy(buf, mnt);
		if (root)
			strcpy(root, r);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}
