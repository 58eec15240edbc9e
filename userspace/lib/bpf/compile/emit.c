// SPDX-License-Identifier: LGPL-2.1-or-later
/* The BPF instruction emitter: labels, forward-jump fixups, annotations. */
#include <stdio.h>
#include <stdlib.h>

#include "bpf/compile/emit.h"

/* The verifier's limit for one program. */
#define EM_MAX_INSNS 1000000

void cgfw_em_init(struct emitter *em)
{
	memset(em, 0, sizeof(*em));
}

void cgfw_em_release(struct emitter *em)
{
	size_t i;

	for (i = 0; i < em->n_notes; i++)
		free(em->notes[i].text);
	free(em->notes);
	free(em->insns);
	free(em->labels);
	free(em->fixups);
	memset(em, 0, sizeof(*em));
}

/* Grow @arr (of @size-byte items) to hold @n + 1; 0 or -ENOMEM. */
static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap * 2 : 64;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*arr, c * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

void cgfw_em_emit(struct emitter *em, struct bpf_insn insn)
{
	if (em->err)
		return;
	if (em->n >= EM_MAX_INSNS) {
		em->err = -E2BIG;
		return;
	}
	em->err = grow((void **)&em->insns, &em->cap, em->n, sizeof(insn));
	if (!em->err)
		em->insns[em->n++] = insn;
}

void cgfw_em_ld_imm64(struct emitter *em, int dst, int src_reg, uint64_t imm)
{
	cgfw_em_emit(em, (struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM,
		     .dst_reg = dst, .src_reg = src_reg,
		     .imm = (uint32_t)imm });
	cgfw_em_emit(em, (struct bpf_insn){ .imm = (uint32_t)(imm >> 32) });
}

int cgfw_em_label(struct emitter *em)
{
	if (em->err)
		return 0;
	em->err = grow((void **)&em->labels, &em->cap_labels, em->n_labels,
		       sizeof(int));
	if (em->err)
		return 0;
	em->labels[em->n_labels] = -1;
	return em->n_labels++;
}

void cgfw_em_bind(struct emitter *em, int label)
{
	if (!em->err)
		em->labels[label] = em->n;
}

static void add_fixup(struct emitter *em, int label)
{
	if (em->err)
		return;
	em->err = grow((void **)&em->fixups, &em->cap_fixups, em->n_fixups,
		       sizeof(*em->fixups));
	if (!em->err)
		em->fixups[em->n_fixups++] =
			(struct em_fixup){ .insn = em->n, .label = label };
}

void cgfw_em_jmp_imm(struct emitter *em, int op, int dst, int32_t imm, int label)
{
	add_fixup(em, label);
	cgfw_em_emit(em, (struct bpf_insn){ .code = BPF_JMP | BPF_OP(op) | BPF_K,
		     .dst_reg = dst, .imm = imm });
}

void cgfw_em_jmp32_imm(struct emitter *em, int op, int dst, int32_t imm,
		       int label)
{
	add_fixup(em, label);
	cgfw_em_emit(em, (struct bpf_insn){ .code = BPF_JMP32 | BPF_OP(op) | BPF_K,
		     .dst_reg = dst, .imm = imm });
}

void cgfw_em_jmp_reg(struct emitter *em, int op, int dst, int src, int label)
{
	add_fixup(em, label);
	cgfw_em_emit(em, (struct bpf_insn){ .code = BPF_JMP | BPF_OP(op) | BPF_X,
		     .dst_reg = dst, .src_reg = src });
}

void cgfw_em_goto(struct emitter *em, int label)
{
	cgfw_em_jmp_imm(em, BPF_JA, 0, 0, label);
}

void cgfw_em_note(struct emitter *em, const char *fmt, ...)
{
	struct strbuf sb;
	va_list ap;

	if (em->err)
		return;
	em->err = grow((void **)&em->notes, &em->cap_notes, em->n_notes,
		       sizeof(*em->notes));
	if (em->err)
		return;
	cgfw_sb_init(&sb);
	va_start(ap, fmt);
	cgfw_sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	em->notes[em->n_notes].insn = em->n;
	em->notes[em->n_notes].text = cgfw_sb_detach(&sb);
	if (!em->notes[em->n_notes].text)
		em->err = -ENOMEM;
	else
		em->n_notes++;
}

static bool is_ld_imm64(const struct bpf_insn *in)
{
	return in->code == (BPF_LD | BPF_DW | BPF_IMM);
}

/*
 * Drop the instructions no path reaches (the verifier refuses them; code
 * after an unconditional verdict leaves some), moving labels and notes to
 * the next instruction that stays.
 */
static int drop_unreachable(struct emitter *em)
{
	size_t *stack, *newidx, *target, sp = 0, i, j, n = em->n;
	bool *seen;
	int ret = -ENOMEM;

	seen = calloc(n + 1, sizeof(*seen));
	stack = calloc(n + 1, sizeof(*stack));
	newidx = calloc(n + 1, sizeof(*newidx));
	target = calloc(n + 1, sizeof(*target));
	if (!seen || !stack || !newidx || !target)
		goto out;
	for (i = 0; i <= n; i++)
		target[i] = SIZE_MAX;
	for (i = 0; i < em->n_fixups; i++)
		target[em->fixups[i].insn] = em->labels[em->fixups[i].label];

	stack[sp++] = 0;
	while (sp) {
		const struct bpf_insn *in;
		unsigned int op;

		i = stack[--sp];
		if (i >= n || seen[i])
			continue;
		seen[i] = true;
		in = &em->insns[i];
		op = BPF_OP(in->code);
		if (is_ld_imm64(in)) {
			seen[i + 1] = true;
			stack[sp++] = i + 2;
			continue;
		}
		if (BPF_CLASS(in->code) == BPF_JMP && op == BPF_EXIT)
			continue;
		if (target[i] != SIZE_MAX)
			stack[sp++] = target[i];
		if (!(BPF_CLASS(in->code) == BPF_JMP && op == BPF_JA &&
		      target[i] != SIZE_MAX))
			stack[sp++] = i + 1;
	}

	for (i = 0, j = 0; i <= n; i++) {
		newidx[i] = j;	/* first kept instruction at or after i */
		if (i < n && seen[i])
			j++;
	}
	for (i = 0, j = 0; i < n; i++)
		if (seen[i])
			em->insns[j++] = em->insns[i];
	em->n = j;
	for (i = 0; i < em->n_labels; i++)
		if (em->labels[i] >= 0)
			em->labels[i] = newidx[em->labels[i]];
	for (i = 0, j = 0; i < em->n_fixups; i++) {
		if (!seen[em->fixups[i].insn])
			continue;
		em->fixups[j] = em->fixups[i];
		em->fixups[j++].insn = newidx[em->fixups[i].insn];
	}
	em->n_fixups = j;
	for (i = 0; i < em->n_notes; i++)
		em->notes[i].insn = newidx[em->notes[i].insn];
	ret = 0;
out:
	free(seen);
	free(stack);
	free(newidx);
	free(target);
	return ret;
}

int cgfw_em_finish(struct emitter *em)
{
	size_t i;
	long off;

	if (em->err)
		return em->err;
	for (i = 0; i < em->n_fixups; i++)
		if (em->labels[em->fixups[i].label] < 0)
			return em->err = -EINVAL;	/* a bug: unbound */
	em->err = drop_unreachable(em);
	if (em->err)
		return em->err;
	for (i = 0; i < em->n_fixups; i++) {
		const struct em_fixup *f = &em->fixups[i];

		off = (long)em->labels[f->label] - (long)f->insn - 1;
		/*
		 * The kernel rewrites some instructions into several (context
		 * accesses), which stretches jumps over them: keep a margin.
		 */
		if (off >= INT16_MIN / 4 && off <= INT16_MAX / 4) {
			em->insns[f->insn].off = off;
			continue;
		}
		/* "gotol": a 32-bit offset, for unconditional jumps only */
		if (em->insns[f->insn].code != (BPF_JMP | BPF_JA)) {
			if (off >= INT16_MIN / 2 && off <= INT16_MAX / 2) {
				em->insns[f->insn].off = off;
				continue;
			}
			return em->err = -E2BIG;
		}
		em->insns[f->insn].code = BPF_JMP32 | BPF_JA;
		em->insns[f->insn].imm = off;
	}
	return 0;
}

static const char *const alu_ops[16] = {
	"+=", "-=", "*=", "/=", "|=", "&=", "<<=", ">>=",
	"neg", "%=", "^=", "=", "s>>=", "endian",
};

static const char *const jmp_ops[16] = {
	"ja", "==", ">", ">=", "&", "!=", "s>", "s>=",
	"call", "exit", "<", "<=", "s<", "s<=",
};

static const char *const sizes[4] = { "u32", "u16", "u8", "u64" };

static void dump_insn(struct strbuf *sb, const struct bpf_insn *in, size_t i)
{
	unsigned int cls = BPF_CLASS(in->code), op = BPF_OP(in->code) >> 4;
	const char *sz = sizes[BPF_SIZE(in->code) >> 3];

	cgfw_sb_addf(sb, "%5zu: ", i);
	switch (cls) {
	case BPF_ALU64:
	case BPF_ALU:
		if (BPF_OP(in->code) == BPF_END)
			cgfw_sb_addf(sb, "r%d = be%d r%d", in->dst_reg, in->imm,
				     in->dst_reg);
		else if (BPF_SRC(in->code) == BPF_X)
			cgfw_sb_addf(sb, "%sr%d %s %sr%d", cls == BPF_ALU ? "w" : "",
				     in->dst_reg, alu_ops[op],
				     cls == BPF_ALU ? "w" : "", in->src_reg);
		else
			cgfw_sb_addf(sb, "%sr%d %s %d", cls == BPF_ALU ? "w" : "",
				     in->dst_reg, alu_ops[op], in->imm);
		break;
	case BPF_LDX:
		cgfw_sb_addf(sb, "r%d = *(%s *)(r%d %+d)", in->dst_reg, sz,
			     in->src_reg, in->off);
		break;
	case BPF_STX:
		cgfw_sb_addf(sb, "*(%s *)(r%d %+d) = r%d", sz, in->dst_reg, in->off,
			     in->src_reg);
		break;
	case BPF_ST:
		cgfw_sb_addf(sb, "*(%s *)(r%d %+d) = %d", sz, in->dst_reg, in->off,
			     in->imm);
		break;
	case BPF_LD:
		if (in->src_reg == BPF_PSEUDO_MAP_FD)
			cgfw_sb_addf(sb, "r%d = map[fd %d]", in->dst_reg, in->imm);
		else if (in->src_reg == BPF_PSEUDO_MAP_VALUE)
			cgfw_sb_addf(sb, "r%d = map[fd %d] + %d", in->dst_reg,
				     in->imm, in[1].imm);
		else
			cgfw_sb_addf(sb, "r%d = 0x%llx ll", in->dst_reg,
				     (unsigned long long)(uint32_t)in->imm |
				     ((unsigned long long)(uint32_t)in[1].imm << 32));
		break;
	case BPF_JMP32:
		if (BPF_OP(in->code) == BPF_JA)
			cgfw_sb_addf(sb, "gotol %+d <%zu>", in->imm,
				     i + 1 + in->imm);
		else
			cgfw_sb_addf(sb, "if w%d %s %d goto %+d <%zu>", in->dst_reg,
				     jmp_ops[op], in->imm, in->off, i + 1 + in->off);
		break;
	case BPF_JMP:
		if (BPF_OP(in->code) == BPF_CALL)
			cgfw_sb_addf(sb, "call %d", in->imm);
		else if (BPF_OP(in->code) == BPF_EXIT)
			cgfw_sb_adds(sb, "exit");
		else if (BPF_OP(in->code) == BPF_JA)
			cgfw_sb_addf(sb, "goto %+d <%zu>", in->off,
				     i + 1 + in->off);
		else if (BPF_OP(in->code) == 0xe0)	/* BPF_JCOND */
			cgfw_sb_addf(sb, "may_goto %+d <%zu>", in->off,
				     i + 1 + in->off);
		else if (BPF_SRC(in->code) == BPF_X)
			cgfw_sb_addf(sb, "if r%d %s r%d goto %+d <%zu>", in->dst_reg,
				     jmp_ops[op], in->src_reg, in->off,
				     i + 1 + in->off);
		else
			cgfw_sb_addf(sb, "if r%d %s %d goto %+d <%zu>", in->dst_reg,
				     jmp_ops[op], in->imm, in->off, i + 1 + in->off);
		break;
	default:
		cgfw_sb_addf(sb, "(code 0x%02x)", in->code);
	}
	cgfw_sb_adds(sb, "\n");
}

int cgfw_em_dump(const struct emitter *em, struct strbuf *sb)
{
	size_t i, note = 0;

	for (i = 0; i < em->n; i++) {
		while (note < em->n_notes && em->notes[note].insn == i)
			cgfw_sb_addf(sb, "; %s\n", em->notes[note++].text);
		/* the second half of a 64-bit load is not an instruction */
		if (i && is_ld_imm64(&em->insns[i - 1]))
			continue;
		dump_insn(sb, &em->insns[i], i);
	}
	return sb->oom ? -ENOMEM : 0;
}
