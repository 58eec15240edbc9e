/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The BPF instruction emitter: every instruction goes through it, jumps go
 * to labels that are resolved when the program is finished (forward jumps
 * included), and every instruction can be traced back to the rule that
 * produced it.
 */
#ifndef CGFW_BPF_EMIT_H
#define CGFW_BPF_EMIT_H

#include <stddef.h>
#include <stdint.h>
#include <linux/bpf.h>

#include "backend_ops.h"
#include "front/ir.h"

/* Instruction builders, in the style of the kernel's filter.h. */
#define I_ALU64_IMM(OP, DST, IMM)					\
	((struct bpf_insn){ .code = BPF_ALU64 | BPF_OP(OP) | BPF_K,	\
			    .dst_reg = DST, .imm = IMM })
#define I_ALU64_REG(OP, DST, SRC)					\
	((struct bpf_insn){ .code = BPF_ALU64 | BPF_OP(OP) | BPF_X,	\
			    .dst_reg = DST, .src_reg = SRC })
#define I_ALU32_IMM(OP, DST, IMM)					\
	((struct bpf_insn){ .code = BPF_ALU | BPF_OP(OP) | BPF_K,	\
			    .dst_reg = DST, .imm = IMM })
#define I_ALU32_REG(OP, DST, SRC)					\
	((struct bpf_insn){ .code = BPF_ALU | BPF_OP(OP) | BPF_X,	\
			    .dst_reg = DST, .src_reg = SRC })
#define I_MOV64_REG(DST, SRC) I_ALU64_REG(BPF_MOV, DST, SRC)
#define I_MOV64_IMM(DST, IMM) I_ALU64_IMM(BPF_MOV, DST, IMM)
#define I_MOV32_IMM(DST, IMM) I_ALU32_IMM(BPF_MOV, DST, IMM)
/* byte swap to big endian (the host is little endian) */
#define I_BE(DST, BITS)							\
	((struct bpf_insn){ .code = BPF_ALU | BPF_END | BPF_TO_BE,	\
			    .dst_reg = DST, .imm = BITS })
#define I_LDX(SIZE, DST, SRC, OFF)					\
	((struct bpf_insn){ .code = BPF_LDX | BPF_SIZE(SIZE) | BPF_MEM,	\
			    .dst_reg = DST, .src_reg = SRC, .off = OFF })
#define I_STX(SIZE, DST, SRC, OFF)					\
	((struct bpf_insn){ .code = BPF_STX | BPF_SIZE(SIZE) | BPF_MEM,	\
			    .dst_reg = DST, .src_reg = SRC, .off = OFF })
#define I_ST(SIZE, DST, OFF, IMM)					\
	((struct bpf_insn){ .code = BPF_ST | BPF_SIZE(SIZE) | BPF_MEM,	\
			    .dst_reg = DST, .off = OFF, .imm = IMM })
#define I_CALL(FN)							\
	((struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = FN })
#define I_EXIT() ((struct bpf_insn){ .code = BPF_JMP | BPF_EXIT })

/* r6..r9 hold the packet's context for the whole program */
enum {
	R_CTX = BPF_REG_6,	/* struct __sk_buff * */
	R_NFPROTO = BPF_REG_7,	/* NFPROTO_IPV4/IPV6, 0 for anything else */
	R_THOFF = BPF_REG_8,	/* transport header offset, -1: none */
	R_L4PROTO = BPF_REG_9,	/* layer 4 protocol, -1: unknown */
};

/* The stack: nft's registers, then scratch space. */
#define STK_REGS	(-64)	/* NFT_REG32_00 .. NFT_REG32_15 */
#define STK_SCRATCH	(-128)	/* 64 bytes for keys and headers */

struct em_note {
	size_t insn;
	char *text;
};

struct em_fixup {
	size_t insn;
	int label;
};

struct emitter {
	struct bpf_insn *insns;
	size_t n, cap;
	int *labels;		/* label -> instruction, -1 unbound */
	size_t n_labels, cap_labels;
	struct em_fixup *fixups;
	size_t n_fixups, cap_fixups;
	struct em_note *notes;	/* "rule at file:line" before instruction */
	size_t n_notes, cap_notes;
	int err;		/* first error; later calls do nothing */
};

void cgfw_em_init(struct emitter *em);
void cgfw_em_release(struct emitter *em);
void cgfw_em_emit(struct emitter *em, struct bpf_insn insn);
/*
 * A 64-bit immediate (two instructions); src_reg BPF_PSEUDO_MAP_FD: a map,
 * BPF_PSEUDO_MAP_VALUE: the address of its first element's value
 */
void cgfw_em_ld_imm64(struct emitter *em, int dst, int src_reg, uint64_t imm);
int cgfw_em_label(struct emitter *em);
void cgfw_em_bind(struct emitter *em, int label);
/* Conditional jump: if (dst OP imm) goto label; BPF_JA: always. */
void cgfw_em_jmp_imm(struct emitter *em, int op, int dst, int32_t imm, int label);
/* The same on the low 32 bits: for values that are s32 in memory. */
void cgfw_em_jmp32_imm(struct emitter *em, int op, int dst, int32_t imm,
		       int label);
void cgfw_em_jmp_reg(struct emitter *em, int op, int dst, int src, int label);
void cgfw_em_goto(struct emitter *em, int label);
void cgfw_em_note(struct emitter *em, const char *fmt, ...) __printf(2, 3);
/* Resolve every jump; -E2BIG if one does not fit in 16 bits. */
int cgfw_em_finish(struct emitter *em);
/* The program as annotated assembly, one instruction a line. */
int cgfw_em_dump(const struct emitter *em, struct strbuf *sb);

#endif /* CGFW_BPF_EMIT_H */
