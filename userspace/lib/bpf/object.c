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
 * limit's state names its key and value types instead of their sizes.
 */
static int map_def(struct btf *btf, int int_id, uint32_t limit_key,
		   uint32_t limit_value, const struct bpf_map_spec *m)
{
	const char *fields[5] = { "type", "max_entries", "map_flags" };
	uint32_t v[] = { m->type, m->max_entries, m->flags };
	int s, i, p[5], n = 3;

	/* the member types first: a struct's fields must follow it */
	for (i = 0; i < n; i++) {
		p[i] = num(btf, int_id, v[i]);
		if (p[i] < 0)
			return p[i];
	}
	if (m->spin_lock) {
		fields[n] = "key";
		p[n++] = btf__add_ptr(btf, limit_key);
		fields[n] = "value";
		p[n++] = btf__add_ptr(btf, limit_value);
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
	int i32, u64, lock, val, def, var, ds;
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
	*limit_key = i32;
	*limit_value = val;
	/* the maps: one variable each in .maps, none for inline sets */
	for (i = 0, k = 0; i < n_tables; i++) {
		for (j = 0; j < bts[i].n_maps; j++, k++) {
			vars[k] = -1;
			if (bts[i].maps[j].inline_only ||
			    bts[i].maps[j].rodata)
				continue;
			def = map_def(btf, i32, i32, val, &bts[i].maps[j]);
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

int cgfw_bpf_write_elf(struct cgfw_ctx *ctx, struct bpf_table *bts,
		       size_t n_tables, const char *path,
		       struct strbuf *commands)
{
	static const char license[] = "GPL";
	struct strtab st = { 0 };
	struct bpf_insn *code[2] = { NULL, NULL };
	size_t n_code[2] = { 0, 0 }, n_maps = 0, n_syms = 1, i, j, k;
	GElf_Rel *rels[2] = { NULL, NULL };
	size_t n_rels[2] = { 0, 0 };
	GElf_Sym *syms = NULL;
	size_t *map_base = NULL;
	struct btf *btf = NULL;
	Elf_Scn *scn[2] = { NULL, NULL }, *maps_scn, *rodata_scn = NULL;
	Elf_Scn *symtab = NULL, *strtab;
	struct strbuf rodata = { 0 };
	int *var_ids = NULL;
	size_t n_progs = 0, n_decl = 0, *sym_of = NULL;
	Elf64_Ehdr *eh;
	char *maps_data = NULL, name[64];
	const void *raw;
	uint32_t raw_len;
	uint32_t limit_key, limit_value;
	int fd = -1, ret = -ENOMEM;
	Elf *e = NULL;

	map_base = calloc(n_tables + 1, sizeof(*map_base));
	if (!map_base)
		goto out;
	for (i = 0; i < n_tables; i++) {
		map_base[i] = n_maps;
		n_maps += bts[i].n_maps;
		n_progs += bts[i].n_progs;
		for (j = 0; j < bts[i].n_progs; j++) {
			k = bts[i].progs[j].dir == CGFW_EGRESS ? 0 : 1;
			n_code[k] += bts[i].progs[j].em.n;
		}
	}
	syms = calloc(n_maps + n_progs + 1, sizeof(*syms));
	sym_of = calloc(n_maps + 1, sizeof(*sym_of));
	maps_data = calloc(n_maps + 1, 40);
	for (k = 0; k < 2; k++) {
		code[k] = calloc(n_code[k] + 1, sizeof(struct bpf_insn));
		rels[k] = calloc(n_code[k] + 1, sizeof(GElf_Rel));
		n_code[k] = 0;
	}
	btf = cgfw_bpf_btf(bts, n_tables, &limit_key, &limit_value, &var_ids);
	if (!syms || !sym_of || !maps_data || !code[0] || !code[1] ||
	    !rels[0] || !rels[1] || !btf)
		goto out;

	/* maps: a symbol each in .maps; none for inline sets */
	for (i = 0, k = 0; i < n_tables; i++) {
		for (j = 0; j < bts[i].n_maps; j++, k++) {
			const struct bpf_map_spec *m = &bts[i].maps[j];

			if (m->rodata) {
				/* its value in .rodata, 8-aligned */
				map_sym(name, sizeof(name), &bts[i], k);
				sym_of[k] = n_syms;
				syms[n_syms].st_name = str_add(&st, name);
				syms[n_syms].st_info = GELF_ST_INFO(STB_GLOBAL,
								    STT_OBJECT);
				syms[n_syms].st_shndx = SHN_RODATA;
				syms[n_syms].st_value = rodata.len;
				syms[n_syms].st_size = m->value_size;
				n_syms++;
				cgfw_sb_addn(&rodata, m->values,
					     m->value_size);
				while (rodata.len % 8)
					cgfw_sb_addn(&rodata, "", 1);
				continue;
			}
			if (var_ids[k] < 0)
				continue;
			map_sym(name, sizeof(name), &bts[i], k);
			sym_of[k] = n_syms;
			syms[n_syms].st_name = str_add(&st, name);
			syms[n_syms].st_info = GELF_ST_INFO(STB_GLOBAL,
							    STT_OBJECT);
			syms[n_syms].st_value = n_decl * 40;
			syms[n_syms].st_size = 40;
			n_syms++;
			n_decl++;
		}
	}
	/* programs: copied, map references as relocations to their maps */
	for (i = 0; i < n_tables; i++) {
		for (j = 0; j < bts[i].n_progs; j++) {
			struct bpf_prog_spec *p = &bts[i].progs[j];
			size_t s = p->dir == CGFW_EGRESS ? 0 : 1, at;

			at = n_code[s];
			memcpy(code[s] + at, p->em.insns,
			       p->em.n * sizeof(struct bpf_insn));
			for (k = 0; k < p->em.n; k++) {
				struct bpf_insn *in = &code[s][at + k];

				if (in->code != (BPF_LD | BPF_DW | BPF_IMM) ||
				    (in->src_reg != BPF_PSEUDO_MAP_FD &&
				     in->src_reg != BPF_PSEUDO_MAP_VALUE)) {
					continue;
				}
				/*
				 * libbpf: a map in .maps, or the symbol's
				 * offset in .rodata plus imm (0 here)
				 */
				rels[s][n_rels[s]].r_offset = (at + k) * 8;
				rels[s][n_rels[s]].r_info = GELF_R_INFO(
					sym_of[map_base[i] + in->imm -
					       MAP_IDX_BIAS], R_BPF_64_64);
				n_rels[s]++;
				in->imm = 0;
				in->src_reg = 0;
				k++;
			}
			snprintf(name, sizeof(name), "%.20s_%s_%llu",
				 bts[i].table->name, cgfw_dir_str(p->dir),
				 (unsigned long long)p->cgroup->id);
			syms[n_syms].st_name = str_add(&st, name);
			syms[n_syms].st_info = GELF_ST_INFO(STB_GLOBAL,
							    STT_FUNC);
			syms[n_syms].st_shndx = s;	/* fixed below */
			syms[n_syms].st_value = at * 8;
			syms[n_syms].st_size = p->em.n * 8;
			n_syms++;
			n_code[s] += p->em.n;
		}
	}

	elf_version(EV_CURRENT);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		cgfw_err(ctx, "cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	eh = e ? elf64_newehdr(e) : NULL;
	if (!eh)
		goto elf_err;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_REL;
	eh->e_machine = EM_BPF;
	eh->e_version = EV_CURRENT;

	for (k = 0; k < 2; k++)
		if (n_code[k])
			scn[k] = add_section(e, &st, k ? "cgroup_skb/ingress" :
						    "cgroup_skb/egress",
					     SHT_PROGBITS,
					     SHF_ALLOC | SHF_EXECINSTR, code[k],
					     n_code[k] * 8, 8);
	add_section(e, &st, "license", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE,
		    license, sizeof(license), 1);
	maps_scn = add_section(e, &st, ".maps", SHT_PROGBITS,
			       SHF_ALLOC | SHF_WRITE, maps_data, n_decl * 40, 8);
	if (rodata.len)
		rodata_scn = add_section(e, &st, ".rodata", SHT_PROGBITS,
					 SHF_ALLOC, rodata.buf, rodata.len, 8);
	raw = btf__raw_data(btf, &raw_len);
	add_section(e, &st, ".BTF", SHT_PROGBITS, 0, raw, raw_len, 4);
	for (i = 1; i < n_syms; i++) {
		if (syms[i].st_shndx == SHN_RODATA)
			syms[i].st_shndx = elf_ndxscn(rodata_scn);
		else if (GELF_ST_TYPE(syms[i].st_info) == STT_OBJECT)
			syms[i].st_shndx = elf_ndxscn(maps_scn);
		else
			syms[i].st_shndx = elf_ndxscn(scn[syms[i].st_shndx]);
	}
	symtab = add_section(e, &st, ".symtab", SHT_SYMTAB, 0, NULL, 0, 8);
	for (k = 0; k < 2; k++) {
		Elf_Scn *r;
		GElf_Shdr sh;
		char rname[64];

		if (!scn[k] || !n_rels[k])
			continue;
		snprintf(rname, sizeof(rname), ".rel%s",
			 k ? "cgroup_skb/ingress" : "cgroup_skb/egress");
		r = add_section(e, &st, rname, SHT_REL, 0, NULL, 0, 8);
		gelf_getshdr(r, &sh);
		sh.sh_link = elf_ndxscn(symtab);
		sh.sh_info = elf_ndxscn(scn[k]);
		sh.sh_entsize = sizeof(Elf64_Rel);
		gelf_update_shdr(r, &sh);
		for (i = 0; i < n_rels[k]; i++) {
			Elf_Data *d = elf_getdata(r, NULL);

			if (!d->d_buf) {
				d->d_buf = calloc(n_rels[k], sizeof(Elf64_Rel));
				d->d_size = n_rels[k] * sizeof(Elf64_Rel);
				d->d_type = ELF_T_REL;
			}
			gelf_update_rel(d, i, &rels[k][i]);
		}
	}
	strtab = add_section(e, &st, ".strtab", SHT_STRTAB, 0, NULL, 0, 1);
	{
		Elf_Data *d = elf_getdata(symtab, NULL);
		GElf_Shdr sh;

		d->d_buf = calloc(n_syms, sizeof(Elf64_Sym));
		d->d_size = n_syms * sizeof(Elf64_Sym);
		d->d_type = ELF_T_SYM;
		for (i = 0; i < n_syms; i++)
			gelf_update_sym(d, i, &syms[i]);
		gelf_getshdr(symtab, &sh);
		sh.sh_link = elf_ndxscn(strtab);
		sh.sh_info = 1;	/* the first global symbol */
		sh.sh_entsize = sizeof(Elf64_Sym);
		gelf_update_shdr(symtab, &sh);

		d = elf_getdata(strtab, NULL);
		d->d_buf = st.sb.buf;
		d->d_size = st.sb.len;
		eh->e_shstrndx = elf_ndxscn(strtab);
	}
	if (st.sb.oom || rodata.oom || elf_update(e, ELF_C_WRITE) < 0)
		goto elf_err;

	/* what fills the maps once bpftool has loaded the object */
	for (i = 0, k = 0; i < n_tables; i++) {
		for (j = 0; j < bts[i].n_maps; j++, k++) {
			const struct bpf_map_spec *m = &bts[i].maps[j];
			uint32_t n;

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
	ret = 0;
	goto out;
elf_err:
	cgfw_err(ctx, "cannot write the ELF object %s: %s", path,
		 elf_errmsg(-1));
	ret = -EIO;
out:
	if (e) {
		Elf_Scn *s = NULL;

		/* our buffers, not libelf's */
		while (symtab && (s = elf_nextscn(e, s))) {
			GElf_Shdr sh;
			Elf_Data *d;

			gelf_getshdr(s, &sh);
			d = elf_getdata(s, NULL);
			if (d && (sh.sh_type == SHT_REL || sh.sh_type == SHT_SYMTAB))
				free(d->d_buf);
		}
		elf_end(e);
	}
	if (fd >= 0)
		close(fd);
	if (ret)
		unlink(path);
	btf__free(btf);
	for (k = 0; k < 2; k++) {
		free(code[k]);
		free(rels[k]);
	}
	free(syms);
	free(var_ids);
	free(sym_of);
	free(maps_data);
	free(map_base);
	cgfw_sb_release(&st.sb);
	cgfw_sb_release(&rodata);
	return ret;
}
