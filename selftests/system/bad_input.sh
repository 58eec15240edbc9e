#!/bin/bash
# Bad input through the cgfw command: each case must exit 1 (2 for bad
# usage), say where and what, and leave the rules already running alone.
# Runs in its own network and mount namespace. Prints TAP.
set -u
. "$(dirname "$0")/../lib/lib.sh"
NFT_ALL=${NFT_ALL:-nft}	# tools/run-tests.sh: an nft that lists every family
ns_setup bad

# The rules that must survive every bad input.
cat > "$work/keep.nft" <<EOT
table cgroup keep {
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		udp dport 9 counter drop
	}
}
EOT
"$CGFW" apply "$work/keep.nft" || { not_ok "apply the reference table"; exit 1; }
before=$("$NFT_ALL" list ruleset)

# expect NAME STATUS PATTERN -- CMD...: exit STATUS, stderr matches PATTERN
expect() {
	local name=$1 status=$2 pattern=$3; shift 4
	local err rc
	err=$(timeout 60 "$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -ne "$status" ]; then
		not_ok "$name" "exit status $rc, expected $status" "$err"
	elif ! grep -qE -- "$pattern" <<<"$err"; then
		not_ok "$name" "message does not match /$pattern/:" "$err"
	elif [ "$("$NFT_ALL" list ruleset)" != "$before" ]; then
		not_ok "$name" "the running rules changed:" \
			"$(diff <(echo "$before") <("$NFT_ALL" list ruleset))"
	else
		ok "$name"
	fi
}

bad() { printf '%b' "$2" > "$work/$1.nft"; }

bad syntax 'table cgroup t {\n\tchain c {\n\t\ttype filter hook egress cgroup "'"$cg"'" priority 0;\n\t\ttcp dport 22 frobnicate\n\t}\n}\n'
expect "nft syntax error points into the user's file" 1 \
	"syntax\\.nft:4:[0-9]+(-[0-9]+)?: Error: syntax error" -- "$CGFW" apply "$work/syntax.nft"
expect "the error shows the user's own line" 1 \
	'tcp dport 22 frobnicate' -- "$CGFW" apply "$work/syntax.nft"

bad missing 'table cgroup t {\n\tchain c {\n\t\ttype filter hook egress cgroup "no/such/cgroup" priority 0;\n\t}\n}\n'
expect "missing cgroup" 1 \
	'missing\.nft:3:34-49: Error: cgroup "no/such/cgroup" does not exist' -- "$CGFW" apply "$work/missing.nft"

bad family 'table inet t {\n}\n'
expect "a family other than cgroup" 1 \
	"family\\.nft:1:7-10: Error: cgfw applies tables of the cgroup family only" -- "$CGFW" apply "$work/family.nft"

bad nocg 'table cgroup t {\n\tchain c {\n\t\ttype filter hook egress priority 0;\n\t}\n}\n'
expect "hook without cgroup \"PATH\"" 1 \
	"nocg\\.nft:3:20-25: Error: hook egress needs the cgroup" -- "$CGFW" apply "$work/nocg.nft"

bad outside 'table cgroup t {\n\tchain c {\n\t\ttype filter hook egress cgroup "/tmp" priority 0;\n\t}\n}\n'
expect "path outside the cgroup2 mount" 1 \
	'outside\.nft:3:34-39: Error: "/tmp" is outside the cgroup v2 mount' -- "$CGFW" apply "$work/outside.nft"

bad escape 'table cgroup t {\n\tchain c {\n\t\ttype filter hook egress cgroup "../../../tmp" priority 0;\n\t}\n}\n'
expect "relative path escaping the mount" 1 \
	"escape\\.nft:3:34-47: Error: cgroup paths must not contain '\\.\\.'" -- "$CGFW" apply "$work/escape.nft"

: > "$work/empty.nft"
expect "empty file" 1 "empty\\.nft: Error: the input is empty" -- "$CGFW" apply "$work/empty.nft"

head -c 4096 /dev/urandom > "$work/binary.nft"
printf 'table cgroup t {\x00}\n' >> "$work/binary.nft"
expect "binary file" 1 "binary\\.nft:[0-9]+:[0-9]+: Error: the input is not text" -- "$CGFW" apply "$work/binary.nft"

head -c $((300 << 20)) /dev/zero | tr '\0' '#' > "$work/huge.nft"
expect "300 MB file" 1 "larger than 256 MiB" -- "$CGFW" apply "$work/huge.nft"
rm -f "$work/huge.nft"

expect "file that does not exist" 1 "cannot open .*/nope\\.nft: No such file" -- "$CGFW" apply "$work/nope.nft"
expect "directory instead of a file" 1 "cannot read" -- "$CGFW" apply "$work"

bad kernel 'table cgroup t {\n\tchain c {\n\t\ttype filter hook egress cgroup "'"$cg"'" priority 0;\n\t\tmeta ibrname "br0" drop\n\t}\n}\n'
expect "rule nf_tables refuses in the shadow" 1 \
	"kernel\\.nft:4:[0-9]+-[0-9]+: Error: " -- "$CGFW" apply "$work/kernel.nft"
# The same after the compile has read nft's whole batch (front/capture.c
# makes what it read while the kernel takes the batch): a set's element
# past its size, refused at that element, on the bpf backend too.
bad full 'table cgroup t {\n\tset s {\n\t\ttype ipv4_addr\n\t\tsize 2\n\t\telements = { 10.0.0.1, 10.0.0.2, 10.0.0.3 }\n\t}\n\tchain c {\n\t\ttype filter hook egress cgroup "'"$cg"'" priority 0;\n\t\tip daddr @s drop\n\t}\n}\n'
expect "a set past its size, refused in the shadow after its batch was read (-b bpf)" 1 \
	"full\\.nft:5:36-43: Error: Could not process rule: Too many open files" -- \
	"$CGFW" apply -b bpf "$work/full.nft"

# no privilege: an unprivileged user cannot create the shadow namespace
expect "no privilege" 1 "needs CAP_SYS_ADMIN; run cgfw as root" -- \
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$CGFW" apply "$work/keep.nft"

# cgroup2 not mounted: hide every cgroup2 mount in this mount namespace
expect "cgroup2 not mounted" 1 "keep\\.nft:3:[0-9]+-[0-9]+: Error: cgroup v2 is not mounted" -- \
	unshare -m sh -c "for m in \$(findmnt -n -t cgroup2 -o TARGET); do umount -l \$m; done; exec $CGFW apply $work/keep.nft"

expect "unknown command" 2 "unknown command 'frob'" -- "$CGFW" frob
expect "unknown backend" 2 "unknown backend 'xdp'" -- "$CGFW" apply -b xdp "$work/keep.nft"
expect "missing file argument" 2 "which FILE" -- "$CGFW" apply
bad ct 'table cgroup t {\n\tchain c {\n\t\ttype filter hook ingress cgroup "'"$cg"'" priority 0;\n\t\tct state established accept\n\t}\n}\n'
expect "bpf refuses what it cannot do, at the rule" 1 \
	"ct\\.nft:4:3-[0-9]+: Error: the bpf backend cannot do this: ct state at ingress: the kernel releases the connection-tracking entry" -- \
	"$CGFW" apply -b bpf "$work/ct.nft"
expect "both refuses as a whole" 1 "the bpf backend cannot do this" -- \
	"$CGFW" apply -b both "$work/ct.nft"
expect "delete of a table cgfw did not install" 1 "no table 'nope'" -- "$CGFW" delete nope

# reject in the native family: no such expression there; said at the
# rule, with the target that has one (the emulated family's inet hooks)
bad reject 'table cgroup t {\n\tchain c {\n\t\ttype filter hook egress cgroup "'"$cg"'" priority 0;\n\t\tudp dport 9 reject\n\t}\n}\n'
if "$CGFW" status | grep -q '^nft cgroup family (native): *yes$'; then
	expect "the native family says why it refuses reject, at the rule" 1 \
		"reject\\.nft:4:3-[0-9]+: Error: the kernel's cgroup family has no reject; use '-b nft-emulated'" -- \
		"$CGFW" apply -b nft "$work/reject.nft"
else
	ok "the native family says why it refuses reject # SKIP no native cgroup family in this kernel"
fi

# nft 1.0.6 takes a priority past 32 bits and cuts it: refused at its place
bad prio 'table cgroup t {\n\tchain c {\n\t\ttype filter hook egress cgroup "'"$cg"'" priority 99999999999;\n\t}\n}\n'
expect "a priority past 32 bits" 1 \
	"prio\\.nft:3:[0-9]+-[0-9]+: Error: priority 99999999999 is out of range: a chain's priority is a 32-bit number" -- \
	"$CGFW" apply "$work/prio.nft"
bad named 'table cgroup t {\n\tct helper ftp-std {\n\t\ttype "ftp" protocol tcp\n\t}\n\tchain c {\n\t\ttype filter hook egress cgroup "'"$cg"'" priority 0;\n\t}\n}\n'
expect "a kind of named object bpf has not, at its place" 1 \
	"named\\.nft:2:2-3: Error: the bpf backend cannot do this: named ct helper objects .*; use the nft backend" -- \
	"$CGFW" apply -b bpf "$work/named.nft"
# include: nft's errors inside an included file name that file; a file
# not found, a loop, another user's file, a statement after an include
mkdir -p "$work/inc"
printf '\t\tudp dport 2 dorp\n' > "$work/inc/bad.inc"
bad incbad 'table cgroup t {\n\tchain c {\n\t\ttype filter hook egress cgroup "'"$cg"'" priority 0;\n\t\tinclude "'"$work"'/inc/bad.inc"\n\t}\n}\n'
expect "an nft error in an included file names that file, line and column" 1 \
	"inc/bad\\.inc:1:[0-9]+: Error: syntax error" -- "$CGFW" apply "$work/incbad.nft"
bad incnone 'include "./no/such/file.nft"\n'
expect "an included file not found, at its include" 1 \
	"incnone\\.nft:1:1-7: Error: File not found: \\./no/such/file\\.nft" -- \
	"$CGFW" apply "$work/incnone.nft"
bad incloop 'include "'"$work"'/incloop.nft"\n'
expect "an include loop stops at 16 levels" 1 \
	"Error: Include nested too deeply, max 16 levels" -- \
	"$CGFW" apply "$work/incloop.nft"
printf 'table cgroup t2 {\n}\n' > "$work/inc/open.inc"
chmod 666 "$work/inc/open.inc"
bad incmode 'include "'"$work"'/inc/open.inc"\n'
expect "an included file others can write is refused" 1 \
	"incmode\\.nft:1:1-7: Error: the included file .*open\\.inc is owned by uid 0, mode 0666: another user could change it" -- \
	"$CGFW" apply "$work/incmode.nft"
chmod 644 "$work/inc/open.inc"
bad incafter 'include "'"$work"'/inc/open.inc"; table cgroup t3 {\n}\n'
expect "a statement after an include on its line" 1 \
	"incafter\\.nft:1:[0-9]+: Error: cgfw puts an included file after the line of its include" -- \
	"$CGFW" apply "$work/incafter.nft"

expect "an unprivileged delete says what it needs" 1 \
	"needs CAP_NET_ADMIN .*; run cgfw as root" -- \
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$CGFW" delete t

exit $fail
