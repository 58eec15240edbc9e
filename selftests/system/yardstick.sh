#!/bin/bash
# The language yardstick: nftables' own tests/py rules (any, inet, ip,
# ip6: every 4th distinct rule marked ";ok", with the sets its file
# declares) at a cgroup hook. Each rule that stock nft accepts in an inet
# output chain must be accepted by cgfw's nft backend or refused with an
# error at the rule (file, line, column, why); the bpf backend compiles
# it or refuses it the same way; nothing crashes. Prints the shares;
# docs/status.rst keeps them, and the bpf share may not fall below
# BPF_FLOOR percent.
#   BUILD/nft-build/nftables-*/tests/py: made by `make nft` (make check)
set -u
. "$(dirname "$0")/../lib/lib.sh"
ns_setup yard
build=$(dirname "$CGFW")
# 272 of 336 on 2026-12-07, 255 without the kernel's BTF (the device's
# name, type and group, and ct)
if [ -e /sys/kernel/btf/vmlinux ]; then
	BPF_FLOOR=${BPF_FLOOR:-80}
else
	BPF_FLOOR=${BPF_FLOOR:-75}
fi

py=$(ls -d "$build"/nft-build/nftables-*/tests/py 2>/dev/null | head -1)
if [ -z "$py" ]; then
	echo "ok 1 nftables' tests/py at a cgroup hook # SKIP not unpacked ($build/nft-build: make nft, or make check, unpacks it)"
	exit 0
fi

# one directory per rule: stock.nft (an inet output chain) and cgfw.nft
# (a cgroup egress chain), each with the sets the rule names
python3 - "$py" "$work" "$cg" <<'PY'
import glob, os, re, sys
py, work, cg = sys.argv[1:]
seen, rules = set(), []
for fam in ("any", "inet", "ip", "ip6"):
    for f in sorted(glob.glob(f"{py}/{fam}/*.t")):
        sets = {}
        for line in open(f):
            line = line.rstrip("\n")
            if line.startswith("!") and ";ok" in line:
                m = re.match(r"!(\S+)\s+type\s+(.*?);ok", line)
                if m:
                    sets[m.group(1)] = m.group(2)
                continue
            if not line or line[0] in "#:*!?-%" or ";ok" not in line:
                continue
            r = line.split(";ok")[0].strip()
            if r and r not in seen:
                seen.add(r)
                rules.append((r, dict(sets)))

def set_decl(name, spec):
    # "ipv4_addr . inet_service flags interval timeout 60s"
    m = re.match(r"(.*?)(?:\s+(flags|timeout|size|policy)\s+(.*))?$", spec)
    typ, rest = m.group(1).strip(), m.group(2)
    kind = "map" if " : " in typ else "set"
    body = f"type {typ};"
    if rest:
        parts = re.findall(r"(flags|timeout|size|policy)\s+(\S+(?:\s*,\s*\S+)*)",
                           f"{m.group(2)} {m.group(3)}")
        body += "".join(f" {k} {v};" for k, v in parts)
    return f"\t{kind} {name} {{ {body} }}\n"

for i, (r, sets) in enumerate(rules[::4]):
    d = f"{work}/r{i:04d}"
    os.mkdir(d)
    decls = "".join(set_decl(n, s) for n, s in sets.items()
                    if re.search(r"@%s\b" % re.escape(n), r))
    open(f"{d}/rule", "w").write(r + "\n")
    open(f"{d}/stock.nft", "w").write(
        "table inet t {\n%s\tchain c {\n\t\ttype filter hook output priority 0;\n\t\t%s\n\t}\n}\n"
        % (decls, r))
    body = "table cgroup t {\n%s\tchain c {\n\t\ttype filter hook egress cgroup \"%s\" priority 0;\n" % (decls, cg)
    open(f"{d}/cgfw.nft", "w").write(body + "\t\t%s\n\t}\n}\n" % r)
PY

# explained FILE OUT: an error at the rule or at its set (file:line:col)
explained() {
	grep -qE "^$(basename "$1"):[0-9]+:[0-9]+(-[0-9]+)?: Error: " "$2"
}
# reason BACKEND ERR: the first error's reason, to the first colon (nft's
# "Could not process rule: ERRNO" whole)
reason() {
	sed -nE '0,/: Error: /s/^[^ ]*: Error: (the bpf backend cannot do this: )?//p' "$2" |
		sed -E '/^Could not process rule: /!s/^([^:(]*).*/\1/' |
		head -1 >> "$work/$1-reasons"
}
# judge B CMD...: run cgfw CMD on the rule of $d as backend B; count it
# taken (B_ok), refused at the rule (B_why) or neither (bad)
judge() {
	local b=$1 rc
	shift
	(cd "$d" && "$CGFW" "$@" cgfw.nft) > /dev/null 2> "$d/$b.err"
	rc=$?
	if [ $rc = 0 ]; then
		eval "${b}_ok=\$((${b}_ok + 1))"
	elif [ $rc = 1 ] && explained cgfw.nft "$d/$b.err"; then
		eval "${b}_why=\$((${b}_why + 1))"
		reason "$b" "$d/$b.err"
	else
		bad+=("$b backend, exit $rc: $(cat "$d/rule"): $(head -c 300 "$d/$b.err")")
	fi
}
total=0 stock=0 nft_ok=0 nft_why=0 bpf_ok=0 bpf_why=0
bad=()
for d in "$work"/r*; do
	total=$((total + 1))
	nft -c -f "$d/stock.nft" > /dev/null 2>&1 || continue
	stock=$((stock + 1))
	judge nft check -b nft
	judge bpf compile -b bpf
done

if [ ${#bad[@]} = 0 ]; then
	ok "tests/py at a cgroup hook: of $stock rules stock nft accepts in an inet output chain ($total tried), every one is taken or refused at the rule, on both backends, and nothing crashed"
else
	not_ok "tests/py at a cgroup hook: ${#bad[@]} rules crashed or were refused without a place" "${bad[@]:0:20}"
fi
nft_pct=$((stock ? 100 * nft_ok / stock : 0))
bpf_pct=$((stock ? 100 * bpf_ok / stock : 0))
ok "the nft backend takes $nft_ok of $stock ($nft_pct%); $nft_why refused at the rule"
for b in nft bpf; do
	echo "# $b backend's refusals by reason:"
	sort "$work/$b-reasons" 2>/dev/null | uniq -c | sort -rn | sed 's/^/#   /'
done
if [ $stock -gt 0 ] && [ $bpf_pct -ge "$BPF_FLOOR" ]; then
	ok "the bpf backend compiles $bpf_ok of $stock ($bpf_pct%, at least $BPF_FLOOR%); $bpf_why refused at the rule"
else
	not_ok "the bpf backend compiles $bpf_ok of $stock ($bpf_pct%), below $BPF_FLOOR%"
fi
[ -n "${YARD_KEEP:-}" ] && cp -r "$work" "$YARD_KEEP"
exit $fail
