#!/bin/bash
# Print a file that a patch of kernel-patches/series creates, as the patch
# has it: the project builds the kernel selftest from the series itself,
# so there is no second copy of it.
#   tools/patch-file.sh PATH-IN-THE-KERNEL-TREE
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
path=$1
for p in $(cat "$top/kernel-patches/series"); do
	if grep -qx "+++ b/$path" "$top/kernel-patches/$p"; then
		awk -v f="+++ b/$path" '
			$0 == f { on = 1; next }
			on && /^@@ / { next }
			on && /^\+/ { print substr($0, 2); next }
			on { exit }
		' "$top/kernel-patches/$p"
		exit 0
	fi
done
echo "patch-file.sh: no patch in kernel-patches/series creates $path" >&2
exit 1
