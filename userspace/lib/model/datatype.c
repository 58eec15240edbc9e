// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Keys and values of sets, printed as nft writes them, from their bytes and
 * their nft datatype (the set's key type; a concatenation keeps one type
 * per field, six bits each, the first field in the highest bits).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "front/intervals.h"
#include "model/datatype.h"

/* nftables' enum datatypes (include/datatype.h), the ones printed here */
enum {
	TYPE_INTEGER = 4,
	TYPE_STRING = 5,
	TYPE_IPADDR = 7,
	TYPE_IP6ADDR = 8,
	TYPE_ETHERADDR = 9,
	TYPE_ETHERTYPE = 10,
	TYPE_INET_PROTOCOL = 12,
	TYPE_INET_SERVICE = 13,
	TYPE_ICMP_TYPE = 14,
	TYPE_MARK = 19,
	TYPE_IFINDEX = 20,
	TYPE_UID = 24,
	TYPE_GID = 25,
	TYPE_ICMP6_TYPE = 29,
	TYPE_DSCP = 36,
	TYPE_IFNAME = 41,
	TYPE_CGROUPV2 = 46,
};

#define TYPE_BITS 6
#define TYPE_MASK ((1u << TYPE_BITS) - 1)

enum order { NET, HOST, BYTES };

static const struct dtype {
	uint32_t type;
	const char *name;
	uint32_t size;		/* bytes; 0: as long as the key */
	enum order order;
} dtypes[] = {
	{ TYPE_INTEGER, "integer", 0, HOST },
	{ TYPE_STRING, "string", 0, BYTES },
	{ TYPE_IPADDR, "ipv4_addr", 4, NET },
	{ TYPE_IP6ADDR, "ipv6_addr", 16, NET },
	{ TYPE_ETHERADDR, "ether_addr", 6, NET },
	{ TYPE_ETHERTYPE, "ether_type", 2, NET },
	{ TYPE_INET_PROTOCOL, "inet_proto", 1, NET },
	{ TYPE_INET_SERVICE, "inet_service", 2, NET },
	{ TYPE_ICMP_TYPE, "icmp_type", 1, NET },
	{ TYPE_MARK, "mark", 4, HOST },
	{ TYPE_IFINDEX, "iface_index", 4, HOST },
	{ TYPE_UID, "uid", 4, HOST },
	{ TYPE_GID, "gid", 4, HOST },
	{ TYPE_ICMP6_TYPE, "icmpv6_type", 1, NET },
	{ TYPE_DSCP, "dscp", 1, NET },
	{ TYPE_IFNAME, "ifname", 16, BYTES },
	{ TYPE_CGROUPV2, "cgroupsv2", 8, HOST },
};

static const struct dtype *dtype_of(uint32_t type)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dtypes); i++)
		if (dtypes[i].type == type)
			return &dtypes[i];
	return NULL;
}

size_t cgfw_model_type_fields(uint32_t type, uint32_t *out, size_t max)
{
	uint32_t v[8];
	size_t n = 0, i;

	do {
		if (n == ARRAY_SIZE(v))
			return 0;
		v[n++] = type & TYPE_MASK;
		type >>= TYPE_BITS;
	} while (type);
	if (n > max)
		return 0;
	for (i = 0; i < n; i++)	/* the first field is in the highest bits */
		out[i] = v[n - 1 - i];
	return n;
}

const char *cgfw_model_type_name(uint32_t type)
{
	const struct dtype *d = dtype_of(type);

	return d ? d->name : NULL;
}

static const char *proto_name(unsigned int p)
{
	switch (p) {
	case 1: return "icmp";
	case 6: return "tcp";
	case 17: return "udp";
	case 33: return "dccp";
	case 47: return "gre";
	case 50: return "esp";
	case 51: return "ah";
	case 58: return "ipv6-icmp";
	case 132: return "sctp";
	case 136: return "udplite";
	}
	return NULL;
}

static uint64_t int_of(const uint8_t *b, uint32_t len, enum order o)
{
	uint64_t v = 0;
	uint32_t i;

	if (len > 8)
		len = 8;
	if (o == HOST) {
		memcpy(&v, b, len);	/* little-endian host */
		return v;
	}
	for (i = 0; i < len; i++)
		v = v << 8 | b[i];
	return v;
}

static void hex(struct model_value *v, const uint8_t *b, uint32_t len)
{
	size_t at = 2;
	uint32_t i;

	strcpy(v->s, "0x");
	for (i = 0; i < len && at + 3 < sizeof(v->s); i++, at += 2)
		snprintf(v->s + at, sizeof(v->s) - at, "%02x", b[i]);
	v->number = false;
}

/* One field: @len bytes of type @type. */
static void field(struct model_value *v, uint32_t type, uint32_t byteorder,
		  const uint8_t *b, uint32_t len)
{
	const struct dtype *d = dtype_of(type);
	enum order o = d ? d->order : NET;
	const char *name;
	uint64_t n;

	memset(v, 0, sizeof(*v));
	if ((type == TYPE_INTEGER && byteorder == MODEL_BIG_ENDIAN) ||
	    byteorder == MODEL_ALL_BIG_ENDIAN)
		o = NET;
	switch (type) {
	case TYPE_IPADDR:
		if (len == 4) {
			inet_ntop(AF_INET, b, v->s, sizeof(v->s));
			return;
		}
		break;
	case TYPE_IP6ADDR:
		if (len == 16) {
			inet_ntop(AF_INET6, b, v->s, sizeof(v->s));
			return;
		}
		break;
	case TYPE_ETHERADDR:
		if (len >= 6) {
			snprintf(v->s, sizeof(v->s),
				 "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1],
				 b[2], b[3], b[4], b[5]);
			return;
		}
		break;
	case TYPE_IFNAME:
	case TYPE_STRING:
		snprintf(v->s, sizeof(v->s), "\"%.*s\"",
			 (int)strnlen((const char *)b, len), b);
		v->quoted = true;
		return;
	case TYPE_INET_PROTOCOL:
		name = len == 1 ? proto_name(b[0]) : NULL;
		if (name) {
			snprintf(v->s, sizeof(v->s), "%s", name);
			return;
		}
		break;
	case TYPE_MARK:
		if (len == 4) {
			snprintf(v->s, sizeof(v->s), "0x%08" PRIx64,
				 int_of(b, len, o));
			return;
		}
		break;
	default:
		break;
	}
	if (!d || (len > 8 && o != BYTES)) {
		hex(v, b, len);
		return;
	}
	n = int_of(b, len, o);
	snprintf(v->s, sizeof(v->s), "%" PRIu64, n);
	v->number = true;
}

/* The bytes each field of a concatenation takes: its size, in words. */
static uint32_t field_len(uint32_t type)
{
	const struct dtype *d = dtype_of(type);

	return d && d->size ? (d->size + 3) / 4 * 4 : 0;
}

size_t cgfw_model_key_values(uint32_t type, uint32_t byteorder, const uint8_t *key,
			     uint32_t len, struct model_value *out, size_t max)
{
	uint32_t types[8], off = 0, flen, i;
	size_t n = cgfw_model_type_fields(type, types, ARRAY_SIZE(types));

	if (n <= 1 || n > max) {	/* one field: the whole key */
		if (!max)
			return 0;
		field(&out[0], n == 1 ? types[0] : 0, byteorder, key, len);
		return 1;
	}
	for (i = 0; i < n; i++) {
		flen = field_len(types[i]);
		if (!flen || off + flen > len)
			goto whole;
		/* the value itself is the type's size, at the word's start */
		field(&out[i], types[i], byteorder, key + off,
		      dtype_of(types[i])->size);
		off += flen;
	}
	if (off == len)
		return n;
whole:
	hex(&out[0], key, len);
	return 1;
}

int cgfw_model_field_prefix_len(uint32_t type, const uint8_t *lo,
				const uint8_t *hi, uint32_t len, size_t i)
{
	uint32_t types[8], off = 0, k;
	size_t n = cgfw_model_type_fields(type, types, ARRAY_SIZE(types));

	if (i >= n)
		return -1;
	for (k = 0; k < i; k++)
		off += field_len(types[k]);
	if (!field_len(types[i]) || off + field_len(types[i]) > len)
		return -1;
	return cgfw_model_prefix_len(types[i], lo + off, hi + off,
				     dtype_of(types[i])->size);
}

int cgfw_model_prefix_len(uint32_t type, const uint8_t *lo, const uint8_t *hi,
			  uint32_t len)
{
	cgfw_u128 a, b, m;
	unsigned int bits = len * 8, k;

	if ((type != TYPE_IPADDR && type != TYPE_IP6ADDR) || len > 16)
		return -1;
	a = cgfw_be_get(lo, len);
	b = cgfw_be_get(hi, len);
	for (k = 0; k <= bits; k++) {
		m = k == 128 ? ~(cgfw_u128)0 : ((cgfw_u128)1 << k) - 1;
		if ((a & m) || (a | m) != b)
			continue;
		return bits - k;
	}
	return -1;
}

const char *cgfw_model_verdict_str(int32_t verdict)
{
	switch (verdict) {
	case 1: /* NF_ACCEPT */
		return "accept";
	case 0: /* NF_DROP */
		return "drop";
	case -1: /* NFT_CONTINUE */
		return "continue";
	case -2: /* NFT_BREAK */
		return "break";
	case -3: /* NFT_JUMP */
		return "jump";
	case -4: /* NFT_GOTO */
		return "goto";
	case -5: /* NFT_RETURN */
		return "return";
	}
	return "unknown";
}
