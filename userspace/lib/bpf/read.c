// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the bpf backend runs, read back into the model: each link pinned
 * for a table, the program attached through it, and the description that
 * program carries (bpf/desc.h); counters, quotas and set elements from the
 * maps that program uses. Nothing here is kept apart from what runs.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <libmnl/libmnl.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "bpf/desc.h"
#include "bpf/table.h"
#include "backend_ops.h"
#include "model/model.h"

/* The ids of the maps a program uses; a malloc()ed array. */
static int prog_maps(int prog, uint32_t **ids, uint32_t *n)
{
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);
	int ret;

	*ids = NULL;
	ret = bpf_obj_get_info_by_fd(prog, &info, &len);
	if (ret)
		return ret;
	*n = info.nr_map_ids;
	*ids = calloc(*n + 1, sizeof(**ids));
	if (!*ids)
		return -ENOMEM;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = *n;
	info.map_ids = (uintptr_t)*ids;
	len = sizeof(info);
	ret = bpf_obj_get_info_by_fd(prog, &info, &len);
	if (ret) {
		free(*ids);
		*ids = NULL;
	}
	return ret;
}

int cgfw_bpf_prog_desc(int prog, struct desc *d)
{
	struct bpf_map_info info;
	uint32_t *ids, n, i, len;
	int fd, ret;

	ret = prog_maps(prog, &ids, &n);
	if (ret)
		return ret;
	ret = -ENOENT;
	for (i = 0; i < n && ret == -ENOENT; i++) {
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_MAP_TYPE_ARRAY &&
		    !strcmp(info.name, CGFW_DESC_MAP_NAME))
			ret = cgfw_desc_load(fd, d);
		close(fd);
	}
	free(ids);
	return ret;
}

/* One link of a table: its key and what it runs. */
struct link {
	enum cgfw_dir dir;
	uint64_t cgid;		/* from the pin's name */
	uint64_t attached;	/* the cgroup the kernel says: 0, removed */
	int prog;
	struct desc d;
	bool has_desc;
};

struct links {
	struct link *v;
	size_t n;
};

static void links_release(struct links *ls)
{
	size_t i;

	for (i = 0; i < ls->n; i++) {
		if (ls->v[i].prog >= 0)
			close(ls->v[i].prog);
		if (ls->v[i].has_desc)
			cgfw_desc_release(&ls->v[i].d);
	}
	free(ls->v);
	memset(ls, 0, sizeof(*ls));
}

static int read_links(const char *dir, struct links *ls)
{
	struct bpf_link_info info;
	char path[PATH_MAX + 256], d_s[16];
	unsigned long long cgid;
	struct dirent *de;
	struct link *l;
	uint32_t len;
	int fd;
	DIR *d = opendir(dir);

	memset(ls, 0, sizeof(*ls));
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (sscanf(de->d_name, "link-%15[a-z]-%llu", d_s, &cgid) != 2)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		l = realloc(ls->v, (ls->n + 1) * sizeof(*l));
		if (!l) {
			close(fd);
			closedir(d);
			return -ENOMEM;
		}
		ls->v = l;
		l = &l[ls->n++];
		memset(l, 0, sizeof(*l));
		l->dir = strcmp(d_s, "egress") ? CGFW_INGRESS : CGFW_EGRESS;
		l->cgid = cgid;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		l->prog = -1;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			l->attached = info.cgroup.cgroup_id;
			l->prog = bpf_prog_get_fd_by_id(info.prog_id);
		}
		close(fd);
		l->has_desc = l->prog >= 0 && !cgfw_bpf_prog_desc(l->prog,
								   &l->d);
	}
	closedir(d);
	return 0;
}

/* The description that most links run (the first of them). */
static const struct link *primary(const struct links *ls)
{
	size_t i;

	for (i = 0; i < ls->n; i++)
		if (ls->v[i].has_desc)
			return &ls->v[i];
	return NULL;
}

static const struct link *link_of(const struct links *ls, uint32_t dir,
				  uint64_t cgid)
{
	size_t i;

	for (i = 0; i < ls->n; i++)
		if (ls->v[i].dir == dir && ls->v[i].cgid == cgid)
			return &ls->v[i];
	return NULL;
}

/* The fd of map @id, if the program @prog uses it. */
static int map_of_prog(int prog, uint32_t id)
{
	uint32_t *ids, n, i;
	int fd = -ENOENT;

	if (prog_maps(prog, &ids, &n))
		return -ENOENT;
	for (i = 0; i < n; i++)
		if (ids[i] == id)
			fd = bpf_map_get_fd_by_id(id);
	free(ids);
	return fd;
}

/* The kernel's "memlock" of a program's or a map's fd: 0 if it has none. */
static uint64_t memlock_of(int fd)
{
	char path[64], line[128];
	uint64_t v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %" SCNu64, &v) == 1)
			break;
	fclose(f);
	return v;
}

/*
 * What the kernel holds for the table: its programs of this generation
 * and every map they use, each once (a set or a quota's state is shared
 * by the programs of the table).
 */
static uint64_t table_memory(const struct links *ls, uint64_t gen)
{
	uint32_t *ids, *seen = NULL, n, n_seen = 0, i, j;
	uint64_t sum = 0;
	size_t k;
	int fd;

	for (k = 0; k < ls->n; k++) {
		if (!ls->v[k].has_desc || ls->v[k].d.gen != gen)
			continue;
		sum += memlock_of(ls->v[k].prog);
		if (prog_maps(ls->v[k].prog, &ids, &n))
			continue;
		for (i = 0; i < n; i++) {
			uint32_t *more;

			for (j = 0; j < n_seen && seen[j] != ids[i]; j++)
				;
			if (j < n_seen)
				continue;
			more = realloc(seen, (n_seen + 1) * sizeof(*seen));
			if (!more)
				break;
			seen = more;
			seen[n_seen++] = ids[i];
			fd = bpf_map_get_fd_by_id(ids[i]);
			if (fd >= 0) {
				sum += memlock_of(fd);
				close(fd);
			}
		}
		free(ids);
	}
	free(seen);
	return sum;
}

static int possible_cpus(void)
{
	static const char *path = "/sys/devices/system/cpu/possible";
	char buf[128], *p;
	int n = 0, a, b;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	for (p = strtok(buf, ","); p; p = strtok(NULL, ",")) {
		if (sscanf(p, "%d-%d", &a, &b) == 2)
			n = b + 1 > n ? b + 1 : n;
		else if (sscanf(p, "%d", &a) == 1)
			n = a + 1 > n ? a + 1 : n;
	}
	return n ? n : -EINVAL;
}

/*
 * An array map whose values are @size bytes: a description names the
 * maps to read, and a wrong one must not be read into a small buffer.
 */
static bool map_fits(int fd, uint32_t type, uint32_t size)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);

	return !bpf_obj_get_info_by_fd(fd, &info, &len) &&
	       info.type == type && info.value_size == size;
}

static bool value_fits(int fd, uint32_t size)
{
	return map_fits(fd, BPF_MAP_TYPE_ARRAY, size);
}

/* Packets and bytes of one slot of a per-CPU counters map, summed. */
static int read_slot(int fd, uint32_t slot, struct model_counter *c)
{
	int ncpu = possible_cpus(), i, ret;
	uint64_t *v;

	if (ncpu <= 0)
		return ncpu;
	if (!map_fits(fd, BPF_MAP_TYPE_PERCPU_ARRAY, 16))
		return -EINVAL;
	v = calloc(ncpu, 16);
	ret = v ? bpf_map_lookup_elem(fd, &slot, v) : -ENOMEM;
	for (i = 0; !ret && i < ncpu; i++) {
		c->packets += v[2 * i];
		c->bytes += v[2 * i + 1];
	}
	c->present = true;
	free(v);
	return ret;
}

/* The model rule @rule (-1: the policy) of chain @chain. */
static struct model_counter *counter_of(struct model_table *mt,
					uint32_t chain, int32_t rule)
{
	struct model_chain *c = &mt->chains[chain];

	if (rule < 0)
		return &c->policy_counter;
	return (size_t)rule < c->n_rules ? &c->rules[rule].counter : NULL;
}

/* Counters of the slots of the program of @l. */
static void add_counters(struct model_table *mt, const struct link *l)
{
	const struct desc *d = &l->d;
	struct model_counter *c;
	size_t i, p;
	int fd;

	for (p = 0; p < d->n_progs; p++) {
		if (d->progs[p].dir != l->dir ||
		    d->progs[p].cgroup_id != l->cgid)
			continue;
		fd = map_of_prog(l->prog, d->progs[p].counters_id);
		if (fd < 0)
			continue;
		for (i = 0; i < d->n_slots; i++) {
			if (d->slots[i].prog != p)
				continue;
			c = counter_of(mt, d->slots[i].chain, d->slots[i].rule);
			if (c)
				read_slot(fd, d->slots[i].slot, c);
		}
		close(fd);
	}
}

static void add_quotas(struct model_table *mt, const struct link *l)
{
	const struct desc *d = &l->d;
	struct model_chain *c;
	struct model_rule *r;
	uint64_t used;
	size_t i;
	int fd;

	for (i = 0; i < d->n_quotas; i++) {
		c = &mt->chains[d->quotas[i].chain];
		if (d->quotas[i].rule < 0 ||
		    (size_t)d->quotas[i].rule >= c->n_rules)
			continue;
		r = &c->rules[d->quotas[i].rule];
		fd = map_of_prog(l->prog, d->quotas[i].map_id);
		if (fd < 0)
			continue;
		if (value_fits(fd, sizeof(used)) &&
		    !bpf_map_lookup_elem(fd, &d->quotas[i].slot, &used)) {
			/* as nft reports it: at most the quota */
			r->has_quota = true;
			r->quota_used = used < d->quotas[i].bytes ? used :
					d->quotas[i].bytes;
		}
		close(fd);
	}
}

/* The log statements' records lost (no reader, a full ring buffer). */
static void add_log_lost(struct model_table *mt, const struct link *l)
{
	const struct desc *d = &l->d;
	uint64_t lost;
	size_t i;
	int fd;

	for (i = 0; i < d->n_logs; i++) {
		mt->logs = true;
		fd = map_of_prog(l->prog, d->logs[i].lost_id);
		if (fd < 0)
			continue;
		if (value_fits(fd, sizeof(lost)) &&
		    !bpf_map_lookup_elem(fd, &d->logs[i].id, &lost))
			mt->log_lost += lost;
		close(fd);
	}
}

/* The named counters, quotas and limits, with the state they have now. */
static int add_objs(struct model_table *mt, const struct link *l)
{
	const struct desc *d = &l->d;
	const struct desc_obj *o;
	struct model_obj *mo;
	uint64_t v[2];
	size_t i;
	int fd;

	for (i = 0; i < d->n_objs; i++) {
		o = &d->objs[i];
		mo = cgfw_model_add_obj(mt);
		if (!mo || cgfw_strdup(&mo->name, o->name))
			return -ENOMEM;
		mo->type = o->type;
		memset(v, 0, sizeof(v));
		fd = map_of_prog(l->prog, o->map_id);
		if (fd >= 0 && o->type != NFT_OBJECT_LIMIT &&
		    value_fits(fd, o->type == NFT_OBJECT_COUNTER ? 16 : 8))
			bpf_map_lookup_elem(fd, &o->slot, v);
		if (fd >= 0)
			close(fd);
		switch (o->type) {
		case NFT_OBJECT_COUNTER:
			mo->counter.packets = v[0];
			mo->counter.bytes = v[1];
			break;
		case NFT_OBJECT_QUOTA:
			/* as nft reports it: at most the quota */
			mo->quota.bytes = o->bytes;
			mo->quota.used = v[0] < o->bytes ? v[0] : o->bytes;
			mo->quota.over = o->flags & NFT_QUOTA_F_INV;
			break;
		case NFT_OBJECT_LIMIT:
			mo->limit.rate = o->bytes;
			mo->limit.unit = o->unit;
			mo->limit.burst = o->burst;
			mo->limit.bytes = o->limit_type == NFT_LIMIT_PKT_BYTES;
			mo->limit.over = o->flags & NFT_LIMIT_F_INV;
			break;
		}
	}
	return 0;
}

/* ---- sets ---- */

/* The set's attributes from its NEWSET message in the description. */
static struct nftnl_set *set_of(const struct desc_set *ds)
{
	struct nftnl_set *s = nftnl_set_alloc();

	if (s && nftnl_set_nlmsg_parse(ds->nlset, s) < 0) {
		nftnl_set_free(s);
		s = NULL;
	}
	return s;
}

/* One map entry as an element: a key, a prefix or a box as an interval. */
static int map_elem(struct model_set *ms, const struct desc *d,
		    const uint8_t *key, const uint8_t *value, bool lpm)
{
	struct model_elem *e = cgfw_model_add_elem(ms);
	uint32_t klen = ms->key_len, plen, chain;
	cgfw_u128 lo, mask;
	int32_t verdict;

	if (e)
		e->key = malloc(klen);
	if (!e || !e->key)
		return -ENOMEM;
	if (ms->flags & NFT_SET_INTERVAL && ms->flags & NFT_SET_CONCAT) {
		/* a box: its first key; the value, its last, then the data */
		memcpy(e->key, key, klen);
		e->key_end = malloc(klen);
		if (!e->key_end)
			return -ENOMEM;
		memcpy(e->key_end, value, klen);
		value += klen;
	} else if (lpm) {
		memcpy(&plen, key, 4);
		memcpy(e->key, key + 4, klen);
		e->key_end = malloc(klen);
		if (!e->key_end)
			return -ENOMEM;
		lo = cgfw_be_get(e->key, klen);
		mask = plen >= klen * 8 ? 0 :
		       (((cgfw_u128)1 << (klen * 8 - plen)) - 1);
		cgfw_be_put(e->key_end, klen, lo | mask);
	} else {
		memcpy(e->key, key, klen);
	}
	if (!(ms->flags & NFT_SET_MAP))
		return 0;
	if (ms->data_type == NFT_DATA_VERDICT) {
		memcpy(&verdict, value, 4);
		memcpy(&chain, value + 4, 4);
		e->verdict = verdict;
		if ((verdict == NFT_JUMP || verdict == NFT_GOTO) &&
		    chain < d->n_chains &&
		    cgfw_strdup(&e->chain, d->chains[chain].name))
			return -ENOMEM;
		return 0;
	}
	e->data = malloc(ms->data_len);
	if (!e->data)
		return -ENOMEM;
	memcpy(e->data, value, ms->data_len);
	return 0;
}

/* CLOCK_MONOTONIC in ns, the clock of bpf_ktime_get_ns() */
static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * An element's times, as nf_tables dumps them: false if it has expired
 * (nft lists it no more); its timeout only if not the set's.
 */
static bool elem_times(const struct model_set *ms, const uint8_t *value,
		       uint32_t time_off, uint64_t now, struct model_elem *e)
{
	struct cgfw_elem_time t;

	memcpy(&t, value + time_off, sizeof(t));
	if (t.expires && now >= t.expires)
		return false;
	e->timeout = t.timeout != ms->timeout ? t.timeout : 0;
	e->expires = t.expires ? (t.expires - now + 999999) / 1000000 : 0;
	return true;
}

static int add_set(struct model_table *mt, const struct desc *d,
		   const struct desc_set *ds, int prog)
{
	struct model_set *ms = cgfw_model_add_set(mt);
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	struct nftnl_set *s;
	uint8_t *key = NULL, *next = NULL, *value = NULL;
	uint32_t time_off = 0;
	int fd, ret, more;
	uint64_t now;

	if (!ms)
		return -ENOMEM;
	s = set_of(ds);
	if (!s)
		return -EINVAL;
	ret = cgfw_model_set_from_nftnl(ms, s);
	nftnl_set_free(s);
	fd = ret ? -1 : map_of_prog(prog, ds->map_id);
	if (ret || fd < 0)
		return ret;
	ret = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (!ret) {
		ms->capacity = info.max_entries;
		if (asprintf(&ms->where, "bpf map id %u (%s)", info.id,
			     info.type == BPF_MAP_TYPE_LPM_TRIE ? "LPM trie" :
			     ms->flags & NFT_SET_INTERVAL &&
			     ms->flags & NFT_SET_CONCAT ?
			     "hash, read by cgfw: the programs compare with the boxes they were made with" :
			     "hash") < 0)
			ms->where = NULL;
		key = calloc(1, info.key_size);
		next = calloc(1, info.key_size);
		value = calloc(1, info.value_size + 8);
		ret = key && next && value && ms->where ? 0 : -ENOMEM;
	}
	/* a set with timeouts: its values end in struct cgfw_elem_time */
	if (!ret && ms->flags & NFT_SET_TIMEOUT &&
	    info.value_size >= 8 + sizeof(struct cgfw_elem_time))
		time_off = info.value_size - sizeof(struct cgfw_elem_time);
	now = mono_ns();
	for (more = !ret && !bpf_map_get_next_key(fd, NULL, next); more;
	     more = !bpf_map_get_next_key(fd, key, next)) {
		memcpy(key, next, info.key_size);
		if (bpf_map_lookup_elem(fd, key, value))
			continue;	/* deleted meanwhile */
		ret = map_elem(ms, d, key, value,
			       info.type == BPF_MAP_TYPE_LPM_TRIE);
		if (ret)
			break;
		if (time_off &&
		    !elem_times(ms, value, time_off, now,
				&ms->elems[ms->n_elems - 1]))
			cgfw_model_drop_elem(ms);
	}
	free(key);
	free(next);
	free(value);
	close(fd);
	return ret;
}

/* ---- the table ---- */

/*
 * A note if the table's programs read ct and its conntrack keeper is
 * gone (bpf/keeper.c): nf_conntrack may not track this namespace then.
 */
static int keeper_note(struct cgfw_ctx *ctx, struct model_table *mt,
		       const struct desc *d)
{
	size_t mark = cgfw_err_mark(ctx);
	int kept;

	if (!d->conntrack || mt->note)
		return 0;
	kept = cgfw_bpf_ct_kept(ctx, mt->name);
	if (kept == 1)
		return 0;
	cgfw_err_drop(ctx, mark);
	mt->degraded = true;
	if ((kept ?
	     asprintf(&mt->note, "its ct rules need connection tracking; cgfw cannot tell whether its keeper, table inet cgfw-ct-%s, is there (%s)",
		      mt->name, strerror(-kept)) :
	     asprintf(&mt->note, "its ct rules read no connection tracking: their keeper, table inet cgfw-ct-%s, is gone (nft flush ruleset?), and unless something else uses conntrack here every packet reads as ct state invalid; apply the table again",
		      mt->name)) < 0) {
		mt->note = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int to_model(struct cgfw_ctx *ctx, const char *name, const char *dir,
		    const struct links *ls, struct cgfw_listing *l)
{
	struct model_table *mt = cgfw_model_add_table(l);
	const struct link *p = primary(ls), *k;
	const struct desc *d;
	struct model_chain *mc;
	struct model_rule *mr;
	size_t i;
	int ret = 0;

	if (!mt)
		return -ENOMEM;
	mt->backend = "bpf";
	mt->name = strdup(name);
	mt->kernel_name = strdup(dir);
	if (!mt->name || !mt->kernel_name)
		return -ENOMEM;
	if (!p) {
		mt->note = strdup("made by an older cgfw, whose programs carry no description: apply it again");
		return mt->note ? 0 : -ENOMEM;
	}
	d = &p->d;
	mt->generation = d->gen;
	for (i = 0; i < ls->n; i++) {
		if (ls->v[i].has_desc && ls->v[i].d.gen == d->gen)
			continue;
		mt->note = strdup("an apply was interrupted: some cgroups run the programs of another generation of this table; the next cgfw command finishes it");
		if (!mt->note)
			return -ENOMEM;
		break;
	}
	ret = keeper_note(ctx, mt, d);
	if (ret)
		return ret;
	for (i = 0; i < d->n_chains; i++) {
		const struct desc_chain *dc = &d->chains[i];

		mc = cgfw_model_add_chain(mt);
		if (!mc || cgfw_strdup(&mc->name, dc->name))
			return -ENOMEM;
		if (!dc->base)
			continue;
		mc->base = true;
		mc->policy_counter.present = true;	/* reached or not */
		mc->dir = dc->dir;
		mc->priority = dc->priority;
		mc->policy = dc->policy;
		mc->cgroup_id = dc->cgroup_id;
		mc->cgroup_path = strdup(dc->cgroup_path);
		if (!mc->cgroup_path)
			return -ENOMEM;
		k = link_of(ls, dc->dir, dc->cgroup_id);
		/* attached, to a cgroup that is still there at its path */
		mc->binding = k && k->attached == dc->cgroup_id ?
			      cgfw_model_binding_of(dc->cgroup_path,
						    dc->cgroup_id) : MODEL_STALE;
	}
	for (i = 0; i < d->n_rules; i++) {
		mr = cgfw_model_add_rule(&mt->chains[d->rules[i].chain]);
		if (!mr || cgfw_strdup(&mr->text, d->rules[i].text))
			return -ENOMEM;
		/* a rule no program reaches counts nothing */
		mr->counter.present = d->rules[i].counter;
		mr->has_quota = d->rules[i].quota;
	}
	if (l->bindings_only)
		return 0;
	/* counters and quotas: each program's own */
	for (i = 0; i < ls->n; i++) {
		if (!ls->v[i].has_desc || ls->v[i].d.gen != d->gen)
			continue;
		add_counters(mt, &ls->v[i]);
	}
	add_quotas(mt, p);
	add_log_lost(mt, p);
	ret = add_objs(mt, p);
	mt->memory = table_memory(ls, d->gen);
	for (i = 0; !ret && i < d->n_sets; i++)
		ret = add_set(mt, d, &d->sets[i], p->prog);
	return ret;
}

static void table_dir(char *buf, size_t size, const char *table)
{
	snprintf(buf, size, CGFW_PIN_ROOT "/%s", table);
}

int cgfw_bpf_list(struct cgfw_ctx *ctx, const char *name,
		  struct cgfw_listing *l)
{
	struct links ls;
	struct dirent *de;
	char dir[PATH_MAX];
	DIR *d = opendir(CGFW_PIN_ROOT);
	int ret = 0;

	if (!d)
		return 0;
	while (!ret && (de = readdir(d))) {
		if (de->d_name[0] == '.' || (name && strcmp(name, de->d_name)))
			continue;
		table_dir(dir, sizeof(dir), de->d_name);
		ret = read_links(dir, &ls);
		if (!ret && ls.n)
			ret = to_model(ctx, de->d_name, dir, &ls, l);
		links_release(&ls);
		if (ret)
			cgfw_err(ctx, "cannot read the pins of %s: %s", dir,
				 strerror(-ret));
	}
	closedir(d);
	return ret;
}

int cgfw_bpf_running_desc(const char *name, struct desc *d)
{
	const struct link *p;
	char dir[PATH_MAX];
	struct links ls;
	int ret;

	if (strchr(name, '/') || name[0] == '.')
		return -ENOENT;
	table_dir(dir, sizeof(dir), name);
	ret = read_links(dir, &ls);
	if (ret)
		return ret == -ENOTDIR ? -ENOENT : ret;
	p = primary(&ls);
	if (!p) {
		links_release(&ls);
		return -ENOENT;
	}
	*d = p->d;
	ls.v[p - ls.v].has_desc = false;	/* it is the caller's now */
	links_release(&ls);
	return 0;
}

int cgfw_bpf_tables(struct cgfw_ctx *ctx, struct backend_table **out,
		    size_t *n)
{
	struct backend_table *v = NULL, *nv;
	struct dirent *de;
	struct desc d;
	DIR *dir = opendir(CGFW_PIN_ROOT);
	int ret = 0;

	(void)ctx;
	*n = 0;
	while (dir && !ret && (de = readdir(dir))) {
		if (de->d_name[0] == '.' ||
		    cgfw_bpf_running_desc(de->d_name, &d))
			continue;
		nv = realloc(v, (*n + 1) * sizeof(*v));
		if (!nv) {
			ret = -ENOMEM;
		} else {
			v = nv;
			v[*n].name = strdup(de->d_name);
			v[*n].made_by = (struct cgfw_apply_info){
				.gen = d.gen, .nft_family = d.with_nft,
				.bpf = true,
			};
			ret = v[*n].name ? 0 : -ENOMEM;
			(*n)++;
		}
		cgfw_desc_release(&d);
	}
	if (dir)
		closedir(dir);
	if (ret) {
		cgfw_backend_tables_free(v, *n);
		*n = 0;
		return ret;
	}
	*out = v;
	return 0;
}

int cgfw_bpf_set_object(struct cgfw_ctx *ctx, const char *table,
			const char *set, struct nftnl_set **out)
{
	struct desc d;
	size_t i;
	int ret;

	(void)ctx;
	ret = cgfw_bpf_running_desc(table, &d);
	if (ret)
		return ret;
	ret = -ENOENT;
	for (i = 0; i < d.n_sets && ret == -ENOENT; i++) {
		if (strcmp(d.sets[i].name, set))
			continue;
		*out = set_of(&d.sets[i]);
		ret = *out ? 0 : -EINVAL;
	}
	cgfw_desc_release(&d);
	return ret;
}

int cgfw_bpf_table_map(const char *table, uint32_t id)
{
	char dir[PATH_MAX];
	struct links ls;
	size_t i;
	int fd = -ENOENT;

	table_dir(dir, sizeof(dir), table);
	if (read_links(dir, &ls))
		return -ENOENT;
	for (i = 0; i < ls.n && fd < 0; i++)
		if (ls.v[i].prog >= 0)
			fd = map_of_prog(ls.v[i].prog, id);
	links_release(&ls);
	return fd;
}
