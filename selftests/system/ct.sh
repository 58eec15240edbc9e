#!/bin/bash
# ct at egress with real packets: state, direction, status, mark, zone,
# protocol, addresses and ports of the connection-tracking entry, on the
# bpf backend (read through the kernel's BTF) against nft's inet family
# (the emulated target): every rule's counter the same, the same
# datagrams dropped, the same TCP data lost. The bpf table's conntrack
# keeper: made by the apply, said to be gone by list when "nft flush
# ruleset" removed it, made again by the next apply, gone with the table;
# held by cgfw daemon against the flush, or made again by it.
# At ingress ct is refused on bpf, at the rule; so is every ct rule on
# a kernel without BTF.
set -u
. "$(dirname "$0")/../lib/lib.sh"
ns_setup ct

cat > "$work/ct.in" <<EOT
table cgroup track {
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		ct state new counter
		ct state established counter
		ct state invalid,untracked counter
		ct direction original counter
		ct direction reply counter
		ct status seen-reply counter
		ct mark 0 counter
		ct mark 0x2a counter
		ct zone 0 counter
		ct original protocol udp counter
		ct original l3proto ipv6 counter
		ct original ip daddr 127.0.0.1 counter
		ct reply ip6 saddr ::1 counter
		meta l4proto udp ct reply proto-src 7204 counter
		meta l4proto udp ct original proto-dst @SRV@ counter
		udp dport 7203 ct state new drop
		tcp dport 7205 ct state established tcp flags & psh == psh drop
	}
}
EOT

# without the kernel's BTF the bpf backend cannot read the entry: refused
if [ ! -e /sys/kernel/btf/vmlinux ]; then
	sed "s/@SRV@/7207/" "$work/ct.in" > "$work/ct.nft"
	check "bpf: without the kernel's BTF, ct is refused at the rule, saying why" \
		bash -c "! '$CGFW' check -b bpf '$work/ct.nft' 2> '$work/nobtf.err' &&
			 grep -q \"ct.nft:4:3-4: Error: the bpf backend cannot do this: ct state reads the connection-tracking entry from the kernel's sk_buff, through BTF, which this kernel has not\" '$work/nobtf.err'"
	echo "1..$n"
	exit $fail
fi

# traffic K: sockets made before the process joins our cgroup are not of
# it (the peers), those made after are. Prints what happened: s sent,
# d refused, r received, t timed out. Run K's sockets of our cgroup have
# ports of their own, so that no run meets the entries of the one before.
traffic() {
	python3 - "$root/$cg" "$1" <<'PY'
import os, re, socket, struct, subprocess, sys
k = 10 * int(sys.argv[2])
out = ""
U, A4, A6 = socket.SOCK_DGRAM, socket.AF_INET, socket.AF_INET6
def sock(fam, port, kind=U):
    s = socket.socket(fam, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1" if fam == A4 else "::1", port))
    s.settimeout(2)
    return s
def send(s, addr):
    global out
    try:
        s.sendto(b"x", addr)
        out += "s"
    except PermissionError:
        out += "d"
def recv(s):
    global out
    try:
        s.recv(64)
        out += "r"
    except socket.timeout:
        out += "t"
peer, peer6 = sock(A4, 7204), sock(A6, 7204)
lis = sock(A4, 7205, socket.SOCK_STREAM)
lis.listen(1)
open(sys.argv[1] + "/cgroup.procs", "w").write("0")
c, srv, c6 = sock(A4, 7206 + k), sock(A4, 7207 + k), sock(A6, 7206 + k)
send(c, ("127.0.0.1", 7204)); recv(peer)	# new
send(c, ("127.0.0.1", 7204)); recv(peer)	# new: no reply yet
peer.sendto(b"y", ("127.0.0.1", 7206 + k)); recv(c)
send(c, ("127.0.0.1", 7204)); recv(peer)	# established
peer.sendto(b"y", ("127.0.0.1", 7207 + k)); recv(srv)
send(srv, ("127.0.0.1", 7204)); recv(peer)	# reply, established
send(c, ("127.0.0.1", 7203))			# new: dropped
send(c6, ("::1", 7204)); recv(peer6)
peer6.sendto(b"y", ("::1", 7206 + k)); recv(c6)
send(c6, ("::1", 7204)); recv(peer6)
# the counters before TCP, whose retransmissions depend on timing
ls = subprocess.run([os.environ["CGFW"], "list", "track"],
                    capture_output=True, text=True).stdout
counts = " ".join(re.findall(r"packets (\d+)", ls))
t = socket.create_connection(("127.0.0.1", 7205), timeout=2)
a, _ = lis.accept()
a.settimeout(1)
t.send(b"z")				# established: dropped
recv(a)
# no retransmissions of what was dropped into the next run: a reset
t.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
t.close(); a.close()
print(out)
print(counts)
PY
}

oracle= oracle_got= k=0
for b in nft-emulated bpf; do
	k=$((k + 1))
	sed "s/@SRV@/$((7207 + 10 * k))/" "$work/ct.in" > "$work/ct.nft"
	if ! out=$("$CGFW" apply -b "$b" "$work/ct.nft" 2>&1); then
		not_ok "$b: the table applies" "$out"
		continue
	fi
	{ read -r got; read -r c; } < <(CGFW=$CGFW traffic $k)
	if [ "$b" = nft-emulated ]; then
		oracle=$c oracle_got=$got
		check "nft-emulated: the exchange goes as planned: the new datagram to 7203 dropped, TCP data after the handshake lost (the handshake not) ($got)" \
			test "$got" = "srsrrsrrsrdsrrsrt"
		check "nft-emulated: new, established and reply packets, each counted ($c)" \
			bash -c "set -- $c; [ \$1 -gt 0 ] && [ \$2 -gt 0 ] && [ \$5 -gt 0 ] && [ \$6 -gt 0 ]"
		"$CGFW" delete track
		continue
	fi
	check "bpf: apply says where ct status means something else than at nft's output hook (confirmed)" \
		grep -q "ct.nft:9: ct status: the bpf backend reads the entry after POST_ROUTING" <<< "$out"
	check "bpf: the table's conntrack keeper is there" \
		bash -c "nft list table inet 'cgfw-ct-track' | grep -q 'ct state'"
	check "bpf: the same datagrams dropped and TCP data lost as nft's inet family ($got)" \
		test "$got" = "$oracle_got"
	check "bpf: every counter equal to nft's inet family ($c)" test "$c" = "$oracle"
	[ "$c" = "$oracle" ] || printf '#  nft-emulated: %s\n#  bpf:          %s\n' "$oracle" "$c"
	check "bpf: list says nothing is amiss while the keeper is there" \
		bash -c "! '$CGFW' list track | grep -q 'connection tracking'"
	nft flush ruleset
	check "bpf: after nft flush ruleset, list says the ct rules read no connection tracking" \
		bash -c "'$CGFW' list track | grep -q '# its ct rules read no connection tracking: their keeper, table inet cgfw-ct-track, is gone'"
	check "bpf: the next apply makes the keeper again" \
		bash -c "'$CGFW' apply -b bpf '$work/ct.nft' && nft list table inet 'cgfw-ct-track' > /dev/null &&
			 ! '$CGFW' list track | grep -q 'connection tracking'"
	sed '/ct /d; /ct$/d' "$work/ct.nft" > "$work/noct.nft"
	check "bpf: an apply without ct rules deletes the keeper" \
		bash -c "'$CGFW' apply -b bpf '$work/noct.nft' && ! nft list table inet 'cgfw-ct-track' 2> /dev/null"
	"$CGFW" apply -b bpf "$work/ct.nft" > /dev/null 2>&1
	"$CGFW" delete track
	check "bpf: delete takes the keeper with the table" \
		bash -c "! nft list table inet 'cgfw-ct-track' 2> /dev/null"
	nft add table inet cgfw-ct-track	# someone else's
	check "bpf: a table of a keeper's name that is not one is neither taken for it nor deleted" \
		bash -c "! '$CGFW' apply -b bpf '$work/ct.nft' 2> '$work/own.err' &&
			 grep -q 'ct.nft:1:[0-9-]*: Error: cannot make table inet cgfw-ct-track, which keeps connection tracking on' '$work/own.err' &&
			 '$CGFW' apply -b bpf '$work/noct.nft' 2> /dev/null && '$CGFW' delete track &&
			 nft list table inet cgfw-ct-track > /dev/null"
	nft delete table inet cgfw-ct-track
	sed 's/hook egress/hook ingress/' "$work/ct.nft" > "$work/in.nft"
	check "bpf: ct at ingress is refused at the rule, saying why" \
		bash -c "! '$CGFW' apply -b bpf '$work/in.nft' 2> '$work/in.err' &&
			 grep -q \"in.nft:4:3-4: Error: the bpf backend cannot do this: ct state at ingress: the kernel releases\" '$work/in.err' &&
			 ! nft list table inet 'cgfw-ct-track' 2> /dev/null"
done

# cgfw daemon: it holds the keeper, which nft flush ruleset passes by;
# with --no-hold it sees the keeper go and applies the table again
rules=$work/rules
mkdir -p "$rules"
cp "$work/ct.nft" "$rules/"
keeper() { nft list table inet cgfw-ct-track > /dev/null 2>&1; }
for hold in "" --no-hold; do
	"$CGFW" daemon -b bpf -d "$rules" $hold 2> "$work/log" &
	dpid=$!
	if ! wait_until 30 keeper; then
		not_ok "daemon $hold: the table and its keeper applied" "$(tail -5 "$work/log")"
	else
		sleep 1
		nft flush ruleset
		if [ -z "$hold" ]; then
			check "daemon: nft flush ruleset passes the keeper by (the daemon holds it)" keeper
		else
			check "daemon --no-hold: after nft flush ruleset, the daemon makes the keeper again" \
				wait_until 30 keeper
			check "daemon --no-hold: and says why" \
				grep -q "ct.nft: its tables were changed, or detached, by another program: applying them again" "$work/log"
		fi
	fi
	kill -TERM "$dpid"
	wait "$dpid"
	"$CGFW" delete track > /dev/null 2>&1
done
echo "1..$n"
exit $fail
