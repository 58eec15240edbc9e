#!/bin/bash
# The guest kernel's .config: allnoconfig, the fragments merged over it,
# olddefconfig for what they imply. Fails when a line of a fragment is not
# in the result (a symbol the tree does not know, a patch missing, or a
# dependency the fragment does not ask for): docs/guest-kernel.rst.
#   tools/vm/kconfig.sh [-n] SRC OUT FRAGMENT...
# -n: no check (tools/vm/kernel-lint.sh, before the series is applied)
set -euo pipefail
check=1
[ "${1:-}" = -n ] && { check=; shift; }
src=$1 out=$2
shift 2
mkdir -p "$out"
make -C "$src" O="$out" -s allnoconfig >&2
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$@" \
	>/dev/null
make -C "$src" O="$out" -s olddefconfig >&2
bad=0
[ -n "$check" ] || exit 0
for f in "$@"; do
	while IFS== read -r sym val; do
		case $val in
		n) ! grep -qE "^$sym=[ym]$" "$out/.config" ;;
		*) grep -qx "$sym=$val" "$out/.config" ;;
		esac || {
			echo "kernel: $sym=$val from $f is not in the .config" >&2
			bad=1; }
	done < <(grep -E '^CONFIG_[A-Z0-9_]+=' "$f")
done
exit "$bad"
