#!/bin/bash
# Operations: what ordinary administration does to a host firewall, and
# that the policy stays (or cgfw says loudly that it could not keep it).
# Real packets where enforcement is the question: a datagram from a
# process of the cgroup to a UDP port, dropped (the send fails with EPERM)
# or not.
#
#   - the daemon and its rules directory: an editor's save with a typo,
#     a rename over a file with a sender looping all the while, two files
#     with one table, a Kubernetes ConfigMap's ..data swap, a FIFO, files
#     another user could write, a second daemon, SIGTERM while it waits
#     for the lock; nft flush ruleset (nftables.service) under the daemon,
#     which holds its tables, and under one that does not (--no-hold)
#   - other users: the lock and the bpffs directory
#   - names: a Docker-length cgroup path, long table names
#   - the root cgroup, a mount namespace of its own, few file descriptors
#
#   CGFW_OPS_BACKENDS: the backends (default: every one this kernel has)
set -u
. "$(dirname "$0")/../lib/lib.sh"
NFT=$(realpath "${NFT:-build/nft/sbin/nft}" 2>/dev/null)	# make nft
ns_setup ops

rules=$work/rules
mkdir "$rules"
backends=$(test_backends "${CGFW_OPS_BACKENDS:-}")
dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	"$CGFW" flush >/dev/null 2>&1
	find "$root/$cg" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
	rm -rf "$work"
	rmdir "$root/$cg" 2>/dev/null
}
trap cleanup EXIT

table() {	# table NAME CGROUP PORT...: drop UDP to each PORT from CGROUP
	local name=$1 cgroup=$2 p
	shift 2
	printf 'table cgroup %s {\n\tchain out {\n\t\ttype filter hook egress cgroup "%s" priority 0; policy accept;\n' "$name" "$cgroup"
	for p; do printf '\t\tudp dport %s drop\n' "$p"; done
	printf '\t}\n}\n'
}
dropped_in() {	# dropped_in CGROUP PORT
	! bash -c 'echo $$ > "$0/cgroup.procs" && echo x > /dev/udp/127.0.0.1/$1' \
		"$root/$1" "$2" 2>/dev/null
}
wait_for() {	# wait_for SECONDS COMMAND...
	local end=$((SECONDS + $1)); shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.02
	done
}
has_table() { "$CGFW" list "$1" >/dev/null 2>&1; }
not() { ! "$@"; }
# sender CGROUP PORT SECONDS: datagrams sent from the cgroup as fast as
# it can for that long; prints "SENT REFUSED" (refused: EPERM, dropped)
sender() {
	python3 - "$root/$1" "$2" "$3" <<'PY'
import os, socket, sys, time
open(sys.argv[1] + "/cgroup.procs", "w").write(str(os.getpid()))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sent = refused = 0
end = time.time() + float(sys.argv[3])
while time.time() < end:
    try:
        s.sendto(b"x", ("127.0.0.1", int(sys.argv[2])))
        sent += 1
    except PermissionError:
        refused += 1
    time.sleep(0.0002)
print(sent, refused)
PY
}
start_daemon() {	# start_daemon BACKEND [OPTION...]
	local b=$1; shift
	"$CGFW" daemon -b "$b" -d "$rules" "$@" 2> "$work/log" &
	dpid=$!
}
stop_daemon() {
	kill -TERM "$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
	dpid=
}
said() { grep -q -- "$1" "$work/log" || { tail -5 "$work/log"; false; }; }

for b in $backends; do
	"$CGFW" flush
	rm -rf "${rules:?}"/* "$rules"/..?* 2>/dev/null
	table ed "$cg" 9200 9201 > "$rules/ed.nft"
	start_daemon "$b"
	check "$b: the daemon applies ed.nft" wait_for 30 dropped_in "$cg" 9200

	# an editor's save: the old file renamed aside, the new text (a
	# typo) written under the name
	mv "$rules/ed.nft" "$rules/ed.nft~"
	printf 'table cgroup ed {\n\tchain out {\n\t\ttype filter hook egress cgroup "%s" priority 0;\n\t\tudp dport 9200 dorp\n\t}\n}\n' "$cg" > "$rules/ed.nft"
	check "$b: a save with a typo is reported with its line" \
		wait_for 30 said 'ed.nft:4:'
	sleep 2.5	# past the daemon's settle time
	check "$b: and the policy before stays in force" dropped_in "$cg" 9200
	check "$b: the daemon says it kept it" said 'ed.nft: keeping what was applied'
	rm -f "$rules/ed.nft~"

	# a rename over the file, with a sender looping on a port that both
	# versions drop: nothing gets through
	table ed "$cg" 9200 9201 > "$rules/ed.nft"
	sender "$cg" 9201 3 > "$work/sent" &
	spid=$!
	for i in 1 2 3 4 5; do
		table ed "$cg" 9201 920$((i + 1)) > "$work/new.nft"
		mv "$work/new.nft" "$rules/ed.nft"
		sleep 0.4
	done
	wait $spid
	read -r sent refused < "$work/sent"
	check "$b: 5 renames over the file while a sender loops: $sent of $((sent + refused)) datagrams to a port every version drops got through" \
		test "$sent" -eq 0 -a "$refused" -gt 0
	check "$b: the last version is in force" dropped_in "$cg" 9206

	# a rename to another name (mv, or a key renamed in a ConfigMap):
	# the new name takes the table over; it is never deleted
	mv "$rules/ed.nft" "$rules/renamed.nft"
	sleep 2.5
	check "$b: a file renamed keeps its table in force" dropped_in "$cg" 9206
	check "$b: and its table was never deleted" not said "table 'ed' deleted"
	mv "$rules/renamed.nft" "$rules/ed.nft"
	sleep 2.5

	# two files declare one table: the second is refused, loudly, and
	# removing it leaves the first's table alone
	table ed "$cg" 9300 > "$rules/dup.nft"
	check "$b: a second file with the same table is refused" \
		wait_for 30 said "dup.nft: table 'ed' is ed.nft's already"
	check "$b: and changes nothing" not dropped_in "$cg" 9300
	rm "$rules/dup.nft"
	sleep 2.5
	check "$b: removing it leaves the first file's table in force" \
		dropped_in "$cg" 9201

	# a file removed for good: its table goes after the settle time
	table gone "$cg" 9310 > "$rules/gone.nft"
	check "$b: gone.nft applied" wait_for 30 dropped_in "$cg" 9310
	rm "$rules/gone.nft"
	check "$b: a removed file's table stays for the settle time" dropped_in "$cg" 9310
	check "$b: and goes after it" wait_for 30 not has_table gone

	# nftables.service: nft flush ruleset, which passes by the tables
	# the daemon holds; cgfw by hand is refused and says why
	if [ "$b" != bpf ]; then
		nft flush ruleset
		check "$b: nft flush ruleset leaves the daemon's tables in force" \
			dropped_in "$cg" 9201
		# (the native family's table: Debian's nft cannot name it)
		if nft list table inet cgfw_ed >/dev/null 2>&1; then
			check "$b: nft delete table is refused (the daemon holds it)" \
				not nft delete table inet cgfw_ed
		fi
		check "$b: so is cgfw delete, with the reason" \
			bash -c "'$CGFW' delete ed 2>&1 | grep -q 'held by another process'"
		check "$b: and the table is still in force" dropped_in "$cg" 9201
		sleep 0.3
		check "$b: the daemon had nothing to restore" \
			not said 'by another program: applying them again'
	fi
	stop_daemon
	if [ "$b" != bpf ]; then
		check "$b: a stopped daemon leaves its tables in force" \
			dropped_in "$cg" 9201
		check "$b: for any cgfw command to change" \
			"$CGFW" delete ed
	fi
done

# With --no-hold (or a kernel before 6.9, which cannot hold a table) the
# daemon notices nft flush ruleset and applies its tables again.
for b in $backends; do
	[ "$b" = bpf ] && continue
	"$CGFW" flush
	rm -rf "${rules:?}"/* "$rules"/..?* 2>/dev/null
	table nh "$cg" 9210 > "$rules/nh.nft"
	start_daemon "$b" --no-hold
	check "$b --no-hold: applied" wait_for 30 dropped_in "$cg" 9210
	# Debian's nft sees the emulation's inet table, not a native one:
	# the kernel keeps the family out of a flush for all families
	flush=nft who="nft"
	if ! nft list tables | grep -q 'cgfw_nh$'; then
		nft flush ruleset
		sleep 0.3
		check "$b --no-hold: Debian's nft flush ruleset passes the native table by" \
			dropped_in "$cg" 9210
		check "$b --no-hold: the daemon had nothing to restore" \
			not said 'by another program: applying them again'
		# an nft that knows the family flushes it too (make nft)
		flush=$NFT who="the patched nft"
		if [ ! -x "$flush" ]; then
			ok "$b --no-hold: after nft flush ruleset # SKIP nft with the cgroup family is not built (make nft)"
			stop_daemon
			continue
		fi
	fi
	"$flush" flush ruleset
	check "$b --no-hold: after $who flush ruleset the daemon applies the table again" \
		wait_for 5 dropped_in "$cg" 9210
	check "$b --no-hold: and says why" \
		wait_for 5 said 'by another program: applying them again'
	stop_daemon
done

# A named quota that runs out is announced by the packet path (a NEWOBJ
# from no socket): not a change by another program. Were it taken for
# one, the next commit of anyone (here nft's own table) would make the
# daemon apply the file again, and the used-up quota would start over
for b in $backends; do
	case $b in nft-*) ;; *) continue ;; esac
	"$CGFW" flush
	rm -rf "${rules:?}"/* "$rules"/..?* 2>/dev/null
	printf 'table cgroup qt {\n\tquota q { over 60 bytes }\n\tchain out {\n\t\ttype filter hook egress cgroup "%s" priority 0; policy accept;\n\t\tudp dport 9340 quota name "q" drop\n\t}\n}\n' "$cg" > "$rules/qt.nft"
	start_daemon "$b"
	check "$b: quota: applied" wait_for 30 has_table qt
	for _ in 1 2 3 4; do dropped_in "$cg" 9340; done	# 4 x 29 bytes: over
	check "$b: quota: used up, 9340 is dropped" dropped_in "$cg" 9340
	nft add table inet other && nft delete table inet other
	sleep 0.5	# past the daemon's MONITOR_MS
	check "$b: quota: another program's commit after it ran out: still dropped" \
		dropped_in "$cg" 9340
	check "$b: quota: the daemon did not take the quota's event for a change" \
		not said 'by another program: applying them again'
	stop_daemon
done

# A bpf program detached by another tool (bpftool link detach): nf_tables
# says nothing of it; the daemon finds it unbound within a second or two
# and applies the table again
for b in $backends; do
	case $b in bpf|both) ;; *) continue ;; esac
	command -v bpftool >/dev/null || { ok "$b: detached link # SKIP no bpftool"; continue; }
	"$CGFW" flush
	rm -rf "${rules:?}"/* "$rules"/..?* 2>/dev/null
	table dl "$cg" 9220 > "$rules/dl.nft"
	start_daemon "$b"
	check "$b: dl.nft applied" wait_for 30 dropped_in "$cg" 9220
	egress_link() {	# the id of the cgroup's egress link
		bpftool -j link show 2>/dev/null | python3 -c '
import json, os, sys
ino = os.stat(sys.argv[1]).st_ino
for l in json.load(sys.stdin):
    if l.get("cgroup_id") == ino and l.get("attach_type") == "cgroup_inet_egress":
        print(l["id"])' "$root/$cg"
	}
	link=$(egress_link)
	check "$b: its program found by the cgroup's links ($link)" test -n "$link"
	bpftool link detach id "$link"
	check "$b: after bpftool link detach the daemon applies the table again" \
		wait_for 10 said 'dl.nft: its tables were changed, or detached'
	relinked() {	# a link on the cgroup's egress, not the detached one
		local new
		new=$(egress_link)
		[ -n "$new" ] && [ "$new" != "$link" ]
	}
	# (the daemon says so before its apply ends)
	check "$b: its program is attached again, by a new link" \
		wait_for 10 relinked
	check "$b: and it is in force" wait_for 5 dropped_in "$cg" 9220
	stop_daemon
done

# A Kubernetes ConfigMap volume: the files are links into ..data, a link
# to the version's directory; the kubelet swaps ..data in one rename.
b=${backends%% *}
"$CGFW" flush
rm -rf "${rules:?}"/* "$rules"/..?* 2>/dev/null
mkdir "$rules/..v1" "$rules/..v2"
table cm "$cg" 9400 > "$rules/..v1/cm.nft"
table cm "$cg" 9401 > "$rules/..v2/cm.nft"
ln -s ..v1 "$rules/..data"
ln -s ..data/cm.nft "$rules/cm.nft"
start_daemon "$b"
check "configmap: the linked file is applied" wait_for 30 dropped_in "$cg" 9400
ln -s ..v2 "$rules/..data_tmp" && mv -T "$rules/..data_tmp" "$rules/..data"
check "configmap: the ..data swap applies the new version" \
	wait_for 10 dropped_in "$cg" 9401
check "configmap: and the old one is gone" not dropped_in "$cg" 9400

# links out of the directory, FIFOs, files others can write: not read
table out "$cg" 9410 > "$work/out.nft"
ln -s "$work/out.nft" "$rules/out.nft"
mkfifo "$rules/fifo.nft"
# (made aside and moved in: a file that was applied while it was safe
# keeps its policy when its mode changes, as a file that stops compiling)
table ww "$cg" 9411 > "$work/ww.nft"
chmod 666 "$work/ww.nft"
mv "$work/ww.nft" "$rules/"
table other "$cg" 9412 > "$work/other.nft"
chown 65534 "$work/other.nft"
mv "$work/other.nft" "$rules/"
table late "$cg" 9413 > "$rules/late.nft"
check "a file after a FIFO is still applied (the daemon does not hang)" \
	wait_for 30 dropped_in "$cg" 9413
check "a link out of the directory is not followed" \
	said 'out.nft: a link to .* not followed'
check "a FIFO is not read" said 'fifo.nft: not a regular file'
check "a world-writable file is refused" said 'ww.nft: owned by uid 0, mode 0666'
check "another user's file is refused" said 'other.nft: owned by uid 65534'
none_dropped() {
	local p r=0
	for p in 9410 9411 9412; do
		dropped_in "$cg" $p && { echo "port $p is dropped"; r=1; }
	done
	return $r
}
check "and none of them applies anything" none_dropped
check "a second daemon is refused while the first runs" \
	not "$CGFW" daemon -d "$rules"
check "and says which one runs" \
	bash -c "'$CGFW' daemon -d '$rules' 2>&1 | grep -q 'another cgfw daemon (pid $dpid) is running'"
kill -0 "$dpid" 2>/dev/null
check "the first daemon still runs" test $? -eq 0
stop_daemon
rm -f "$rules"/*.nft

# SIGTERM while the daemon waits for cgfw's lock (another command has it)
netns=$(stat -L -c %i /proc/self/ns/net)
flock -o "/run/cgfw/netns-$netns" sleep 20 &
hpid=$!
sleep 0.3
table w "$cg" 9420 > "$rules/w.nft"
start_daemon "$b"
sleep 1
kill -TERM "$dpid"
check "SIGTERM ends a daemon that waits for the lock" \
	wait_for 5 not kill -0 "$dpid"
wait "$dpid" 2>/dev/null
dpid=
kill $hpid 2>/dev/null
wait $hpid 2>/dev/null
rm -f "$rules"/*.nft

# Other users: the lock is root's, and so is cgfw's directory in bpffs
nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"
}
python3 - <<'PY' &
import socket, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.bind("\0cgfw/lock"); s.listen(1)
except OSError:
    pass
time.sleep(10)
PY
lpid=$!
check "another user cannot take cgfw's lock" \
	not nobody flock -n "/run/cgfw/netns-$netns" true
check "nor make a cgfw command wait (the old abstract socket bound by others)" \
	timeout 10 "$CGFW" list
kill $lpid 2>/dev/null
"$CGFW" flush
rm -rf /sys/fs/bpf/cgfw
chmod 1777 /sys/fs/bpf
nobody mkdir /sys/fs/bpf/cgfw
table bp "$cg" 9430 > "$work/bp.nft"
res=$("$CGFW" apply -b bpf "$work/bp.nft" 2>&1)
check "a bpffs directory another user made is refused" test $? -ne 0
check "with what to do" grep -q '/sys/fs/bpf/cgfw is a directory owned by uid 65534.*rm -r' <<< "$res"
check "and nothing is applied" not dropped_in "$cg" 9430
rmdir /sys/fs/bpf/cgfw
check "once it is removed, the apply works" "$CGFW" apply -b bpf "$work/bp.nft"
check "and makes the directory root's, 0700" \
	test "$(stat -c %u:%a /sys/fs/bpf/cgfw)" = 0:700
"$CGFW" flush

# Names: a Docker-length cgroup path, long table names
docker="system.slice/docker-$(printf '%064x' 0 | tr 0 a).scope"
# a Kubernetes pod's container under systemd: 205 characters from
# /sys/fs/cgroup; here below our own cgroup, cut to the same length in all
pod="kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod$(printf '%036x' 0 | tr 0 b).slice/cri-containerd-$(printf '%064x' 0 | tr 0 c).scope"
pod=${pod:0:$((205 - ${#root} - ${#cg} - 2))}
# deeper than anything runs: 5 levels of 200 characters, past what nf_tables
# keeps with a chain (the path is then found again by the cgroup's id)
deep=$(for i in 1 2 3 4 5; do printf "d$i%.0s" $(seq 100); printf /; done)
deep=${deep%/}
mkdir -p "$root/$cg/$docker" "$root/$cg/$pod" "$root/$cg/$deep"
for b in $backends; do
	for p in "$docker" "$pod" "$deep"; do
		table dk "$cg/$p" 9440 > "$work/dk.nft"
		what=${p%%.slice*}
		what=${what%%d1d1*}
		check "$b: a cgroup path of ${what:-a deep cgroup}'s length ($((${#root} + ${#cg} + ${#p} + 2)) characters) applies" \
			"$CGFW" apply -b "$b" "$work/dk.nft"
		check "$b: and is in force" dropped_in "$cg/$p" 9440
		check "$b: and listed with its path, bound" \
			bash -c "'$CGFW' list dk | grep -F '\"$root/$cg/$p\"' | grep -q 'bound to cgroup id'"
		"$CGFW" flush
	done
done
long=$(printf 't%.0s' $(seq 200))
table "$long" "$cg" 9450 > "$work/long.nft"
for b in $backends; do
	check "$b: a 200-character table name applies" \
		"$CGFW" apply -b "$b" "$work/long.nft"
	check "$b: and is in force" dropped_in "$cg" 9450
	"$CGFW" flush
done
longer=$(printf 't%.0s' $(seq 252))
table "$longer" "$cg" 9451 > "$work/longer.nft"
for b in $backends; do
	out=$("$CGFW" apply -b "$b" "$work/longer.nft" 2>&1)
	check "$b: a 252-character table name is refused at its place, not crashed on" \
		grep -q 'longer.nft:1:.*too long' <<< "$out"
	check "$b: and cgfw flush still works after it" "$CGFW" flush
done

# cgfw update that does not fit: all or nothing, on every backend (a bpf
# map holds 256 elements here; 300 do not fit)
for b in $backends; do
	printf 'table cgroup u {\n\tset s { type ipv4_addr; }\n\tchain out {\n\t\ttype filter hook egress cgroup "%s" priority 0;\n\t\tip daddr @s drop\n\t}\n}\n' "$cg" > "$work/u.nft"
	"$CGFW" apply -b "$b" "$work/u.nft"
	{ printf 'add element cgroup u s { '
	  for i in $(seq 300); do printf '10.1.%d.%d, ' $((i / 250)) $((i % 250 + 1)); done
	  echo '}'; } > "$work/add.nft"
	res=$("$CGFW" update "$work/add.nft" 2>&1)
	rc=$?
	case $b in
	nft-*)	check "$b: 300 elements into a set: added" test $rc -eq 0 ;;
	*)	check "$b: 300 elements into a set that holds 256: refused (exit 1)" \
			test $rc -eq 1
		check "$b: and says nothing was changed" \
			grep -q 'nothing was changed' <<< "$res"
		check "$b: and no element went in, on any of its backends" \
			bash -c "! '$CGFW' list u | grep -q '10\\.1\\.'" ;;
	esac
	"$CGFW" flush
done

# the same with an interval set (an LPM trie in bpf), where a prefix
# inside one already there is not "there": put back, it is removed
for b in $backends; do
	case $b in nft-*) continue ;; esac
	printf 'table cgroup u {\n\tset s { type ipv4_addr; flags interval; elements = { 10.0.0.0/8 } }\n\tchain out {\n\t\ttype filter hook egress cgroup "%s" priority 0;\n\t\tip daddr @s drop\n\t}\n}\n' "$cg" > "$work/u.nft"
	"$CGFW" apply -b "$b" "$work/u.nft"
	{ printf 'add element cgroup u s { 10.1.0.0/16, '
	  for i in $(seq 300); do printf '172.%d.%d.0/24, ' $((16 + i / 250)) $((i % 250)); done
	  echo '}'; } > "$work/add.nft"
	"$CGFW" update "$work/add.nft" >/dev/null 2>&1
	check "$b: an interval set's update that does not fit leaves 10.0.0.0/8 alone and adds nothing inside it" \
		test "$("$CGFW" list u | grep -o '10\.[0-9.]*/[0-9]*' | sort -u | tr '\n' ' ')" = "10.0.0.0/8 "
	"$CGFW" flush
done

# A verdict-map element that jumps to a chain, added in place: nf_tables
# takes it (the packet goes through the chain); bpf says to re-apply
for b in $backends; do
	printf 'table cgroup v {\n\tmap portv { type inet_service : verdict; elements = { 9106 : drop } }\n\tchain out {\n\t\ttype filter hook egress cgroup "%s" priority 0; policy accept;\n\t\tudp dport vmap @portv\n\t}\n\tchain deep1 {\n\t\tcounter drop\n\t}\n}\n' "$cg" > "$work/v.nft"
	"$CGFW" apply -b "$b" "$work/v.nft"
	echo 'add element cgroup v portv { 9107 : jump deep1 }' > "$work/vadd.nft"
	res=$("$CGFW" update "$work/vadd.nft" 2>&1)
	rc=$?
	case $b in
	nft-*)	check "$b: a verdict-map element that jumps to a chain is added in place" \
			test $rc -eq 0
		check "$b: and its packets go through the chain: dropped" \
			dropped_in "$cg" 9107
		check "$b: and counted there" \
			bash -c "'$CGFW' list v | grep -A2 'chain deep1' | grep -q 'counter packets [1-9]'" ;;
	*)	check "$b: a verdict-map element that jumps: refused, re-apply, nothing changed" \
			bash -c "[ $rc = 1 ] && grep -q 're-apply the table' <<< '$res' && grep -q 'nothing was changed' <<< '$res'" ;;
	esac
	"$CGFW" flush
done

# Tables of different backends on one cgroup: each drops what it drops,
# the rest passes, and each is listed with its backend
for t in a:bpf:9490 b:nft:9491; do
	IFS=: read -r tn be port <<< "$t"
	table "cmp$tn" "$cg" "$port" > "$work/cmp$tn.nft"
	check "composition: table cmp$tn applied with -b $be" \
		"$CGFW" apply -b "$be" "$work/cmp$tn.nft"
done
check "composition: the bpf table's port is dropped" dropped_in "$cg" 9490
check "composition: the nft table's port is dropped" dropped_in "$cg" 9491
check "composition: another port passes" not dropped_in "$cg" 9492
check "composition: both listed, each with its backend" \
	bash -c "'$CGFW' list | grep -q '^table cgroup cmpa {.*backend bpf' &&
		 '$CGFW' list | grep -q '^table cgroup cmpb {.*backend nft-'"
"$CGFW" flush

# An exported object (compile -b bpf -o) loaded the usual way, with
# bpftool prog loadall and nothing else: the classifier's blob is its
# .rodata, which libbpf fills: nft's verdicts, with no command to run
if command -v bpftool >/dev/null; then
	{ printf 'table cgroup ex {\n\tchain out {\n\t\ttype filter hook egress cgroup "%s" priority 0;\n' "$cg"
	  for i in $(seq 1000 3047); do printf '\t\ttcp dport %d drop\n' "$i"; done
	  printf '\t}\n}\n'; } > "$work/ex.nft"
	"$CGFW" compile -b bpf -o "$work/ex.o" "$work/ex.nft" > "$work/fill.sh"
	python3 - "$work" <<'PY'
import struct, sys
def pkt(dport):
    eth = b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00"
    tcp = struct.pack("!HHIIBBHHH", 40000, dport, 0, 0, 5 << 4, 2, 65535, 0, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0, 64, 6, 0,
                     bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    return eth + ip + tcp
open(sys.argv[1] + "/miss.bin", "wb").write(pkt(5000))
open(sys.argv[1] + "/hit.bin", "wb").write(pkt(2000))
PY
	verdict() {	# verdict PACKET [TABLE]: the program's return value
		bpftool prog run pinned /sys/fs/bpf/${2:-ex}/${2:-ex}_egress_* \
			data_in "$work/$1.bin" 2>&1 | sed -n 's/^Return value: \([0-9]*\).*/\1/p'
	}
	check "export: 2,048 rules, nothing to run after the load" \
		grep -q 'it needs nothing else' "$work/fill.sh"
	bpftool prog loadall "$work/ex.o" /sys/fs/bpf/ex
	check "export: loaded by bpftool alone, a packet of no rule passes" \
		test "$(verdict miss)" = 1
	check "export: and one of a drop rule is dropped" test "$(verdict hit)" = 0
	rm -rf /sys/fs/bpf/ex
	# a named set: its elements are the commands printed
	printf 'table cgroup es {\n\tset ports { type inet_service; elements = { 2000 } }\n\tchain out {\n\t\ttype filter hook egress cgroup "%s" priority 0;\n\t\ttcp dport @ports drop\n\t}\n}\n' "$cg" > "$work/ex.nft"
	"$CGFW" compile -b bpf -o "$work/es.o" "$work/ex.nft" > "$work/fill.sh"
	bpftool prog loadall "$work/es.o" /sys/fs/bpf/es
	check "export: a named set is empty until its commands run" \
		test "$(verdict hit es)" = 1
	bash "$work/fill.sh" >/dev/null 2>&1
	check "export: with them, its element is dropped" \
		test "$(verdict hit es)" = 0
	check "export: and another port passes" test "$(verdict miss es)" = 1
	rm -rf /sys/fs/bpf/es
else
	ok "export: loaded by bpftool # SKIP no bpftool (make deps installs it)"
fi

# The root cgroup, however it is written: ".", "/" (as /proc/PID/cgroup
# writes it) and the mount's own path bind the same cgroup
for p in . / "$root"; do
	table r "$p" 9460 > "$work/r.nft"
	check "cgroup path '$p' is the root cgroup, accepted" \
		"$CGFW" check "$work/r.nft"
done

# A mount namespace with no bpffs: cgfw would mount one that dies with
# the namespace, and its tables with it: refused
table ns "$cg" 9470 > "$work/ns.nft"
out=$(unshare -m bash -c "mount -t tmpfs none /sys/fs/bpf && '$CGFW' apply -b bpf '$work/ns.nft'" 2>&1)
check "apply -b bpf in a mount namespace without bpffs is refused" \
	grep -q 'would vanish with the namespace' <<< "$out"

# Few file descriptors (RLIMIT_NOFILE 64): compiling still works
table fd "$cg" 9480 > "$work/fd.nft"
check "cgfw check with RLIMIT_NOFILE 64" \
	bash -c "ulimit -n 64 && '$CGFW' check '$work/fd.nft'"

exit $fail
