// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ct at egress: the packet's connection-tracking entry, as
 * nft_ct_get_eval() reads it. No helper gives it to a CGROUP_SKB
 * program; the program reads skb->_nfct from the kernel's sk_buff (the
 * kfunc bpf_cast_to_kern_ctx(), offsets from the kernel's BTF: kbtf.c)
 * and the entry's members by bpf_probe_read_kernel().
 *
 * At egress the entry is the one nf_conntrack gave the packet at
 * LOCAL_OUT, confirmed at POST_ROUTING, before the hook. At ingress the
 * socket's filter runs after nf_reset_ct() (tcp_v4_rcv(),
 * udp_queue_rcv_one_skb()): there is none, and ct is refused there.
 * nf_conntrack tracks a network namespace only while something uses it:
 * the table's keeper (bpf/keeper.c) does, from the apply on.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/bpf.h>
#include <linux/netfilter/nf_tables.h>
#include <libnftnl/expr.h>

#include "base/list.h"
#include "bpf/compile/cg.h"
#include "bpf/compile/emit.h"
#include "bpf/compile/kbtf.h"
#include "bpf/table.h"

/* include/uapi/linux/netfilter/nf_conntrack_common.h */
#define CT_INFOMASK	7	/* skb->_nfct: the entry's address | ctinfo */
#define CT_IS_REPLY	3	/* IP_CT_IS_REPLY */
#define CT_UNTRACKED	7	/* IP_CT_UNTRACKED */
#define CT_TEMPLATE	(1u << 11)	/* IPS_TEMPLATE */
#define CT_BIT_INVALID	(1u << 0)	/* NF_CT_STATE_INVALID_BIT */
#define CT_BIT_UNTRACKED (1u << 6)	/* NF_CT_STATE_UNTRACKED_BIT */

/* where in nf_conn's unsigned long status its low 32 bits are */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define STATUS_LOW	(sizeof(long) - 4)
#else
#define STATUS_LOW	0
#endif

/* scratch: the entry's address, ctinfo, then what is read of it */
#define S_ENTRY	STK_SCRATCH
#define S_INFO	(STK_SCRATCH + 8)
#define S_VAL	(STK_SCRATCH + 16)

static const char *key_name(uint32_t key)
{
	static const char *const names[] = {
		[NFT_CT_STATE] = "state", [NFT_CT_DIRECTION] = "direction",
		[NFT_CT_STATUS] = "status", [NFT_CT_MARK] = "mark",
		[NFT_CT_SECMARK] = "secmark",
		[NFT_CT_EXPIRATION] = "expiration",
		[NFT_CT_HELPER] = "helper", [NFT_CT_L3PROTOCOL] = "l3proto",
		[NFT_CT_SRC] = "saddr", [NFT_CT_DST] = "daddr",
		[NFT_CT_PROTOCOL] = "protocol",
		[NFT_CT_PROTO_SRC] = "proto-src",
		[NFT_CT_PROTO_DST] = "proto-dst", [NFT_CT_LABELS] = "label",
		[NFT_CT_PKTS] = "packets", [NFT_CT_BYTES] = "bytes",
		[NFT_CT_AVGPKT] = "avgpkt", [NFT_CT_ZONE] = "zone",
		[NFT_CT_EVENTMASK] = "event", [NFT_CT_SRC_IP] = "ip saddr",
		[NFT_CT_DST_IP] = "ip daddr", [NFT_CT_SRC_IP6] = "ip6 saddr",
		[NFT_CT_DST_IP6] = "ip6 daddr", [NFT_CT_ID] = "id",
	};

	return key < ARRAY_SIZE(names) && names[key] ?
	       names[key] : "(unknown)";
}

/* fp+@dst = @len bytes at the entry + @off */
static void read_entry(struct cg *g, int dst, int len, int off)
{
	E(I_MOV64_REG(BPF_REG_1, BPF_REG_10));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_1, dst));
	E(I_MOV64_IMM(BPF_REG_2, len));
	E(I_LDX(BPF_DW, BPF_REG_3, BPF_REG_10, S_ENTRY));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_3, off));
	E(I_CALL(BPF_FUNC_probe_read_kernel));
}

/* r1 = the entry's address (0: none), r2 = ctinfo; both kept in scratch */
static void load_nfct(struct cg *g, const struct cgfw_kbtf *kb)
{
	E(I_MOV64_REG(BPF_REG_1, R_CTX));
	E(((struct bpf_insn){ .code = BPF_JMP | BPF_CALL,
			      .src_reg = BPF_PSEUDO_KFUNC_CALL,
			      .imm = kb->cast_to_kern_ctx }));
	E(I_LDX(BPF_DW, BPF_REG_1, BPF_REG_0, kb->ct.skb_nfct));
	E(I_MOV64_REG(BPF_REG_2, BPF_REG_1));
	E(I_ALU64_IMM(BPF_AND, BPF_REG_2, CT_INFOMASK));
	E(I_ALU64_IMM(BPF_AND, BPF_REG_1, ~CT_INFOMASK));
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_1, S_ENTRY));
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_2, S_INFO));
}

/*
 * ct state: the bit of ctinfo (new, established, related), untracked or
 * invalid without an entry.
 */
static void gen_state(struct cg *g, int off)
{
	int none = cgfw_em_label(g->em), store = cgfw_em_label(g->em);

	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_1, 0, none);
	E(I_ALU64_IMM(BPF_MOD, BPF_REG_2, CT_IS_REPLY));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_2, 1));
	E(I_MOV64_IMM(BPF_REG_1, 1));
	E(I_ALU64_REG(BPF_LSH, BPF_REG_1, BPF_REG_2));
	cgfw_em_goto(g->em, store);
	cgfw_em_bind(g->em, none);
	E(I_MOV64_IMM(BPF_REG_1, CT_BIT_INVALID));
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_2, CT_UNTRACKED, store);
	E(I_MOV64_IMM(BPF_REG_1, CT_BIT_UNTRACKED));
	cgfw_em_bind(g->em, store);
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, off));
}

/* the rule ends unless the entry's l3num (original tuple) is @family */
static void need_family(struct cg *g, const struct cgfw_kbtf_ct *ct,
			int family, int brk)
{
	read_entry(g, S_VAL, 2, ct->tuple[0] + ct->l3num);
	E(I_LDX(BPF_H, BPF_REG_1, BPF_REG_10, S_VAL));
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_1, family, brk);
}

/* the register at @off = the low byte or half of what is at S_VAL */
static void store_small(struct cg *g, int size, int off)
{
	E(I_LDX(size, BPF_REG_1, BPF_REG_10, S_VAL));
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, off));
}

/*
 * ct zone: the entry's zone id, or with a direction the id if the zone
 * is of that direction, else the default zone (nf_ct_zone_id()). struct
 * nf_conntrack_zone is { u16 id; u8 flags; u8 dir; }.
 */
static void gen_zone(struct cg *g, const struct cgfw_kbtf_ct *ct, int dir,
		     int off)
{
	int done = cgfw_em_label(g->em);

	read_entry(g, S_VAL, 4, ct->zone);
	E(I_LDX(BPF_H, BPF_REG_1, BPF_REG_10, S_VAL));
	if (dir == 0 || dir == 1) {
		E(I_LDX(BPF_B, BPF_REG_2, BPF_REG_10, S_VAL + 3));
		E(I_ALU64_IMM(BPF_AND, BPF_REG_2, 1 << dir));
		cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_2, 0, done);
		E(I_MOV64_IMM(BPF_REG_1, 0));
	}
	cgfw_em_bind(g->em, done);
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, off));
}

/* What the tuple of direction @dir has: its offset in the entry, size. */
static bool tuple_field(const struct cgfw_kbtf_ct *ct, uint32_t key, int dir,
			int *at, int *len, int *family)
{
	int t = ct->tuple[dir];

	*family = 0;
	switch (key) {
	case NFT_CT_SRC_IP:
	case NFT_CT_DST_IP:
		*family = 2;	/* NFPROTO_IPV4 */
		*len = 4;
		break;
	case NFT_CT_SRC_IP6:
	case NFT_CT_DST_IP6:
		*family = 10;	/* NFPROTO_IPV6 */
		/* fall through */
	case NFT_CT_SRC:
	case NFT_CT_DST:
		*len = 16;
		break;
	case NFT_CT_PROTO_SRC:
	case NFT_CT_PROTO_DST:
		*len = 2;
		break;
	default:
		return false;
	}
	switch (key) {
	case NFT_CT_SRC:
	case NFT_CT_SRC_IP:
	case NFT_CT_SRC_IP6:
		*at = t + ct->src_u3;
		break;
	case NFT_CT_DST:
	case NFT_CT_DST_IP:
	case NFT_CT_DST_IP6:
		*at = t + ct->dst_u3;
		break;
	case NFT_CT_PROTO_SRC:
		*at = t + ct->src_u;
		break;
	default:
		*at = t + ct->dst_u;
	}
	return true;
}

/*
 * The hook runs after POST_ROUTING, where nf_conntrack confirms a new
 * entry: a connection's first packet has IPS_CONFIRMED here, and not at
 * nft's output hook. Said at the rule, once.
 */
static void warn_confirmed(struct cg *g)
{
	char at[CGFW_WHERE_MAX];

	if (g->rule == g->ct_warned)
		return;
	g->ct_warned = g->rule;
	cgfw_log(g->ctx, CGFW_LOG_WARN,
		 "%s: ct status: the bpf backend reads the entry after POST_ROUTING, where a new connection's is confirmed already: its first packet has status confirmed here, not at nft's output hook",
		 cgfw_src_lines(&g->rs->src, g->rule->loc.line,
				g->rule->loc.line, at, sizeof(at)));
}

/* The keys of the entry itself, once it is known to be there. */
static bool gen_entry_key(struct cg *g, const struct cgfw_kbtf_ct *ct,
			  uint32_t key, int dir, int off)
{
	int done;

	switch (key) {
	case NFT_CT_DIRECTION:	/* CTINFO2DIR() */
		done = cgfw_em_label(g->em);
		E(I_LDX(BPF_DW, BPF_REG_2, BPF_REG_10, S_INFO));
		E(I_MOV64_IMM(BPF_REG_1, 0));
		cgfw_em_jmp_imm(g->em, BPF_JLT, BPF_REG_2, CT_IS_REPLY, done);
		E(I_MOV64_IMM(BPF_REG_1, 1));
		cgfw_em_bind(g->em, done);
		E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, off));
		return true;
	case NFT_CT_STATUS:	/* its low 32 bits, read already */
		warn_confirmed(g);
		store_small(g, BPF_W, off);
		return true;
	case NFT_CT_MARK:
		read_entry(g, off, 4, ct->mark);
		return true;
	case NFT_CT_L3PROTOCOL:	/* a byte of the u16 */
		read_entry(g, S_VAL, 2, ct->tuple[0] + ct->l3num);
		E(I_LDX(BPF_B, BPF_REG_1, BPF_REG_10, S_VAL));
		E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, off));
		return true;
	case NFT_CT_PROTOCOL:
		read_entry(g, S_VAL, 1, ct->tuple[0] + ct->protonum);
		store_small(g, BPF_B, off);
		return true;
	case NFT_CT_ZONE:
		gen_zone(g, ct, dir, off);
		return true;
	}
	return false;
}

/* Why key @key is never compiled, or NULL. */
static const char *never(uint32_t key)
{
	switch (key) {
	case NFT_CT_MARK:
	case NFT_CT_ZONE:
	case NFT_CT_STATE:
	case NFT_CT_DIRECTION:
	case NFT_CT_STATUS:
	case NFT_CT_L3PROTOCOL:
	case NFT_CT_PROTOCOL:
	case NFT_CT_SRC:
	case NFT_CT_DST:
	case NFT_CT_PROTO_SRC:
	case NFT_CT_PROTO_DST:
	case NFT_CT_SRC_IP:
	case NFT_CT_DST_IP:
	case NFT_CT_SRC_IP6:
	case NFT_CT_DST_IP6:
		return NULL;
	}
	/* helper, label, bytes, packets, avgpkt: in the entry's extensions */
	return "it is not compiled (state, direction, status, mark, zone, l3proto, protocol, the addresses and ports are)";
}

/* The checks before a key is read: the place, the kernel, the key. */
static const struct cgfw_kbtf *can_read(struct cg *g, struct nftnl_expr *e,
					uint32_t key)
{
	const struct cgfw_kbtf *kb;
	const char *why;
	int err;

	if (nftnl_expr_is_set(e, NFTNL_EXPR_CT_SREG)) {
		cgfw_cg_refuse(g, "ct %s set: a CGROUP_SKB program cannot change the connection-tracking entry",
			       key_name(key));
		return NULL;
	}
	if (g->p->dir != CGFW_EGRESS) {
		cgfw_cg_refuse(g, "ct %s at ingress: the kernel releases the connection-tracking entry before the socket's filter runs",
			       key_name(key));
		return NULL;
	}
	why = never(key);
	if (why) {
		cgfw_cg_refuse(g, "ct %s: %s", key_name(key), why);
		return NULL;
	}
	kb = cgfw_kbtf(&err);
	err = err ? : kb->ct_err;
	if (err) {
		cgfw_cg_refuse(g, "ct %s reads the connection-tracking entry from the kernel's sk_buff, through BTF, %s",
			       key_name(key),
			       err == -ENOENT ? "which this kernel has not (/sys/kernel/btf/vmlinux)" :
			       err == -EPERM ? "which this kernel does not let a program do (no JIT for kfuncs, or lockdown)" :
					       "which this kernel has without the names it needs");
		return NULL;
	}
	why = key == NFT_CT_MARK && kb->ct.mark < 0 ? "this kernel tracks no marks (CONFIG_NF_CONNTRACK_MARK)" :
	      key == NFT_CT_ZONE && kb->ct.zone < 0 ? "this kernel has no zones (CONFIG_NF_CONNTRACK_ZONES)" :
	      NULL;
	if (why) {
		cgfw_cg_refuse(g, "ct %s: %s", key_name(key), why);
		return NULL;
	}
	return kb;
}

void cgfw_cg_ct(struct cg *g, struct nftnl_expr *e, int brk)
{
	uint32_t key = nftnl_expr_get_u32(e, NFTNL_EXPR_CT_KEY);
	int dir = nftnl_expr_is_set(e, NFTNL_EXPR_CT_DIR) ?
		  nftnl_expr_get_u8(e, NFTNL_EXPR_CT_DIR) : -1;
	const struct cgfw_kbtf *kb = can_read(g, e, key);
	int off, at, len, family;

	if (!kb)
		return;
	len = key == NFT_CT_SRC || key == NFT_CT_DST ||
	      key == NFT_CT_SRC_IP6 || key == NFT_CT_DST_IP6 ? 16 : 4;
	off = cgfw_cg_reg(g, nftnl_expr_get_u32(e, NFTNL_EXPR_CT_DREG), len);
	if (!off)
		return;
	/* its keeper is table inet cgfw-ct-NAME (bpf/keeper.c) */
	if (strlen(g->bt->table->name) > NFT_TABLE_MAXNAMELEN - 1 - 8) {
		cgfw_cg_refuse(g, "ct: the table's conntrack keeper would be table inet cgfw-ct-%.20s..., longer than nf_tables takes; use a table name of at most %d characters",
			       g->bt->table->name, NFT_TABLE_MAXNAMELEN - 1 - 8);
		return;
	}
	g->bt->conntrack = true;
	load_nfct(g, kb);
	if (key == NFT_CT_STATE) {
		gen_state(g, off);
		return;
	}
	/* no entry, or a template: the rule ends */
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_1, 0, brk);
	read_entry(g, S_VAL, 4, kb->ct.status + STATUS_LOW);
	E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_10, S_VAL));
	E(I_ALU64_IMM(BPF_AND, BPF_REG_1, CT_TEMPLATE));
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_1, 0, brk);
	if (gen_entry_key(g, &kb->ct, key, dir, off))
		return;
	if (dir < 0 || dir > 1 ||
	    !tuple_field(&kb->ct, key, dir, &at, &len, &family)) {
		cgfw_cg_refuse(g, "ct %s without a direction", key_name(key));
		return;
	}
	if (family)
		need_family(g, &kb->ct, family, brk);
	if (len == 2)	/* nft_reg_store16(): the rest of the word 0 */
		E(I_ST(BPF_W, BPF_REG_10, off, 0));
	read_entry(g, off, len, at);
}
