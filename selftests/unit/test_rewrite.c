// SPDX-License-Identifier: GPL-2.0
/*
 * The rewrite stage, without root: the cgroup family becomes inet, the
 * cgroup hooks become output/input, every line and column is kept, the
 * bindings and rule places are recorded, and bad input is refused at its
 * place in the file.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "front/rewrite.h"

struct rw_case {
	struct cgfw_ctx *ctx;
	struct cgfw_source src;
	struct rw_result rw;
	int ret;
};

static void rw_run(struct rw_case *c, const char *text)
{
	memset(c, 0, sizeof(*c));
	cgfw_ctx__new(&c->ctx, NULL);
	c->src.name = "t.nft";
	c->src.text = (char *)text;
	c->src.len = strlen(text);
	c->ret = cgfw_rewrite(c->ctx, &c->src, &c->rw);
}

static void rw_done(struct rw_case *c)
{
	if (!c->ret)
		cgfw_rw_result_release(&c->rw);
	cgfw_ctx__free(c->ctx);
}

/* The same lines, each of the same length, as the input. */
static bool same_shape(const char *a, const char *b)
{
	if (strlen(a) != strlen(b))
		return false;
	for (; *a; a++, b++)
		if ((*a == '\n') != (*b == '\n'))
			return false;
	return true;
}

TEST(family_and_hook_rewritten_columns_kept)
{
	static const char in[] =
		"table cgroup web {\n"
		"\tchain out {\n"
		"\t\ttype filter hook egress cgroup \"web.slice\" priority 0; policy drop;\n"
		"\t\ttcp dport 443 accept\n"
		"\t}\n"
		"\tchain in {\n"
		"\t\ttype filter hook ingress cgroup \"/sys/fs/cgroup/x\" priority 0;\n"
		"\t}\n"
		"}\n";
	struct rw_case c;
	struct rw_chain *out, *inc;

	rw_run(&c, in);
	ASSERT_EQ(0, c.ret);
	EXPECT_TRUE(same_shape(in, c.rw.text));
	EXPECT_NE(NULL, strstr(c.rw.text, "table inet   web {"));
	/* what follows a replacement stays in its column */
	EXPECT_EQ(strstr(in, "priority 0; policy drop") - in,
		  strstr(c.rw.text, "priority 0; policy drop") - c.rw.text);
	EXPECT_EQ(strstr(in, "priority 0;\n") - in,
		  strstr(c.rw.text, "priority 0;\n") - c.rw.text);
	EXPECT_NE(NULL, strstr(c.rw.text, "hook output "));
	EXPECT_NE(NULL, strstr(c.rw.text, "hook input "));
	EXPECT_EQ(NULL, strstr(c.rw.text, "cgroup"));

	out = cgfw_rw_find_chain(&c.rw, "web", "out");
	inc = cgfw_rw_find_chain(&c.rw, "web", "in");
	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, inc);
	EXPECT_TRUE(out->bound);
	EXPECT_EQ(CGFW_EGRESS, out->dir);
	EXPECT_STREQ("web.slice", out->cgroup_path);
	EXPECT_EQ(3, out->cgroup_loc.line);
	EXPECT_EQ(34, out->cgroup_loc.col);
	EXPECT_EQ(CGFW_INGRESS, inc->dir);
	EXPECT_STREQ("/sys/fs/cgroup/x", inc->cgroup_path);
	ASSERT_EQ(1, out->n_rules);
	EXPECT_EQ(4, out->rules[0].loc.line);
	EXPECT_EQ(3, out->rules[0].loc.col);
	EXPECT_EQ(0, inc->n_rules);
	rw_done(&c);
}

TEST(rule_places_with_braces_strings_and_comments)
{
	static const char in[] =
		"table cgroup t { # a comment with { and \"\n"
		"  set s { type ipv4_addr; elements = {\n"
		"    10.0.0.1, 10.0.0.2 } }\n"
		"  chain c {\n"
		"    type filter hook egress cgroup \"a#b\" priority 0;\n"
		"    tcp dport { 80, 443 } counter accept; udp dport 53 accept\n"
		"    meta mark 1 comment \"x { y\" drop\n"
		"  }\n"
		"}\n"
		"add rule cgroup t c tcp dport 22 drop\n";
	struct rw_case c;
	struct rw_chain *ch;

	rw_run(&c, in);
	ASSERT_EQ(0, c.ret);
	ch = cgfw_rw_find_chain(&c.rw, "t", "c");
	ASSERT_NE(NULL, ch);
	EXPECT_STREQ("a#b", ch->cgroup_path);
	ASSERT_EQ(4, ch->n_rules);
	EXPECT_EQ(6, ch->rules[0].loc.line);
	EXPECT_EQ(6, ch->rules[1].loc.line);
	EXPECT_EQ(43, ch->rules[1].loc.col);
	EXPECT_EQ(7, ch->rules[2].loc.line);
	EXPECT_EQ(10, ch->rules[3].loc.line);
	EXPECT_EQ(21, ch->rules[3].loc.col);
	EXPECT_FALSE(ch->order_unknown);
	EXPECT_NE(NULL, strstr(c.rw.text, "add rule inet   t c"));
	rw_done(&c);
}

TEST(insert_makes_rule_order_unknown)
{
	struct rw_case c;
	struct rw_chain *ch;

	rw_run(&c, "table cgroup t { chain c { type filter hook egress cgroup \"x\" priority 0; } }\n"
		   "insert rule cgroup t c drop\n");
	ASSERT_EQ(0, c.ret);
	ch = cgfw_rw_find_chain(&c.rw, "t", "c");
	ASSERT_NE(NULL, ch);
	EXPECT_TRUE(ch->order_unknown);
	rw_done(&c);
}

/* Each bad input: the error's "file:line:col" and a word of the message. */
struct bad {
	const char *text;
	const char *where;
	const char *what;
};

static const struct bad bad_inputs[] = {
	{ "table inet t { }\n", "t.nft:1:7-10:", "cgroup family only" },
	{ "table t { }\n", "t.nft:1:7:", "no family given" },
	{ "\ntable cgroup t {\n chain c {\n  type filter hook output priority 0;\n }\n}\n",
	  "t.nft:4:20-25:", "'ingress' and 'egress' only" },
	{ "table cgroup t {\n chain c {\n  type filter hook egress priority 0;\n }\n}\n",
	  "t.nft:3:20-25:", "needs the cgroup it filters" },
	{ "table cgroup t {\n chain c {\n  type filter hook egress cgroup $p priority 0;\n }\n}\n",
	  "t.nft:3:34-35:", "quoted string" },
	{ "table cgroup t {\n chain c {\n  type filter hook egress cgroup \"x priority 0;\n }\n}\n",
	  "t.nft:3:34:", "unterminated string" },
	{ "include \"other.nft\"\n", "t.nft:1:1-7:", "'include' is not taken here" },
	{ "# nothing but a comment\n", "t.nft: Error:", "no table in the input" },
	{ "add rule ip t c drop\n", "t.nft:1:10-11:", "cgroup family only" },
};

TEST(bad_input_is_refused_at_its_place)
{
	struct rw_case c;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad_inputs); i++) {
		rw_run(&c, bad_inputs[i].text);
		EXPECT_EQ(-EINVAL, c.ret);
		EXPECT_NE(NULL, strstr(cgfw_ctx__error(c.ctx),
				       bad_inputs[i].where))
			TH_LOG("case %zu: %s", i, cgfw_ctx__error(c.ctx));
		EXPECT_NE(NULL, strstr(cgfw_ctx__error(c.ctx),
				       bad_inputs[i].what))
			TH_LOG("case %zu: %s", i, cgfw_ctx__error(c.ctx));
		rw_done(&c);
	}
}

TEST(error_shows_the_line_and_carets)
{
	struct rw_case c;

	rw_run(&c, "table cgroup t {\n\tchain c {\n\t\ttype filter hook egress priority 0;\n\t}\n}\n");
	ASSERT_EQ(-EINVAL, c.ret);
	EXPECT_NE(NULL, strstr(cgfw_ctx__error(c.ctx),
			       "\t\ttype filter hook egress priority 0;\n"
			       "\t\t                 ^^^^^^\n"))
		TH_LOG("%s", cgfw_ctx__error(c.ctx));
	rw_done(&c);
}

TEST_HARNESS_MAIN
