#!/bin/bash
# cgfw.service under systemd as PID 1 (the guest, tools/vm/run.sh -s): the
# unit as installed, started with systemctl, its table in force on real
# packets; then what nftables.service does on start, reload and stop
# (nft flush ruleset, which passes by the tables the daemon holds) while
# a sender loops on a port the table drops;
# systemctl reload; systemctl stop leaves the tables. Skips unless PID 1 is
# systemd (make check boots the guest a second time for it).
#   selftests/system/unit.sh BUILD
set -u
BUILD=$(realpath "${1:-build}")
CGFW=$BUILD/cgfw
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n $1"; shift; printf '# %s\n' "$@"; }
check() {
	local name=$1 out; shift
	if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$out"; fi
}
if [ "$(cat /proc/1/comm 2>/dev/null)" != systemd ]; then
	echo "ok 1 cgfw.service under systemd # SKIP PID 1 is not systemd (make check runs this in a guest booted with systemd)"
	echo "1 passed, 0 failed, 1 skipped"
	exit 0
fi

root=/sys/fs/cgroup
cg=cgfw-unit-test
rules=/run/cgfw-unit/rules
mkdir -p "$rules" "$root/$cg"
chmod 700 /run/cgfw-unit
printf 'table cgroup web {\n\tchain out {\n\t\ttype filter hook egress cgroup "%s" priority 0; policy accept;\n\t\tudp dport 9500 drop\n\t}\n}\n' "$cg" > "$rules/web.nft"
# the unit as make install makes it, with this build's cgfw and directory
sed -e "s|@SBINDIR@|$(dirname "$CGFW")|" \
    -e "s|/etc/cgfw|$rules|g" \
    "$(dirname "$0")/../../userspace/cli/cgfw.service.in" \
	> /run/systemd/system/cgfw.service
# its messages in a file: the guest runs no journal
mkdir -p /run/systemd/system/cgfw.service.d
printf '[Service]\nStandardError=append:/run/cgfw-unit/log\n' \
	> /run/systemd/system/cgfw.service.d/log.conf
systemctl daemon-reload

dropped() {
	! bash -c 'echo $$ > "$0/cgroup.procs" && echo x > /dev/udp/127.0.0.1/9500' \
		"$root/$cg" 2>/dev/null
}
wait_for() {
	local end=$((SECONDS + $1)); shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.05
	done
}

# sender SECONDS: datagrams from the cgroup to the dropped port as fast as
# it can; prints "SENT REFUSED" (refused: EPERM, dropped)
sender() {
	python3 - "$root/$cg" "$1" <<'PY'
import os, socket, sys, time
open(sys.argv[1] + "/cgroup.procs", "w").write(str(os.getpid()))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sent = refused = 0
end = time.time() + float(sys.argv[2])
while time.time() < end:
    try:
        s.sendto(b"x", ("127.0.0.1", 9500)); sent += 1
    except PermissionError:
        refused += 1
    time.sleep(0.0005)
print(sent, refused)
PY
}

check "systemctl start cgfw" systemctl start cgfw
check "the unit is active (Type=notify: READY=1 came)" systemctl is-active cgfw
check "its status says what is applied" \
	bash -c "systemctl status cgfw | grep -q '1 of 1 rule files applied'"
check "the table is in force" wait_for 10 dropped

# what nftables.service does: nft flush ruleset, five times, a sender
# looping all the while; the daemon holds its tables, so the flushes pass
# them by
sender 4 > /run/cgfw-unit/sent &
spid=$!
for i in 1 2 3 4 5; do
	sleep 0.6
	nft flush ruleset
done
wait $spid
read -r sent refused < /run/cgfw-unit/sent
check "after 5 flushes the table is in force" dropped
check "and the daemon had nothing to restore" \
	bash -c "! grep -q 'by another program: applying them again' /run/cgfw-unit/log"
sed 's/^/# /' /run/cgfw-unit/log | tail -8
check "5 nft flush ruleset under a looping sender: $sent of $((sent + refused)) datagrams to a dropped port got through" \
	test "$sent" -eq 0 -a "$refused" -gt 0

# nftables.service itself: started, reloaded twice, restarted, each
# running nft -f /etc/nftables.conf, which begins with flush ruleset
if [ -f /lib/systemd/system/nftables.service ] && [ -f /etc/nftables.conf ]; then
	sender 5 > /run/cgfw-unit/sent &
	spid=$!
	check "systemctl start nftables" systemctl start nftables
	sleep 0.5
	check "systemctl reload nftables" systemctl reload nftables
	sleep 0.5
	check "systemctl reload nftables again" systemctl reload nftables
	sleep 0.5
	check "systemctl restart nftables" systemctl restart nftables
	wait $spid
	read -r sent refused < /run/cgfw-unit/sent
	check "after nftables.service's start, reloads and restart the table is in force" \
		wait_for 5 dropped
	check "nftables.service start, 2 reloads, restart under a looping sender: $sent of $((sent + refused)) datagrams to a dropped port got through" \
		test "$sent" -eq 0 -a "$refused" -gt 0
	systemctl stop nftables
else
	ok "nftables.service # SKIP not installed here"
fi

# the same with -b both
printf '[Service]\nExecStart=\nExecStart=%s daemon -b both -d %s\n' "$CGFW" "$rules" \
	> /run/systemd/system/cgfw.service.d/both.conf
systemctl daemon-reload
check "systemctl restart cgfw with -b both" systemctl restart cgfw
check "in force" wait_for 10 dropped
sender 4 > /run/cgfw-unit/sent &
spid=$!
for i in 1 2 3; do
	sleep 0.6
	nft flush ruleset
done
[ -f /lib/systemd/system/nftables.service ] && systemctl restart nftables
wait $spid
read -r sent refused < /run/cgfw-unit/sent
check "-b both: 3 flushes and a restart of nftables.service under a looping sender: none of $((sent + refused)) datagrams to a dropped port got through" \
	test "$sent" -eq 0 -a "$refused" -gt 0
systemctl stop nftables 2>/dev/null
rm -f /run/systemd/system/cgfw.service.d/both.conf
systemctl daemon-reload
check "systemctl restart cgfw (the unit as installed)" systemctl restart cgfw

check "systemctl reload cgfw" systemctl reload cgfw
check "still in force after the reload" dropped
check "systemctl stop cgfw" systemctl stop cgfw
check "the tables stay when the daemon stops" dropped
"$CGFW" flush
rm -rf /run/systemd/system/cgfw.service /run/systemd/system/cgfw.service.d
systemctl daemon-reload

# README's quick start, as written (with this build's cgfw)
top=$(realpath "$(dirname "$0")/../..")
check "quick start: systemd-run --slice=web makes the cgroup web.nft binds" \
	systemd-run --quiet --slice=web --unit=web-demo sleep infinity
check "quick start: cgfw check docs/examples/web.nft" \
	"$CGFW" check "$top/docs/examples/web.nft"
check "quick start: cgfw apply -b bpf docs/examples/web.nft" \
	"$CGFW" apply -b bpf "$top/docs/examples/web.nft"
check "quick start: cgfw list shows it bound to web.slice" \
	bash -c "'$CGFW' list | grep -q 'cgroup \"/sys/fs/cgroup/web.slice\".*bound to cgroup id'"
check "quick start: cgfw delete web" "$CGFW" delete web
check "quick start: systemctl stop web-demo" systemctl stop web-demo

# (Only in the guest: it mounts over /etc and /usr/local, and make
# uninstall PURGE=1 flushes every cgfw table.)
# README's install, service and removal, as written: make install,
# systemctl enable --now cgfw with make install's example as the rules,
# make uninstall PURGE=1; then the machine as it was but for the rules
# the administrator wrote. The guest's root is the host's, read-only:
# what make install writes to goes on tmpfs, with what was there.
skipped=0
if grep -qw 'cgfw.systemd=1' /proc/cmdline; then
	for d in /usr/local/sbin /usr/local/lib /usr/local/include \
		 /usr/local/share/man /etc; do
		mkdir -p "/run/was$d"
		cp -a "$d/." "/run/was$d/"
		mount -t tmpfs tmpfs "$d"
		cp -a "/run/was$d/." "$d/"
		chmod "$(stat -c %a "/run/was$d")" "$d"
	done
	# as a stock Debian has them: make install must leave their mode alone
	for d in /usr/local/sbin /usr/local/lib /usr/local/include; do
		chgrp staff "$d" 2>/dev/null && chmod 2775 "$d"
	done
	# snap: what an install could leave: files, units and their links, the
	# linker's cache, pins, nf_tables tables, processes
	snap() {
		find /usr/local /etc \( -path /usr/local/cuda\* -prune \) -o \
			\( -type f -printf '%p f %m %s\n' \) -o -printf '%p %y %m\n' \
			2>/dev/null | grep -v '^/etc/ld.so.cache ' | sort
		md5sum /etc/ld.so.cache
		systemctl list-unit-files cgfw.service --no-legend 2>/dev/null
		ls -R /sys/fs/bpf
		nft list tables
		pgrep -a cgfw
	}
	ldconfig	# the linker's cache as this root's libraries make it
	before=$(snap)
	check "make install" make -s -C "$top" BUILD="$BUILD" install
	check "make install puts cgfw, the unit and the example in place" \
		test -x /usr/local/sbin/cgfw -a -f /usr/local/lib/systemd/system/cgfw.service \
		-a -f /etc/cgfw/web.nft.example
	systemd-run --quiet --slice=web --unit=web-demo sleep infinity
	cp /etc/cgfw/web.nft.example /etc/cgfw/web.nft
	check "systemctl enable --now cgfw (the unit make install put there)" \
		systemctl enable --now cgfw
	check "the installed daemon applied the example" wait_for 10 \
		bash -c "/usr/local/sbin/cgfw list 2>/dev/null | grep -q '^table cgroup web'"
	check "its status says so" \
		bash -c "systemctl status cgfw | grep -q '1 of 1 rule files applied'"
	check "make uninstall PURGE=1" make -s -C "$top" BUILD="$BUILD" uninstall PURGE=1
	systemctl stop web-demo
	check "after make uninstall PURGE=1, cgfw.service is neither running nor known" \
		bash -c "! systemctl is-active --quiet cgfw && [ -z \"\$(systemctl list-unit-files cgfw.service --no-legend)\" ]"
	after=$(snap)
	left=$(diff <(echo "$before") <(echo "$after") | grep '^[<>]')
	want=$(printf '> /etc/cgfw d 700\n> /etc/cgfw/web.nft f 600 %s' \
		"$(stat -c %s /etc/cgfw/web.nft 2>/dev/null)")
	check "and the machine is as it was, but for the administrator's rules (/etc/cgfw/web.nft)" \
		test "$left" = "$want"
	[ -n "$left" ] && printf '# left: %s\n' "$left"
	for d in /etc /usr/local/share/man /usr/local/include /usr/local/lib \
		 /usr/local/sbin; do
		umount "$d"
	done
else
	ok "make install, enable, uninstall # SKIP not the guest (tools/vm/run.sh -s): it would change this machine"
	skipped=1
fi

rmdir "$root/$cg"
echo "$((n - fail - skipped)) passed, $fail failed, $skipped skipped"
exit $fail
