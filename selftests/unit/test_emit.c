// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF emitter, without root and without the kernel: forward and
 * backward jumps resolved to their labels, code no path reaches dropped
 * (labels and notes moved with it), long jumps made "gotol", and what
 * cannot be resolved refused.
 */
#include "kselftest_harness.h"
#include "bpf/compile/emit.h"

#define E(insn) cgfw_em_emit(&em, insn)

TEST(forward_and_backward_jumps_reach_their_labels)
{
	struct emitter em;
	int fwd, back;

	cgfw_em_init(&em);
	back = cgfw_em_label(&em);
	fwd = cgfw_em_label(&em);
	E(I_MOV64_IMM(BPF_REG_0, 0));			/* 0 */
	cgfw_em_bind(&em, back);
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_0, 1));		/* 1 */
	cgfw_em_jmp_imm(&em, BPF_JGT, BPF_REG_0, 9, fwd);	/* 2 */
	cgfw_em_goto(&em, back);				/* 3 */
	cgfw_em_bind(&em, fwd);
	E(I_EXIT());					/* 4 */
	ASSERT_EQ(0, cgfw_em_finish(&em));
	ASSERT_EQ(5, em.n);
	EXPECT_EQ(1, em.insns[2].off);		/* 2 + 1 + 1 = 4 */
	EXPECT_EQ(-3, em.insns[3].off);		/* 3 + 1 - 3 = 1 */
	cgfw_em_release(&em);
}

TEST(code_no_path_reaches_is_dropped_with_labels_moved)
{
	struct emitter em;
	int end;

	cgfw_em_init(&em);
	end = cgfw_em_label(&em);
	E(I_MOV64_IMM(BPF_REG_0, 1));			/* 0 */
	cgfw_em_goto(&em, end);				/* 1 */
	cgfw_em_note(&em, "dead rule");
	E(I_MOV64_IMM(BPF_REG_0, 2));			/* 2: dead */
	E(I_MOV64_IMM(BPF_REG_0, 3));			/* 3: dead */
	cgfw_em_bind(&em, end);
	cgfw_em_note(&em, "the end");
	E(I_EXIT());					/* 4 -> 2 */
	ASSERT_EQ(0, cgfw_em_finish(&em));
	ASSERT_EQ(3, em.n);
	EXPECT_EQ(BPF_JMP | BPF_EXIT, em.insns[2].code);
	EXPECT_EQ(0, em.insns[1].off);		/* now the next instruction */
	EXPECT_EQ(2, em.notes[em.n_notes - 1].insn);
	cgfw_em_release(&em);
}

TEST(a_ld_imm64_is_kept_whole)
{
	struct emitter em;

	cgfw_em_init(&em);
	cgfw_em_ld_imm64(&em, BPF_REG_1, 0, 0x1122334455667788ull);
	E(I_MOV64_IMM(BPF_REG_0, 1));
	E(I_EXIT());
	ASSERT_EQ(0, cgfw_em_finish(&em));
	ASSERT_EQ(4, em.n);
	EXPECT_EQ(0x55667788, (uint32_t)em.insns[0].imm);
	EXPECT_EQ(0x11223344, (uint32_t)em.insns[1].imm);
	cgfw_em_release(&em);
}

TEST(dead_code_shortens_jumps_and_a_long_branch_is_refused)
{
	struct emitter em;
	int far;
	size_t i;

	cgfw_em_init(&em);
	far = cgfw_em_label(&em);
	cgfw_em_goto(&em, far);
	for (i = 0; i < 20000; i++)
		E(I_MOV64_IMM(BPF_REG_0, i));
	cgfw_em_bind(&em, far);
	E(I_EXIT());
	/* the code between is dead, and goes: the jump becomes short */
	ASSERT_EQ(0, cgfw_em_finish(&em));
	EXPECT_EQ(2, em.n);
	cgfw_em_release(&em);

	/* reachable code in between, under a conditional jump */
	cgfw_em_init(&em);
	far = cgfw_em_label(&em);
	cgfw_em_jmp_imm(&em, BPF_JEQ, BPF_REG_1, 0, far);
	for (i = 0; i < 20000; i++)
		E(I_MOV64_IMM(BPF_REG_0, i));
	cgfw_em_bind(&em, far);
	E(I_EXIT());
	/* the conditional jump over 20000 cannot be 16 bits with margin */
	EXPECT_EQ(-E2BIG, cgfw_em_finish(&em));
	cgfw_em_release(&em);

}

TEST(an_unconditional_jump_far_away_is_a_gotol)
{
	struct emitter em;
	int far, skip;
	size_t i;

	cgfw_em_init(&em);
	far = cgfw_em_label(&em);
	skip = cgfw_em_label(&em);
	cgfw_em_jmp_imm(&em, BPF_JEQ, BPF_REG_1, 0, skip);	/* 0 */
	cgfw_em_goto(&em, far);					/* 1 */
	cgfw_em_bind(&em, skip);
	for (i = 0; i < 20000; i++)
		E(I_MOV64_IMM(BPF_REG_0, i));
	cgfw_em_bind(&em, far);
	E(I_EXIT());
	ASSERT_EQ(0, cgfw_em_finish(&em));
	EXPECT_EQ(BPF_JMP32 | BPF_JA, em.insns[1].code);
	EXPECT_EQ(20000, em.insns[1].imm);
	cgfw_em_release(&em);
}

TEST(a_jump_to_a_label_never_bound_is_refused)
{
	struct emitter em;

	cgfw_em_init(&em);
	cgfw_em_goto(&em, cgfw_em_label(&em));
	E(I_EXIT());
	EXPECT_EQ(-EINVAL, cgfw_em_finish(&em));
	cgfw_em_release(&em);
}

TEST_HARNESS_MAIN
