// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Sets with timeouts: expired elements taken out of their maps.
 *
 * A program treats an element whose time is past as absent (codegen.c,
 * gen_expired()), but it keeps its place in the map: a set the rules add
 * to, full of expired elements, would refuse new ones. nf_tables' sets
 * collect theirs every second or so; here cgfw_sets__expire() does it,
 * which cgfw daemon calls every 2 seconds. An element is read, found
 * expired, read again and only then deleted: a rule that adds it again
 * before the second read makes a new one, which that read sees and
 * keeps. One added between the second read and the delete is lost (the
 * next packet adds it again); the maps have no delete-if-unchanged.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <libnftnl/set.h>

#include "base/ctx.h"
#include "bpf/desc.h"
#include "bpf/table.h"
#include "cgfw/cgfw.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool expired(int fd, const void *key, uint8_t *value,
		    uint32_t time_off, uint64_t now)
{
	struct cgfw_elem_time t;

	if (bpf_map_lookup_elem(fd, key, value))
		return false;
	memcpy(&t, value + time_off, sizeof(t));
	return t.expires && now >= t.expires;
}

/*
 * The expired elements of map @fd out (its values end in struct
 * cgfw_elem_time); *@n counts them.
 */
static int expire_map(int fd, size_t *n)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info), k = 0, cap = 0, i, time_off;
	uint8_t *key, *next, *value, *gone = NULL, *v;
	uint64_t now = mono_ns();
	int ret, more;

	ret = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (ret)
		return ret;
	if (info.type != BPF_MAP_TYPE_HASH ||
	    info.value_size < 8 + sizeof(struct cgfw_elem_time))
		return 0;	/* not a layout this cgfw made */
	time_off = info.value_size - sizeof(struct cgfw_elem_time);
	key = calloc(1, info.key_size);
	next = calloc(1, info.key_size);
	value = calloc(1, info.value_size);
	ret = key && next && value ? 0 : -ENOMEM;
	/* the keys first: deleting while walking a hash map restarts it */
	for (more = !ret && !bpf_map_get_next_key(fd, NULL, next); more;
	     more = !bpf_map_get_next_key(fd, key, next)) {
		memcpy(key, next, info.key_size);
		if (!expired(fd, key, value, time_off, now))
			continue;
		if (k == cap) {
			cap = cap ? 2 * cap : 64;
			v = realloc(gone, (size_t)cap * info.key_size);
			if (!v) {
				ret = -ENOMEM;
				break;
			}
			gone = v;
		}
		memcpy(gone + (size_t)k++ * info.key_size, key, info.key_size);
	}
	for (i = 0; !ret && i < k; i++) {
		v = gone + (size_t)i * info.key_size;
		if (expired(fd, v, value, time_off, now) &&
		    !bpf_map_delete_elem(fd, v))
			(*n)++;
	}
	free(gone);
	free(key);
	free(next);
	free(value);
	return ret;
}

/* The sets with timeouts of the bpf table @name. */
static int expire_table(const char *name, size_t *n)
{
	struct nftnl_set *s;
	struct desc d;
	bool timeouts;
	size_t i;
	int ret, fd;

	if (cgfw_bpf_running_desc(name, &d))
		return 0;	/* not a table now */
	for (i = 0, ret = 0; !ret && i < d.n_sets; i++) {
		s = nftnl_set_alloc();
		if (!s) {
			ret = -ENOMEM;
			break;
		}
		timeouts = nftnl_set_nlmsg_parse(d.sets[i].nlset, s) >= 0 &&
			   nftnl_set_get_u32(s, NFTNL_SET_FLAGS) &
			   NFT_SET_TIMEOUT;
		nftnl_set_free(s);
		fd = timeouts ? cgfw_bpf_table_map(name, d.sets[i].map_id) : -1;
		if (fd < 0)
			continue;
		ret = expire_map(fd, n);
		close(fd);
	}
	cgfw_desc_release(&d);
	return ret;
}

CGFW_API int cgfw_sets__expire(struct cgfw_ctx *ctx, size_t *removed)
{
	struct dirent *de;
	size_t n = 0;
	DIR *dir;
	int ret = 0, err;

	if (!ctx)
		return libcgfw_err(-EINVAL);
	cgfw_ctx_reset(ctx);
	dir = opendir(CGFW_PIN_ROOT);
	while (dir && (de = readdir(dir))) {	/* each table, whatever */
		err = de->d_name[0] == '.' ? 0 : expire_table(de->d_name, &n);
		if (err && !ret)
			ret = err;
	}
	if (dir)
		closedir(dir);
	if (removed)
		*removed = n;
	if (ret)
		cgfw_err(ctx, "cannot take the expired elements out of the bpf tables' sets: %s",
			 strerror(-ret));
	return libcgfw_err(ret);
}
