#!/bin/bash
# log with the bpf backend: the programs write a record for each packet a
# log statement sees, cgfw daemon writes it to the kernel log as nf_log
# writes its line. The same datagrams (UDP from a fixed port, TCP SYNs,
# ICMP echo; IPv4 and IPv6) logged by nft's inet family (the emulated
# target) and by the bpf backend must give the same lines, but for the
# prefix and the IP ID; then a log no one reads counts what it loses.
# nf_log writes nothing for a network namespace other than the first
# unless net.netfilter.nf_log_all_netns is 1, and the daemon writes to
# the kernel log only with kernel.printk_devkmsg on (else the kernel
# keeps 10 lines in 5 s of it): both set for the test, and put back.
set -u
. "$(dirname "$0")/../lib/lib.sh"
if [ -z "${CGFW_IN_NS:-}" ] && [ "$(id -u)" = 0 ]; then
	all=/proc/sys/net/netfilter/nf_log_all_netns
	devkmsg=/proc/sys/kernel/printk_devkmsg
	was=$(cat $all 2>/dev/null) was_devkmsg=$(cat $devkmsg 2>/dev/null)
	echo 1 > $all 2>/dev/null
	echo on > $devkmsg 2>/dev/null
	CGFW_IN_NS=1 unshare -n -m "$0" "$@"
	rc=$?
	[ -n "$was" ] && echo "$was" > $all
	[ -n "$was_devkmsg" ] && echo "$was_devkmsg" > $devkmsg
	exit $rc
fi
ns_setup log
if ! dmesg > /dev/null 2>&1; then
	echo "ok 1 log # SKIP the kernel log cannot be read here (dmesg)"
	exit 0
fi

table() {	# table PREFIX
	cat <<EOT
table cgroup lg {
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		udp dport 7301 log prefix "$1" drop
		tcp dport 7302 log prefix "$1" level info drop
		icmp type echo-request log prefix "$1"
		icmpv6 type echo-request log prefix "$1"
	}
}
EOT
}
# traffic: from our cgroup, a datagram from port 7300 to 7301 (both
# families), a SYN to 7302, an echo request (both families)
traffic() {
	bash -c 'echo $$ > "$0/cgroup.procs"
	python3 - <<PY
import socket
for fam, a in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((a, 7300))
    try:
        s.sendto(b"x", (a, 7301))
    except OSError:
        pass
    s.close()
t = socket.socket()
t.settimeout(0.2)
try:
    t.connect(("127.0.0.1", 7302))
except OSError:
    pass
# echo requests, id 7, sequence 1 (raw: no ping needed)
for fam, proto, typ, a in ((socket.AF_INET, socket.IPPROTO_ICMP, 8, "127.0.0.1"),
                           (socket.AF_INET6, socket.IPPROTO_ICMPV6, 128, "::1")):
    r = socket.socket(fam, socket.SOCK_RAW, proto)
    body = bytes([typ, 0, 0, 0, 0, 7, 0, 1]) + b"cgfw"
    if fam == socket.AF_INET:
        c = sum(int.from_bytes(body[i:i + 2], "big") for i in range(0, len(body), 2))
        c = (c & 0xffff) + (c >> 16)
        body = body[:2] + (~c & 0xffff).to_bytes(2, "big") + body[4:]
    r.sendto(body, (a, 0))
PY' "$root/$cg"
}
# lines PREFIX: the kernel log's lines with PREFIX, the prefix and the IP
# ID (and the SYN's source port and window, which each connection picks)
# taken out
lines() {
	local end=$((SECONDS + 10))
	while [ $SECONDS -lt $end ]; do
		[ "$(dmesg | grep -c "$1")" -ge "$2" ] && break
		sleep 0.2
	done
	dmesg | grep -o "$1.*" | sed -e "s/^$1//" -e 's/ ID=[0-9]* / /' \
		-e 's/PROTO=TCP SPT=[0-9]* /PROTO=TCP /' -e 's/WINDOW=[0-9]* //' \
		-e 's/ *$//'
}

table "cgfw-nft-$$: " > "$work/nft.nft"
table "cgfw-bpf-$$: " > "$work/bpf.nft"
check "nft-emulated: the table applies" "$CGFW" apply -b nft-emulated "$work/nft.nft"
traffic
nft_lines=$(lines "cgfw-nft-$$: " 5)
"$CGFW" delete lg
check "nf_log wrote 5 lines (UDP and echo requests in both families, a SYN)" \
	test "$(echo "$nft_lines" | grep -c .)" = 5

mkdir -m 700 "$work/d"
"$CGFW" daemon -b bpf -d "$work/d" --no-guard 2> "$work/daemon.log" &
daemon=$!
trap 'kill $daemon 2>/dev/null; rm -rf "$work"; rmdir "$root/$cg"' EXIT
check "bpf: the table applies" "$CGFW" apply -b bpf "$work/bpf.nft"
check "cgfw daemon finds the table that logs" \
	wait_until 10 grep -q "reading the log records of 1 bpf tables into the kernel log" "$work/daemon.log"
traffic
bpf_lines=$(lines "cgfw-bpf-$$: " 5)
check "bpf: the same 5 lines as nf_log's, but the prefix and the IP ID" \
	test "$bpf_lines" = "$nft_lines"
[ "$bpf_lines" = "$nft_lines" ] ||
	diff <(echo "$nft_lines") <(echo "$bpf_lines") | sed 's/^/# /'

kill $daemon
wait $daemon 2>/dev/null
# where the kernel would keep 10 lines in 5 s of the daemon's, they go to
# its standard error, the journal's, with their level
echo ratelimit > /proc/sys/kernel/printk_devkmsg
"$CGFW" daemon -b bpf -d "$work/d" --no-guard 2> "$work/daemon2.log" &
daemon=$!
wait_until 10 grep -q "reading the log records of 1 bpf tables into standard error" "$work/daemon2.log"
traffic
check "with kernel.printk_devkmsg=ratelimit, the lines go to the daemon's standard error, said once" \
	bash -c "wait_for() { local end=\$((SECONDS + 10)); until grep -q '^<4>cgfw-bpf-$$: IN= OUT=lo SRC=127.0.0.1' '$work/daemon2.log'; do [ \$SECONDS -ge \$end ] && return 1; sleep 0.1; done; }; wait_for &&
		 grep -q 'into standard error (the kernel log takes 10 lines in 5 s from a program while kernel.printk_devkmsg is ratelimit, not on)' '$work/daemon2.log' &&
		 [ \$(grep -c '^<.>cgfw-bpf-$$: ' '$work/daemon2.log') = 5 ]"
kill $daemon
wait $daemon 2>/dev/null
# no reader: 256 KiB of records, 160 bytes each, then the rest lost
bash -c 'echo $$ > "$0/cgroup.procs"
	python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(2000):
    try:
        s.sendto(b\"x\", (\"127.0.0.1\", 7301))
    except OSError:
        pass
"' "$root/$cg"
check "bpf: without a reader, the records that do not fit are counted lost" \
	bash -c "'$CGFW' list lg | grep -q 'log records lost: [1-9]'"
"$CGFW" list lg | grep 'log records' | sed 's/^/# /'
"$CGFW" delete lg
echo "1..$n"
exit $fail
