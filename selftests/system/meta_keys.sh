#!/bin/bash
# The clock, the socket and generated numbers with real packets: meta
# time, day and hour (the wall clock), socket mark and wildcard (the
# sending socket), numgen random and inc; and the input device at egress,
# which there is none of (index 0, no name, no type or group). The same table on every backend this kernel
# has, datagrams sent from our cgroup by unbound, connected and marked
# sockets; and the link layer header at egress, which a packet does not
# have yet there; the name, type and group of the device each hook has
# (the output device at egress, the input device at ingress, which a
# datagram to a socket of ours passes); each rule's counter must be what nft's inet family (the
# emulated target) counts, and each drop must stop the same datagrams.
# TZ=UTC: nft reads the times in the table in the local time zone.
set -u
. "$(dirname "$0")/../lib/lib.sh"
ns_setup meta
export TZ=UTC

# meta day counts in the kernel's time zone (sys_tz, settimeofday()),
# not TZ: the weekday as the kernel reckons it, today and tomorrow, not
# within a minute of the kernel's midnight
kday() {
	python3 - "$1" <<'PY'
import ctypes, sys, time
tz = (ctypes.c_int * 2)()
ctypes.CDLL(None, use_errno=True).syscall(96, None, tz)	# gettimeofday
secs = int(time.time()) - 60 * tz[0]
if sys.argv[1] == "left":
    print(86400 - secs % 86400)
else:
    days = ["Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"]
    print(days[(secs // 86400 + int(sys.argv[1])) % 7])
PY
}
left=$(kday left)
[ "$left" -lt 60 ] && sleep $((left + 1))
now=$(date +%s)
hm() { date -d "@$1" +%H:%M; }
day=$(kday 0) other=$(kday 1)
# the hour rules: a window of an hour around now, and the hour after it
# (nft takes a window across midnight as its complement: still one rule)
win="\"$(hm $((now - 1800)))\"-\"$(hm $((now + 1800)))\""
later="\"$(hm $((now + 2400)))\"-\"$(hm $((now + 5400)))\""
soon=$(date -d "@$((now + 3600))" '+%Y-%m-%d %H:%M:%S')

# the device's name, type and group: the bpf backend reads them through
# the kernel's BTF, where it has it
devrules=
if [ -e /sys/kernel/btf/vmlinux ]; then
	devrules='		meta oifname "lo" counter
		meta oifname != "lo" counter
		meta oiftype loopback counter
		meta oifgroup 0 counter
'
fi
cat > "$work/meta.nft" <<EOT
table cgroup clock {
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		meta hour $win counter
		meta hour $later counter
		meta day "$day" counter
		meta day "$other" counter
		meta time < "$soon" counter
		meta time > "$soon" counter
		socket wildcard 1 counter
		socket wildcard 0 counter
		socket mark 0x2a counter
		socket mark 0 counter
		udp dport 7102 socket wildcard 1 drop
		udp dport 7103 socket mark 0x2a drop
		meta hour $later udp dport 7104 drop
		meta day "$day" udp dport 7105 drop
		numgen random mod 2 0 counter
		numgen random mod 2 offset 5 5 counter
		numgen random mod 2 offset 5 6 counter
		numgen inc mod 3 0 counter
		numgen inc mod 3 offset 7 8 counter
		meta iif != "lo" counter
		meta iifname != "lo" counter
		meta iifname "lo" counter
		meta iiftype loopback counter
		meta iifgroup 0 counter
		ether saddr != 00:00:00:00:00:00 counter
		@ll,0,8 != 0xff counter
$devrules	}
}
EOT

# sends: from our cgroup, to 127.0.0.1 and ::1, one datagram to each port
# by an unbound socket, a connected one and one marked 0x2a (SO_MARK),
# then 200 by an unbound socket to 7100; "s" if sent, "d" if refused
sends() {
	bash -c 'echo $$ > "$0/cgroup.procs"
	python3 - <<PY
import socket
out = ""
def send(fam, addr, port, how):
    global out
    s = socket.socket(fam, socket.SOCK_DGRAM)
    if how == "mark":
        s.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, 0x2a)
    try:
        if how == "connected":
            s.connect((addr, port))
            s.send(b"x")
        else:
            s.sendto(b"x", (addr, port))
        out += "s"
    except PermissionError:
        out += "d"
    s.close()
for fam, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    for port in (7101, 7102, 7103, 7104, 7105):
        for how in ("unbound", "connected", "mark"):
            send(fam, addr, port, how)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(200):
    s.sendto(b"x", ("127.0.0.1", 7100))
print(out)
PY' "$root/$cg"
}

# the counters of the rules, one a line, as cgfw list says them
counters() { "$CGFW" list clock | grep -o 'packets [0-9]*' | awk '{print $2}'; }

oracle=
for b in $(test_backends); do
	[ "$b" = both ] && continue
	if [ "$b" = nft-native ]; then
		# the family has no socket expression (it runs where the
		# socket is known): refused at the first socket rule
		check "$b: socket rules are refused at the first of them" \
			bash -c "! '$CGFW' apply -b nft-native '$work/meta.nft' 2> '$work/native.err' &&
				 grep -q 'meta.nft:10:[0-9-]*: Error: ' '$work/native.err'"
		continue
	fi
	if ! out=$("$CGFW" apply -b "$b" "$work/meta.nft" 2>&1); then
		not_ok "$b: the table applies" "$out"
		continue
	fi
	got=$(sends)
	mapfile -t c < <(counters)
	"$CGFW" delete clock
	[ -n "${META_DEBUG:-}" ] && echo "# $b: $got ${c[*]}"
	# the numgen rules, after the drops, each its own draw: of the
	# datagrams sent, some take each value and some not (over 200
	# datagrams: about 2^-199 to fail by chance)
	sent=$(( $(printf '%s' "$got" | tr -cd s | wc -c) + 200 ))
	check "$b: numgen random mod 2 draws both values (${c[10]}, ${c[11]} and ${c[12]} of $sent matched)" \
		test "${c[10]}" -gt 0 -a "${c[10]}" -lt "$sent" -a \
		"${c[11]}" -gt 0 -a "${c[11]}" -lt "$sent" -a \
		"${c[12]}" -gt 0 -a "${c[12]}" -lt "$sent"
	unset 'c[10]' 'c[11]' 'c[12]'
	c="${c[*]}"
	[ -z "$oracle" ] &&
	check "$b: numgen inc mod 3 counts 0, 1, 2, 0 ... ($(echo "$c" | cut -d' ' -f11-12) of $sent)" \
		test "$(echo "$c" | cut -d' ' -f11-12)" = "$(((sent + 2) / 3)) $(((sent + 1) / 3))"
	if [ -z "$oracle" ]; then
		oracle=$c oracle_got=$got
		# per family: 7101 all sent; 7102 unbound dropped; 7103 marked
		# dropped; 7104 (the hour after) all sent; 7105 (today) dropped
		check "$b: datagrams dropped by wildcard, mark and day, not by a later hour ($got)" \
			test "$got" = sssdsdssdsssdddsssdsdssdsssddd
		check "$b: the clock's rules count this hour, today and before the next hour, not the others ($c)" \
			bash -c "set -- $c; [ \$1 -gt 0 ] && [ \$2 = 0 ] && [ \$3 = \$1 ] && [ \$4 = 0 ] && [ \$5 = \$1 ] && [ \$6 = 0 ]"
		check "$b: at egress no input device: iif and iifname are not lo's, no type or group matches ($(echo "$c" | cut -d' ' -f13-17))" \
			bash -c "set -- $c; [ \${13} -gt 0 ] && [ \${14} = \${13} ] && [ \${15} = 0 ] && [ \${16} = 0 ] && [ \${17} = 0 ]"
		check "$b: at egress no link layer header: ether saddr != and @ll != match nothing ($(echo "$c" | cut -d' ' -f18-19))" \
			bash -c "set -- $c; [ \${18} = 0 ] && [ \${19} = 0 ]"
		[ -n "$devrules" ] &&
		check "$b: at egress the output device is lo, of type loopback, group 0 ($(echo "$c" | cut -d' ' -f20-23))" \
			bash -c "set -- $c; [ \${20} -gt 0 ] && [ \${21} = 0 ] && [ \${22} = \${20} ] && [ \${23} = \${20} ]"

		continue
	fi
	check "$b: the same datagrams dropped as nft's inet family ($got)" \
		test "$got" = "$oracle_got"
	check "$b: every counter equal to nft's inet family" test "$c" = "$oracle"
	[ "$c" = "$oracle" ] || printf '#  nft-emulated: %s\n#  %s: %s\n' "$oracle" "$b" "$c"
done
# The input device at ingress, which a datagram to a socket of ours
# passes: not against the emulated target, whose input hook judges
# packets it cannot tie to the socket they go to by another socket
cat > "$work/in.nft" <<EOT
table cgroup devin {
	chain in {
		type filter hook ingress cgroup "$cg" priority 0; policy accept;
		meta iifname "lo" counter
		meta iifname "dummy0" counter
		meta iiftype loopback counter
		meta iifgroup 0 counter
		meta oifname "lo" counter
	}
}
EOT
for b in $(test_backends); do
	case $b in nft-emulated | both) continue ;; esac
	if [ "$b" = bpf ] && [ -z "$devrules" ]; then
		check "bpf: without the kernel's BTF, device rules are refused at the rule, saying why" \
			bash -c "! '$CGFW' apply -b bpf '$work/in.nft' 2> '$work/in.err' &&
				 grep -q \"in.nft:4:3-6: Error: the bpf backend cannot do this: meta iifname reads the device from the kernel's sk_buff, through BTF, which this kernel has not\" '$work/in.err'"
		continue
	fi
	[ "$b" = bpf ] &&
	check "bpf: an object cannot carry the kernel's offsets: compile -o refuses, saying why" \
		bash -c "! '$CGFW' compile -b bpf -o '$work/in.o' '$work/in.nft' 2> '$work/o.err' &&
			 grep -q \"in.nft:1:14-18: Error: table 'devin' reads the packet's device from the kernel's own structures\" '$work/o.err' &&
			 [ ! -e '$work/in.o' ]"
	check "$b: an ingress chain with device rules applies" \
		"$CGFW" apply -b "$b" "$work/in.nft"
	bash -c 'echo $$ > "$0/cgroup.procs"
	python3 -c "
import socket
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind((\"127.0.0.1\", 7109))
r.settimeout(5)
r.sendto(b\"x\", (\"127.0.0.1\", 7109))
r.recv(16)"' "$root/$cg"
	c=$("$CGFW" list devin | grep -o 'packets [0-9]*' | awk '{print $2}' | xargs)
	check "$b: at ingress the input device is lo, of type loopback, group 0, and there is no output device ($c)" \
		test "$c" = "1 0 1 1 0"
	"$CGFW" delete devin
done
echo "1..$n"
exit $fail
