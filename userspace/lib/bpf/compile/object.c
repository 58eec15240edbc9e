// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The programs as an ELF object that libbpf (bpftool prog loadall) loads:
 *
 *	cgroup_skb/egress, cgroup_skb/ingress	the programs, one function
 *						symbol each
 *	.relcgroup_skb/...			map references (R_BPF_64_64)
 *	.maps					BTF-defined maps (type,
 *						max_entries, key_size,
 *						value_size, map_flags)
 *	.rodata					the maps read in place (the
 *						classifier's blob), their
 *						contents: libbpf makes the
 *						map, fills and freezes it
 *	license, .BTF, .symtab, .strtab
 *
 * libbpf cannot carry the contents of hash maps and LPM tries in an
 * object: the caller gets the bpftool commands that fill them (sets, the
 * description; none are needed for the verdicts of a ruleset without
 * named sets).
 *
 * The BTF is built once (cgfw_bpf_btf()) for both paths: the object's
 * .BTF, and the BTF that apply and --pin load for a limit's state, whose
 * value holds a bpf_spin_lock. So what -o writes and what apply loads are
 * the same maps.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <libnftnl/set.h>

#include "bpf/table.h"

#ifndef EM_BPF
#define EM_BPF 247
#endif
#define R_BPF_64_64 1
/* a symbol's section until the sections are made: .rodata (0, 1: code) */
#define SHN_RODATA 2

struct strtab {
	struct strbuf sb;
};

static size_t str_add(struct strtab *st, const char *s)
{
	size_t off;

	if (!st->sb.len)
		cgfw_sb_addn(&st->sb, "", 1);	/* offset 0: the empty name */
	off = st->sb.len;
	cgfw_sb_addn(&st->sb, s, strlen(s) + 1);
	return off;
}

static Elf_Scn *add_section(Elf *e, struct strtab *st, const char *name,
			    Elf64_Word type, Elf64_Xword flags,
			    const void *data, size_t size, size_t align)
{
	Elf_Scn *scn = elf_newscn(e);
	Elf_Data *d;
	GElf_Shdr sh;

	if (!scn)
		return NULL;
	d = elf_newdata(scn);
	if (!d)
		return NULL;
	d->d_buf = (void *)data;
	d->d_size = size;
	d->d_align = align;
	d->d_type = ELF_T_BYTE;
	gelf_getshdr(scn, &sh);
	sh.sh_name = str_add(st, name);
	sh.sh_type = type;
	sh.sh_flags = flags;
	sh.sh_addralign = align;
	gelf_update_shdr(scn, &sh);
	return scn;
}

/* A pointer to an array of @n ints: how BTF-defined maps give numbers. */
static int num(struct btf *btf, int int_id, uint32_t n)
{
	int a = btf__add_array(btf, int_id, int_id, n);

	return a < 0 ? a : btf__add_ptr(btf, a);
}

/*
 * struct { int (*type)[T]; ... } for one map, as BTF; its type id. A
 * limit's state names its key and value types instead of their sizes
 * (@limit_value[1]: a meter's limits with their times).
 */
static int map_def(struct btf *btf, int int_id, uint32_t limit_key,
		   const uint32_t *limit_value, const struct bpf_map_spec *m)
{
	const char *fields[5] = { "type", "max_entries", "map_flags" };
	uint32_t v[] = { m->type, m->max_entries, m->flags };
	int s, i, p[5], n = 3, key, u8;

	/* the member types first: a struct's fields must follow it */
	for (i = 0; i < n; i++) {
		p[i] = num(btf, int_id, v[i]);
		if (p[i] < 0)
			return p[i];
	}
	if (m->spin_lock) {
		fields[n] = "key";
		key = limit_key;
		if (m->type == BPF_MAP_TYPE_HASH) {	/* a meter: the set's key */
			u8 = btf__add_int(btf, "unsigned char", 1, 0);
			key = u8 < 0 ? u8 : btf__add_array(btf, int_id, u8,
							  m->key_size);
			if (key < 0)
				return key;
		}
		p[n++] = btf__add_ptr(btf, key);
		fields[n] = "value";
		p[n++] = btf__add_ptr(btf, limit_value[!!m->time_off]);
	} else {
		fields[n] = "key_size";
		p[n++] = num(btf, int_id, m->key_size);
		fields[n] = "value_size";
		p[n++] = num(btf, int_id, m->value_size);
	}
	for (i = 3; i < n; i++)
		if (p[i] < 0)
			return p[i];
	s = btf__add_struct(btf, NULL, n * 8);
	for (i = 0; s >= 0 && i < n; i++)
		if (btf__add_field(btf, fields[i], p[i], i * 64, 0))
			return -EINVAL;
	return s;
}

/* The name of map @k (over all tables) in the object. */
static void map_sym(char *buf, size_t size, const struct bpf_table *bt,
		    size_t k)
{
	snprintf(buf, size, "%.6s_m%zu", bt->table->name, k);
}

struct btf *cgfw_bpf_btf(const struct bpf_table *bts, size_t n_tables,
			 uint32_t *limit_key, uint32_t *limit_value,
			 int **map_var)
{
	struct btf *btf = btf__new_empty();
	int i32, u64, lock, val, val_time, def, var, ds;
	size_t i, j, k, n = 0, n_maps = 0;
	int *vars = NULL;
	char name[64];

	for (i = 0; i < n_tables; i++)
		n_maps += bts[i].n_maps;
	vars = calloc(n_maps + 1, sizeof(*vars));
	if (!btf || !vars)
		goto err;
	/* a limit's state: struct cgfw_limit in codegen.c */
	i32 = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	u64 = btf__add_int(btf, "unsigned long long", 8, 0);
	lock = btf__add_struct(btf, "bpf_spin_lock", 4);
	if (i32 < 0 || u64 < 0 || lock < 0 ||
	    btf__add_field(btf, "val", i32, 0, 0))
		goto err;
	val = btf__add_struct(btf, "cgfw_limit", 24);
	if (val < 0 || btf__add_field(btf, "lock", lock, 0, 0) ||
	    btf__add_field(btf, "pad", i32, 32, 0) ||
	    btf__add_field(btf, "tokens", u64, 64, 0) ||
	    btf__add_field(btf, "last", u64, 128, 0))
		goto err;
	/* a meter's, in a set with timeouts: then struct cgfw_elem_time */
	val_time = btf__add_struct(btf, "cgfw_limit_time", 40);
	if (val_time < 0 || btf__add_field(btf, "lock", lock, 0, 0) ||
	    btf__add_field(btf, "pad", i32, 32, 0) ||
	    btf__add_field(btf, "tokens", u64, 64, 0) ||
	    btf__add_field(btf, "last", u64, 128, 0) ||
	    btf__add_field(btf, "expires", u64, 192, 0) ||
	    btf__add_field(btf, "timeout", u64, 256, 0))
		goto err;
	*limit_key = i32;
	limit_value[0] = val;
	limit_value[1] = val_time;
	/* the maps: one variable each in .maps, none for inline sets */
	for (i = 0, k = 0; i < n_tables; i++) {
		for (j = 0; j < bts[i].n_maps; j++, k++) {
			vars[k] = -1;
			if (bts[i].maps[j].inline_only ||
			    bts[i].maps[j].rodata)
				continue;
			def = map_def(btf, i32, i32, limit_value,
				      &bts[i].maps[j]);
			map_sym(name, sizeof(name), &bts[i], k);
			var = def < 0 ? def : btf__add_var(btf, name,
					BTF_VAR_GLOBAL_ALLOCATED, def);
			if (var < 0)
				goto err;
			vars[k] = var;
			n++;
		}
	}
	ds = btf__add_datasec(btf, ".maps", n * 40);
	for (k = 0, i = 0; ds >= 0 && k < n_maps; k++) {
		if (vars[k] < 0)
			continue;
		if (btf__add_datasec_var_info(btf, vars[k], i++ * 40, 40))
			goto err;
	}
	if (ds < 0)
		goto err;
	if (map_var)
		*map_var = vars;
	else
		free(vars);
	return btf;
err:
	free(vars);
	btf__free(btf);
	return NULL;
}

static void hex(struct strbuf *sb, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		cgfw_sb_addf(sb, " %02x", b[i]);
}

/* What the stages of cgfw_bpf_write_elf() hand on to each other. */
struct elf_obj {
	struct bpf_table *bts;
	size_t n_tables;
	struct strtab st;
	/* the code of each section (0: egress, 1: ingress), its relocations */
	struct bpf_insn *code[2];
	size_t n_code[2];
	GElf_Rel *rels[2];
	size_t n_rels[2];
	/* symbol 0 is the empty one */
	GElf_Sym *syms;
	size_t n_syms;
	/* a table's first map over all tables; a map's symbol */
	size_t *map_base, *sym_of;
	size_t n_maps, n_progs, n_decl;
	struct btf *btf;
	int *var_ids;
	struct strbuf rodata;
	char *maps_data;
	Elf *e;
	Elf64_Ehdr *eh;
	Elf_Scn *scn[2], *maps_scn, *rodata_scn, *symtab, *strtab;
};

/* The sizes over all tables, the buffers, the BTF; -ENOMEM. */
static int elf_obj_alloc(struct elf_obj *o)
{
	const struct bpf_table *bts = o->bts;
	uint32_t limit_key, limit_value[2];
	size_t i, j, k;

	o->n_syms = 1;
	o->map_base = calloc(o->n_tables + 1, sizeof(*o->map_base));
	if (!o->map_base)
		return -ENOMEM;
	for (i = 0; i < o->n_tables; i++) {
		o->map_base[i] = o->n_maps;
		o->n_maps += bts[i].n_maps;
		o->n_progs += bts[i].n_progs;
		for (j = 0; j < bts[i].n_progs; j++) {
			k = bts[i].progs[j].dir == CGFW_EGRESS ? 0 : 1;
			o->n_code[k] += bts[i].progs[j].em.n;
		}
	}
	o->syms = calloc(o->n_maps + o->n_progs + 1, sizeof(*o->syms));
	o->sym_of = calloc(o->n_maps + 1, sizeof(*o->sym_of));
	o->maps_data = calloc(o->n_maps + 1, 40);
	for (k = 0; k < 2; k++) {
		o->code[k] = calloc(o->n_code[k] + 1, sizeof(struct bpf_insn));
		o->rels[k] = calloc(o->n_code[k] + 1, sizeof(GElf_Rel));
		o->n_code[k] = 0;
	}
	o->btf = cgfw_bpf_btf(bts, o->n_tables, &limit_key, limit_value,
			      &o->var_ids);
	if (!o->syms || !o->sym_of || !o->maps_data || !o->code[0] ||
	    !o->code[1] || !o->rels[0] || !o->rels[1] || !o->btf)
		return -ENOMEM;
	return 0;
}

/* A global symbol; its index. st_shndx is fixed once the sections exist. */
static size_t add_sym(struct elf_obj *o, const char *name, int type,
		      size_t shndx, size_t value, size_t size)
{
	GElf_Sym *sym = &o->syms[o->n_syms];

	sym->st_name = str_add(&o->st, name);
	sym->st_info = GELF_ST_INFO(STB_GLOBAL, type);
	sym->st_shndx = shndx;
	sym->st_value = value;
	sym->st_size = size;
	return o->n_syms++;
}

/*
 * The maps' symbols: in .maps, or in .rodata with their value; none for
 * inline sets.
 */
static void elf_map_syms(struct elf_obj *o)
{
	char name[64];
	size_t i, j, k;

	for (i = 0, k = 0; i < o->n_tables; i++) {
		for (j = 0; j < o->bts[i].n_maps; j++, k++) {
			const struct bpf_map_spec *m = &o->bts[i].maps[j];

			if (m->rodata) {
				/* its value in .rodata, 8-aligned */
				map_sym(name, sizeof(name), &o->bts[i], k);
				o->sym_of[k] = add_sym(o, name, STT_OBJECT,
						       SHN_RODATA,
						       o->rodata.len,
						       m->value_size);
				cgfw_sb_addn(&o->rodata, m->values,
					     m->value_size);
				while (o->rodata.len % 8)
					cgfw_sb_addn(&o->rodata, "", 1);
				continue;
			}
			if (o->var_ids[k] < 0)
				continue;
			map_sym(name, sizeof(name), &o->bts[i], k);
			o->sym_of[k] = add_sym(o, name, STT_OBJECT, 0,
					       o->n_decl * 40, 40);
			o->n_decl++;
		}
	}
}

/* Program @p of table @i copied, its map references as relocations. */
static void elf_prog(struct elf_obj *o, size_t i, struct bpf_prog_spec *p)
{
	size_t s = p->dir == CGFW_EGRESS ? 0 : 1, at = o->n_code[s], k;
	char name[64];

	memcpy(o->code[s] + at, p->em.insns,
	       p->em.n * sizeof(struct bpf_insn));
	for (k = 0; k < p->em.n; k++) {
		struct bpf_insn *in = &o->code[s][at + k];
		GElf_Rel *rel;

		if (in->code != (BPF_LD | BPF_DW | BPF_IMM) ||
		    (in->src_reg != BPF_PSEUDO_MAP_FD &&
		     in->src_reg != BPF_PSEUDO_MAP_VALUE)) {
			continue;
		}
		/*
		 * libbpf: a map in .maps, or the symbol's offset in .rodata
		 * plus imm (0 here)
		 */
		rel = &o->rels[s][o->n_rels[s]++];
		rel->r_offset = (at + k) * 8;
		rel->r_info = GELF_R_INFO(o->sym_of[o->map_base[i] + in->imm -
						    MAP_IDX_BIAS], R_BPF_64_64);
		in->imm = 0;
		in->src_reg = 0;
		k++;
	}
	snprintf(name, sizeof(name), "%.20s_%s_%llu", o->bts[i].table->name,
		 cgfw_dir_str(p->dir), (unsigned long long)p->cgroup->id);
	add_sym(o, name, STT_FUNC, s, at * 8, p->em.n * 8);
	o->n_code[s] += p->em.n;
}

/* The sections before .symtab; the symbols' section indices. */
static void elf_sections(struct elf_obj *o)
{
	static const char license[] = "GPL";
	const void *raw;
	uint32_t raw_len;
	GElf_Sym *sym;
	size_t i, k;

	for (k = 0; k < 2; k++)
		if (o->n_code[k])
			o->scn[k] = add_section(o->e, &o->st,
						k ? "cgroup_skb/ingress" :
						    "cgroup_skb/egress",
						SHT_PROGBITS,
						SHF_ALLOC | SHF_EXECINSTR,
						o->code[k], o->n_code[k] * 8,
						8);
	add_section(o->e, &o->st, "license", SHT_PROGBITS,
		    SHF_ALLOC | SHF_WRITE, license, sizeof(license), 1);
	o->maps_scn = add_section(o->e, &o->st, ".maps", SHT_PROGBITS,
				  SHF_ALLOC | SHF_WRITE, o->maps_data,
				  o->n_decl * 40, 8);
	if (o->rodata.len)
		o->rodata_scn = add_section(o->e, &o->st, ".rodata",
					    SHT_PROGBITS, SHF_ALLOC,
					    o->rodata.buf, o->rodata.len, 8);
	raw = btf__raw_data(o->btf, &raw_len);
	add_section(o->e, &o->st, ".BTF", SHT_PROGBITS, 0, raw, raw_len, 4);
	for (i = 1; i < o->n_syms; i++) {
		sym = &o->syms[i];
		if (sym->st_shndx == SHN_RODATA)
			sym->st_shndx = elf_ndxscn(o->rodata_scn);
		else if (GELF_ST_TYPE(sym->st_info) == STT_OBJECT)
			sym->st_shndx = elf_ndxscn(o->maps_scn);
		else
			sym->st_shndx = elf_ndxscn(o->scn[sym->st_shndx]);
	}
}

/* .relcgroup_skb/... for the code of section @k, if it has relocations. */
static void elf_rel_section(struct elf_obj *o, size_t k)
{
	Elf_Scn *r;
	GElf_Shdr sh;
	char rname[64];
	size_t i;

	if (!o->scn[k] || !o->n_rels[k])
		return;
	snprintf(rname, sizeof(rname), ".rel%s",
		 k ? "cgroup_skb/ingress" : "cgroup_skb/egress");
	r = add_section(o->e, &o->st, rname, SHT_REL, 0, NULL, 0, 8);
	gelf_getshdr(r, &sh);
	sh.sh_link = elf_ndxscn(o->symtab);
	sh.sh_info = elf_ndxscn(o->scn[k]);
	sh.sh_entsize = sizeof(Elf64_Rel);
	gelf_update_shdr(r, &sh);
	for (i = 0; i < o->n_rels[k]; i++) {
		Elf_Data *d = elf_getdata(r, NULL);

		if (!d->d_buf) {
			d->d_buf = calloc(o->n_rels[k], sizeof(Elf64_Rel));
			d->d_size = o->n_rels[k] * sizeof(Elf64_Rel);
			d->d_type = ELF_T_REL;
		}
		gelf_update_rel(d, i, &o->rels[k][i]);
	}
}

/* .symtab's symbols and .strtab's names, once every name is added. */
static void elf_symtab(struct elf_obj *o)
{
	Elf_Data *d = elf_getdata(o->symtab, NULL);
	GElf_Shdr sh;
	size_t i;

	d->d_buf = calloc(o->n_syms, sizeof(Elf64_Sym));
	d->d_size = o->n_syms * sizeof(Elf64_Sym);
	d->d_type = ELF_T_SYM;
	for (i = 0; i < o->n_syms; i++)
		gelf_update_sym(d, i, &o->syms[i]);
	gelf_getshdr(o->symtab, &sh);
	sh.sh_link = elf_ndxscn(o->strtab);
	sh.sh_info = 1;	/* the first global symbol */
	sh.sh_entsize = sizeof(Elf64_Sym);
	gelf_update_shdr(o->symtab, &sh);

	d = elf_getdata(o->strtab, NULL);
	d->d_buf = o->st.sb.buf;
	d->d_size = o->st.sb.len;
	o->eh->e_shstrndx = elf_ndxscn(o->strtab);
}

/* The object into @fd: header, sections, symbols; -1 if libelf failed. */
static int elf_write(struct elf_obj *o, int fd)
{
	size_t k;

	o->e = elf_begin(fd, ELF_C_WRITE, NULL);
	o->eh = o->e ? elf64_newehdr(o->e) : NULL;
	if (!o->eh)
		return -1;
	o->eh->e_ident[EI_DATA] = ELFDATA2LSB;
	o->eh->e_type = ET_REL;
	o->eh->e_machine = EM_BPF;
	o->eh->e_version = EV_CURRENT;

	elf_sections(o);
	o->symtab = add_section(o->e, &o->st, ".symtab", SHT_SYMTAB, 0, NULL,
				0, 8);
	for (k = 0; k < 2; k++)
		elf_rel_section(o, k);
	o->strtab = add_section(o->e, &o->st, ".strtab", SHT_STRTAB, 0, NULL,
				0, 1);
	elf_symtab(o);
	if (o->st.sb.oom || o->rodata.oom || elf_update(o->e, ELF_C_WRITE) < 0)
		return -1;
	return 0;
}

/* What fills the maps once bpftool has loaded the object. */
static void map_commands(const struct bpf_table *bts, size_t n_tables,
			 struct strbuf *commands)
{
	size_t i, j, k;
	uint32_t n;

	for (i = 0, k = 0; i < n_tables; i++) {
		for (j = 0; j < bts[i].n_maps; j++, k++) {
			const struct bpf_map_spec *m = &bts[i].maps[j];

			if (m->inline_only || m->rodata)
				continue;
			for (n = 0; n < m->n_elems; n++) {
				cgfw_sb_addf(commands, "bpftool map update name %.6s_m%zu key hex",
					     bts[i].table->name, k);
				hex(commands, (uint8_t *)m->keys + n * m->key_size,
				    m->key_size);
				cgfw_sb_adds(commands, " value hex");
				hex(commands,
				    (uint8_t *)m->values + n * m->value_size,
				    m->value_size);
				cgfw_sb_adds(commands, "\n");
			}
		}
	}
}

/* libelf's handle and our buffers. */
static void elf_obj_free(struct elf_obj *o)
{
	size_t k;

	if (o->e) {
		Elf_Scn *s = NULL;

		/* our buffers, not libelf's */
		while (o->symtab && (s = elf_nextscn(o->e, s))) {
			GElf_Shdr sh;
			Elf_Data *d;

			gelf_getshdr(s, &sh);
			d = elf_getdata(s, NULL);
			if (d && (sh.sh_type == SHT_REL || sh.sh_type == SHT_SYMTAB))
				free(d->d_buf);
		}
		elf_end(o->e);
	}
	btf__free(o->btf);
	for (k = 0; k < 2; k++) {
		free(o->code[k]);
		free(o->rels[k]);
	}
	free(o->syms);
	free(o->var_ids);
	free(o->sym_of);
	free(o->maps_data);
	free(o->map_base);
	cgfw_sb_release(&o->st.sb);
	cgfw_sb_release(&o->rodata);
}

/*
 * An element that expires counts from when it is loaded: a fill command
 * cannot say when that is. 0, or -EOPNOTSUPP with the set named.
 */
static int timed_elems(struct cgfw_ctx *ctx, const struct bpf_table *bts,
		       size_t n_tables)
{
	const struct bpf_map_spec *m;
	struct cgfw_elem_time t;
	size_t i, j;
	uint32_t n;

	for (i = 0; i < n_tables; i++) {
		for (j = 0; j < bts[i].n_maps; j++) {
			m = &bts[i].maps[j];
			for (n = 0; m->time_off && n < m->n_elems; n++) {
				memcpy(&t, (uint8_t *)m->values +
				       (size_t)n * m->value_size + m->time_off,
				       sizeof(t));
				if (!t.expires)
					continue;
				cgfw_err_at(ctx, &bts[i].rs->src, &bts[i].table->loc,
					    "set '%s' of table '%s' has elements that expire: in an object, the commands that fill its map cannot say from when; apply the table with cgfw, or leave the timeouts to the rules that add",
					    nftnl_set_get_str(m->set->nl,
							      NFTNL_SET_NAME),
					    bts[i].table->name);
				return -EOPNOTSUPP;
			}
		}
	}
	return 0;
}

/*
 * A program that reads the kernel's structures calls a kfunc by this
 * kernel's BTF id, at this kernel's offsets (kbtf.c): an object, loaded
 * by another kernel, cannot carry them. 0, or -EOPNOTSUPP.
 */
static int kernel_reads(struct cgfw_ctx *ctx, const struct bpf_table *bts,
			size_t n_tables)
{
	const struct bpf_prog_spec *p;
	size_t i, j, k;

	for (i = 0; i < n_tables; i++) {
		for (j = 0; j < bts[i].n_progs; j++) {
			p = &bts[i].progs[j];
			for (k = 0; k < p->em.n; k++) {
				if (p->em.insns[k].code != (BPF_JMP | BPF_CALL) ||
				    p->em.insns[k].src_reg !=
				    BPF_PSEUDO_KFUNC_CALL)
					continue;
				cgfw_err_at(ctx, &bts[i].rs->src,
					    &bts[i].table->loc,
					    "table '%s' reads the packet's device from the kernel's own structures, at this kernel's offsets (meta iifname, oifname and their types and groups): an object for another kernel cannot carry them; apply the table with cgfw",
					    bts[i].table->name);
				return -EOPNOTSUPP;
			}
		}
	}
	return 0;
}

/*
 * In stages: sizes and buffers; the maps' symbols (and .rodata); the
 * programs with their relocations; the ELF file; the fill commands.
 */
int cgfw_bpf_write_elf(struct cgfw_ctx *ctx, struct bpf_table *bts,
		       size_t n_tables, const char *path,
		       struct strbuf *commands)
{
	struct elf_obj o = { .bts = bts, .n_tables = n_tables };
	size_t i, j;
	int fd = -1, ret;

	ret = timed_elems(ctx, bts, n_tables);
	ret = ret ? : kernel_reads(ctx, bts, n_tables);
	if (ret)
		return ret;
	ret = elf_obj_alloc(&o);
	if (ret)
		goto out;
	elf_map_syms(&o);
	for (i = 0; i < n_tables; i++)
		for (j = 0; j < bts[i].n_progs; j++)
			elf_prog(&o, i, &bts[i].progs[j]);

	elf_version(EV_CURRENT);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		cgfw_err(ctx, "cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	if (elf_write(&o, fd))
		goto elf_err;
	map_commands(bts, n_tables, commands);
	ret = 0;
	goto out;
elf_err:
	cgfw_err(ctx, "cannot write the ELF object %s: %s", path,
		 elf_errmsg(-1));
	ret = -EIO;
out:
	elf_obj_free(&o);
	if (fd >= 0)
		close(fd);
	if (ret)
		unlink(path);
	return ret;
}
