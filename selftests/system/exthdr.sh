#!/bin/bash
# Extension headers, TCP options and SCTP chunks (exthdr) with real
# packets: the same table on every backend this kernel has, connections
# made from our cgroup to a listener on 127.0.0.1 (the kernel's SYN
# carries MSS, SACK permitted, timestamps and window scale; the rest of
# the connection timestamps only) and on ::1 with a hop-by-hop header,
# and SCTP packets of a few chunks (raw: no association is needed). Each
# rule's counter must be what nft's inet family (the emulated target)
# counts, and each drop must stop the same packets.
set -u
. "$(dirname "$0")/../lib/lib.sh"
ns_setup exthdr

cat > "$work/opts.nft" <<EOT
table cgroup opts {
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		tcp option maxseg exists counter
		tcp option maxseg size 65495 counter
		tcp option maxseg size 1460 counter
		tcp option sack-perm exists counter
		tcp option sack-perm missing counter
		tcp option timestamp exists counter
		tcp option window exists counter
		tcp option window count 7 counter
		tcp option fastopen exists counter
		tcp option sack exists counter
		tcp option 254 exists counter
		tcp dport 7001 tcp option sack-perm exists drop
		tcp dport 7002 tcp option window count > 20 drop
		exthdr hbh exists counter
		meta nfproto ipv6 exthdr dst missing counter
		hbh nexthdr tcp counter
		tcp dport 7003 exthdr hbh exists drop
		sctp chunk init exists counter
		sctp chunk data exists counter
		sctp chunk init num-inbound-streams 5 counter
		sctp chunk data tsn 7 counter
		sctp chunk abort exists drop
	}
}
EOT
# sctps: SCTP packets (raw, no association) from our cgroup to 127.0.0.1,
# "s" if sent, "d" if dropped: an INIT (5 inbound streams), a DATA (TSN
# 7), a DATA then an ABORT, a chunk of length 0 before an ABORT (nft's
# walk ends there)
sctps() {
	bash -c 'echo $$ > "$0/cgroup.procs"
	python3 - <<PY
import errno, socket, struct
def chunk(t, body):
    c = struct.pack("!BBH", t, 0, 4 + len(body)) + body
    return c + bytes(-len(c) % 4)
common = struct.pack("!HHII", 5000, 5001, 0, 0)
pkts = [chunk(1, struct.pack("!IIHHI", 1, 65535, 5, 5, 1)),
        chunk(0, struct.pack("!IHHI", 7, 0, 0, 0) + b"x"),
        chunk(0, struct.pack("!IHHI", 8, 0, 0, 0) + b"y") + chunk(6, b""),
        struct.pack("!BBH", 0, 0, 0) + chunk(6, b"")]
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_SCTP)
out = ""
for p in pkts:
    try:
        s.sendto(common + p, ("127.0.0.1", 0))
        out += "s"
    except PermissionError:
        out += "d"
print(out)
PY' "$root/$cg"
}
# connects PORT...: for each, "c" if a connection from our cgroup was
# made, "x" if not (a dropped SYN: connect() fails within 2 s); the
# connection to [::1] carries a hop-by-hop header (IPV6_HOPOPTS)
connects() {
	bash -c 'echo $$ > "$0/cgroup.procs"
	python3 - "$@" <<PY
import socket, sys
out = ""
for p in sys.argv[1:]:
    v6 = p.startswith("6:")
    port = int(p[2:] if v6 else p)
    s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET)
    if v6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_HOPOPTS,
                     bytes([0, 0, 1, 4, 0, 0, 0, 0]))
    s.settimeout(2)
    try:
        s.connect(("::1" if v6 else "127.0.0.1", port))
        s.send(b"x")
        out += "c"
    except OSError:
        out += "x"
    s.close()
print(out)
PY' "$root/$cg" "$@"
}
listen() {	# a listener on each port, both families, until the test ends
	python3 - "$@" <<'PY' &
import socket, sys, time
ls = []
for p in sys.argv[1:]:
    for fam, a in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        s = socket.socket(fam)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((a, int(p)))
        s.listen(64)
        ls.append(s)
time.sleep(600)
PY
	listener=$!
}
listen 7000 7001 7002 7003
for i in $(seq 50); do ss -ltn | grep -q ":7003 " && break; sleep 0.1; done
trap 'kill $listener 2>/dev/null; rm -rf "$work"; rmdir "$root/$cg"' EXIT

# counters NAME: the rules' counters, one per line, as cgfw list says them
counters() { "$CGFW" list opts | grep -o 'packets [0-9]* bytes [0-9]*'; }

# Packets nft's header walks refuse or stop in (sent raw, as they are):
# a hop-by-hop header cut short before a destination options header, a
# routing header of 2 bytes, a hop-by-hop header of 1 byte, AH then TCP
# (nf_tables stops at AH: its layer 4 protocol is AH), and later
# fragments of SCTP (nft walks the chunks from its own offset: IPv4's
# header length, IPv6's 0)
cat > "$work/crafted.nft" <<EOT
table cgroup crafted {
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		exthdr dst exists counter
		exthdr hbh exists counter
		exthdr rt exists counter
		sctp chunk abort exists counter
		sctp chunk data missing counter
		tcp option maxseg exists counter
		meta l4proto tcp counter
		meta l4proto ah counter
	}
}
EOT
crafted() {
	bash -c 'echo $$ > "$0/cgroup.procs"
	python3 - <<PY
import socket, struct
def v6(nh, payload, src=None):
    src = src or socket.inet_pton(socket.AF_INET6, "::1")
    return (struct.pack("!IHBB", 6 << 28, len(payload), nh, 64) + src +
            socket.inet_pton(socket.AF_INET6, "::1") + payload)
def v4(proto, fragoff, payload):
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1,
                       fragoff, 64, proto, 0, socket.inet_aton("127.0.0.1"),
                       socket.inet_aton("127.0.0.1")) + payload
tcp = (struct.pack("!HHIIBBHHH", 5000, 7000, 1, 0, 6 << 4, 2, 65535, 0, 0) +
       bytes([2, 4, 5, 180]))
pkts = [v6(0, bytes([60, 0, 1, 0])), v6(43, bytes([59, 0])), v6(0, bytes([59])),
        v6(51, bytes([6, 1, 0, 0]) + bytes(8) + tcp),
        v4(132, 1, bytes(12) + bytes([6, 0, 0, 4])),
        v6(44, struct.pack("!BBHI", 132, 0, 8 << 3, 7) + bytes(16),
           bytes([0, 0, 0, 0, 6, 0, 0, 4]) + bytes(7) + b"\x01")]
for p in pkts:
    fam = socket.AF_INET6 if p[0] >> 4 == 6 else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s.sendto(p, ("::1" if fam == socket.AF_INET6 else "127.0.0.1", 0))
PY' "$root/$cg"
}

oracle=
for b in $(test_backends); do
	[ "$b" = both ] && continue
	if ! out=$("$CGFW" apply -b "$b" "$work/opts.nft" 2>&1); then
		not_ok "$b: the table applies" "$out"
		continue
	fi
	got=$(connects 7000 7001 7002 7003 6:7000 6:7003)$(sctps)
	c=$(counters | tr '\n' ' ')
	[ -n "${EXTHDR_DEBUG:-}" ] && echo "# $b: $c"
	"$CGFW" delete opts
	if [ -z "$oracle" ]; then
		oracle_c=$got oracle=$c
		check "$b: SYNs with SACK permitted are dropped by their rule, a hop-by-hop header by its own, an SCTP ABORT by its own ($got)" \
			test "$got" = cxcccxssds
		check "$b: the counters count (the MSS rule: $(echo "$c" | cut -d' ' -f1-4))" \
			bash -c "[ '$(echo "$c" | cut -d' ' -f2)' != 0 ]"
		continue
	fi
	check "$b: the same connections as nft's inet family ($got)" \
		test "$got" = "$oracle_c"
	check "$b: every counter equal to nft's inet family" \
		test "$c" = "$oracle"
	[ "$c" = "$oracle" ] || printf '#  nft-emulated: %s\n#  %s: %s\n' "$oracle" "$b" "$c"
done

coracle=
for b in $(test_backends); do
	[ "$b" = both ] && continue
	if ! out=$("$CGFW" apply -b "$b" "$work/crafted.nft" 2>&1); then
		not_ok "$b: the table for crafted packets applies" "$out"
		continue
	fi
	crafted
	c=$("$CGFW" list crafted | grep -o 'packets [0-9]*' | tr '\n' ' ')
	"$CGFW" delete crafted
	if [ -z "$coracle" ]; then
		coracle=$c
		check "$b: crafted packets counted ($c)" test -n "$c"
		continue
	fi
	check "$b: crafted packets (headers cut short, AH, SCTP fragments) counted as nft's inet family counts them" \
		test "$c" = "$coracle"
	[ "$c" = "$coracle" ] || printf '#  nft-emulated: %s\n#  %s: %s\n' "$coracle" "$b" "$c"
done
echo "1..$n"
exit $fail
