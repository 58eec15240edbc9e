// SPDX-License-Identifier: GPL-2.0
/*
 * cgfw's own formats, without root: the bpf description written and read
 * back (and refused when it is not one), the JSON writer, set keys as nft
 * writes them, and the listing printed from a model, in nft syntax with
 * live counters and quotas in place, and as nft's JSON.
 */
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "kselftest_harness.h"
#include "base/json.h"
#include "bpf/desc.h"
#include "listjson.h"
#include "model/datatype.h"
#include "nl/netlink.h"
#include "model/model.h"

TEST(a_description_reads_back_as_written)
{
	struct strbuf sb;
	struct desc d;

	cgfw_sb_init(&sb);
	cgfw_desc_put_header(&sb, 42, NFPROTO_CGROUP, "web", true);
	cgfw_desc_put_chain(&sb, &(struct desc_chain){
		.name = "out", .base = true, .dir = 1, .policy = NF_DROP,
		.priority = -5, .cgroup_path = "/sys/fs/cgroup/a b",
		.cgroup_id = 1234 });
	cgfw_desc_put_rule(&sb, &(struct desc_rule){
		.chain = 0, .text = "tcp dport 22 counter accept",
		.counter = true });
	cgfw_desc_put_rule(&sb, &(struct desc_rule){ .chain = 0 });
	cgfw_desc_put_prog(&sb, &(struct desc_prog){
		.dir = 1, .cgroup_id = 1234, .counters_id = 7 });
	cgfw_desc_put_slot(&sb, &(struct desc_slot){
		.prog = 0, .slot = 3, .chain = 0, .rule = -1 });
	cgfw_desc_put_quota(&sb, &(struct desc_quota){
		.map_id = 9, .slot = 1, .chain = 0, .rule = 1,
		.bytes = 100 });
	ASSERT_FALSE(sb.oom);
	ASSERT_EQ(0, cgfw_desc_parse(sb.buf, sb.len, &d));
	EXPECT_EQ(42, d.gen);
	EXPECT_EQ(NFPROTO_CGROUP, d.with_nft);
	EXPECT_TRUE(d.conntrack);
	EXPECT_STREQ("web", d.table);
	ASSERT_EQ(1, d.n_chains);
	EXPECT_STREQ("/sys/fs/cgroup/a b", d.chains[0].cgroup_path);
	EXPECT_EQ(-5, d.chains[0].priority);
	EXPECT_EQ(1234, d.chains[0].cgroup_id);
	ASSERT_EQ(2, d.n_rules);
	EXPECT_STREQ("tcp dport 22 counter accept", d.rules[0].text);
	EXPECT_TRUE(d.rules[0].counter);
	EXPECT_EQ(NULL, d.rules[1].text);
	ASSERT_EQ(1, d.n_slots);
	EXPECT_EQ(-1, d.slots[0].rule);
	ASSERT_EQ(1, d.n_quotas);
	EXPECT_EQ(100, d.quotas[0].bytes);
	cgfw_desc_release(&d);
	cgfw_sb_release(&sb);
}

TEST(what_is_not_a_description_is_refused)
{
	struct strbuf sb;
	struct desc d;

	cgfw_sb_init(&sb);
	/* a rule of a chain that does not exist */
	cgfw_desc_put_header(&sb, 1, 0, "t", false);
	cgfw_desc_put_rule(&sb, &(struct desc_rule){ .chain = 3 });
	EXPECT_EQ(-EINVAL, cgfw_desc_parse(sb.buf, sb.len, &d));
	cgfw_sb_release(&sb);
	/* no header */
	EXPECT_EQ(-EINVAL, cgfw_desc_parse("", 0, &d));
	/* bytes that are not attributes */
	EXPECT_EQ(-EINVAL, cgfw_desc_parse("\xff\xff\x01\x00garbage", 11,
					    &d));
}

TEST(the_json_writer_separates_and_escapes)
{
	struct cgfw_json j;
	struct strbuf sb;

	cgfw_sb_init(&sb);
	cgfw_json_init(&j, &sb);
	cgfw_json_obj_open(&j);
	cgfw_json_kv_str(&j, "s", "a\"b\\c\nd\x01");
	cgfw_json_key(&j, "a");
	cgfw_json_arr_open(&j);
	cgfw_json_u64(&j, 1);
	cgfw_json_s64(&j, -2);
	cgfw_json_obj_open(&j);
	cgfw_json_obj_close(&j);
	cgfw_json_null(&j);
	cgfw_json_arr_close(&j);
	cgfw_json_kv_bool(&j, "b", true);
	cgfw_json_obj_close(&j);
	EXPECT_STREQ("{\"s\":\"a\\\"b\\\\c\\nd\\u0001\",\"a\":[1,-2,{},null],\"b\":true}",
		     sb.buf);
	cgfw_sb_release(&sb);
}

static const char *key_text(uint32_t type, const void *key, uint32_t len)
{
	static char out[256];
	struct model_value v[8];
	size_t n, i;

	n = cgfw_model_key_values(type, 0, key, len, v, 8);
	out[0] = '\0';
	for (i = 0; i < n; i++)
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s",
			 i ? " . " : "", v[i].s);
	return out;
}

TEST(set_keys_are_written_as_nft_writes_them)
{
	uint8_t v4[4] = { 192, 0, 2, 1 }, v6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	uint8_t concat[8] = { 10, 0, 0, 1, 0x01, 0xbb, 0, 0 };
	uint16_t port = htons(443);
	uint32_t mark = 42;
	uint8_t proto = 6, lo[4] = { 10, 0, 0, 0 }, hi[4] = { 10, 255, 255, 255 };

	EXPECT_STREQ("192.0.2.1", key_text(7, v4, 4));
	EXPECT_STREQ("2001:db8::", key_text(8, v6, 16));
	EXPECT_STREQ("443", key_text(13, &port, 2));
	EXPECT_STREQ("0x0000002a", key_text(19, &mark, 4));
	EXPECT_STREQ("tcp", key_text(12, &proto, 1));
	/* ipv4_addr . inet_service */
	EXPECT_STREQ("10.0.0.1 . 443", key_text(7 << 6 | 13, concat, 8));
	/* a type cgfw does not know: hexadecimal */
	EXPECT_STREQ("0xc0000201", key_text(63, v4, 4));
	EXPECT_EQ(8, cgfw_model_prefix_len(7, lo, hi, 4));
	hi[3] = 0xfe;
	EXPECT_EQ(-1, cgfw_model_prefix_len(7, lo, hi, 4));
}

/* A model of one table, as a backend fills it. */
static struct cgfw_listing *listing(void)
{
	struct cgfw_listing *l = calloc(1, sizeof(*l));
	struct model_table *t = cgfw_model_add_table(l);
	struct model_chain *c;
	struct model_rule *r;
	struct model_set *s;
	struct model_elem *e;
	uint16_t p;

	t->name = strdup("web");
	t->backend = "bpf";
	t->kernel_name = strdup("/sys/fs/bpf/cgfw/web");
	t->generation = 7;
	s = cgfw_model_add_set(t);
	s->name = strdup("ports");
	s->key_type = 13;
	s->key_len = 2;
	s->flags = NFT_SET_INTERVAL;
	e = cgfw_model_add_elem(s);
	e->key = malloc(2);
	e->key_end = malloc(2);
	p = htons(1000);
	memcpy(e->key, &p, 2);
	p = htons(2000);
	memcpy(e->key_end, &p, 2);
	c = cgfw_model_add_chain(t);
	c->name = strdup("out");
	c->base = true;
	c->dir = CGFW_EGRESS;
	c->policy = NF_DROP;
	c->cgroup_path = strdup("/sys/fs/cgroup/web");
	c->cgroup_id = 99;
	c->binding = MODEL_STALE;
	c->policy_counter = (struct model_counter){ true, 5, 500 };
	r = cgfw_model_add_rule(c);
	r->text = strdup("tcp dport @ports counter accept # \"counter\"");
	r->counter = (struct model_counter){ true, 3, 180 };
	r = cgfw_model_add_rule(c);
	r->text = strdup("udp dport 53 counter packets 9 bytes 9 quota over 100 bytes drop");
	r->counter = (struct model_counter){ true, 1, 60 };
	r->has_quota = true;
	r->quota_used = 100;
	return l;
}

TEST(the_listing_shows_the_rules_with_their_live_counters)
{
	struct cgfw_listing *l = listing();
	char *text;

	ASSERT_EQ(0, cgfw_listing__format(l, NULL, &text));
	EXPECT_NE(NULL, strstr(text, "\t\ttcp dport @ports counter packets 3 bytes 180 accept # \"counter\"\n"))
		TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "udp dport 53 counter packets 1 bytes 60 quota over 100 bytes used 100 bytes drop\n"))
		TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "elements = { 1000-2000 }"));
	EXPECT_NE(NULL, strstr(text, "policy drop; # STALE"));
	EXPECT_NE(NULL, strstr(text, "# policy drop: 5 packets, 500 bytes"));
	EXPECT_EQ(1, cgfw_listing__unbound(l));
	free(text);
	cgfw_listing__free(l);
}

TEST(the_json_listing_is_nfts_schema_with_cgfws_additions)
{
	CGFW_OPTS(cgfw_format_opts, fo, .json = true);
	struct cgfw_listing *l = listing();
	struct jobj *o;
	size_t n;
	char *text;

	ASSERT_EQ(0, cgfw_listing__format(l, &fo, &text));
	ASSERT_EQ(0, jobjs_read(text, &o, &n)) TH_LOG("%s", text);
	ASSERT_EQ(6, n);	/* metainfo, table, set, chain, 2 rules */
	EXPECT_TRUE(jis(&o[1], "table.family", "cgroup"));
	EXPECT_TRUE(jis(&o[1], "table.cgfw.backend", "bpf"));
	EXPECT_TRUE(jis(&o[2], "set.elem.0.range.0", "1000"));
	EXPECT_TRUE(jis(&o[3], "chain.hook", "egress"));
	EXPECT_TRUE(jis(&o[3], "chain.cgroup", "/sys/fs/cgroup/web"));
	EXPECT_TRUE(jis(&o[3], "chain.cgfw.binding", "stale"));
	EXPECT_TRUE(jis(&o[4], "rule.cgfw.counter.bytes", "180"));
	EXPECT_TRUE(jis(&o[5], "rule.cgfw.quota_used", "100"));
	jobjs_free(o, n);
	free(text);
	cgfw_listing__free(l);
}

TEST(an_options_struct_with_unknown_fields_set_is_refused)
{
	struct {
		struct cgfw_format_opts o;
		int newer_field;
	} big = { .o = { .sz = sizeof(big) }, .newer_field = 1 };
	struct cgfw_listing *l = listing();
	char *text;

	EXPECT_EQ(-EINVAL, cgfw_listing__format(l, &big.o, &text));
	big.newer_field = 0;	/* known size, zeros past it: fine */
	ASSERT_EQ(0, cgfw_listing__format(l, &big.o, &text));
	free(text);
	cgfw_listing__free(l);
}

TEST_HARNESS_MAIN
