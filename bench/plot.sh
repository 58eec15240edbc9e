#!/bin/bash
# Render the plots of a benchmark run with Debian's matplotlib
# (python3-matplotlib, installed by make deps): Debian's python3, not
# whatever python3 comes first in PATH.
#   bench/plot.sh DIR [--title TEXT]
set -eu
py=/usr/bin/python3
if ! "$py" -c 'import matplotlib' 2>/dev/null; then
	echo "bench: no plots: $py cannot import matplotlib (make deps installs python3-matplotlib)" >&2
	exit 0
fi
"$py" "$(dirname "$0")/plot.py" "$@"
