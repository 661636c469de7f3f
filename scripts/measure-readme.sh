#!/usr/bin/env bash
# Measures what the README's quick start quotes: its two commands, run as a new user
# would, in a fresh clone of this repository (HEAD), each under /usr/bin/time. Prints
# the date, the machine (cores, memory, kernel), the load average before and after,
# and each command's wall time and largest process. Nothing is installed outside the
# clone's own .venv; cargo's target/ is the clone's own (a cold build, as a new user's).
#
#   scripts/measure-readme.sh [CLONE_DIR]       # default: a new temporary directory
#
# The two commands are read from the README itself (the first two ```bash blocks of
# "Quick start"), so this measures exactly what the README says.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-$(mktemp -d "${TMPDIR:-/tmp}/schedlab-readme.XXXXXX")}
git clone -q "$SRC" "$DIR/schedlab"
cd "$DIR/schedlab"
mapfile -t CMDS < <(python3 - README.md <<'PY'
import re, sys
text = open(sys.argv[1]).read()
start = text.index("## Quick start")
blocks = re.findall(r"```bash\n(.*?)\n```", text[start:], re.S)
for b in blocks[:2]:
    print(" ".join(line.rstrip("\\").strip() for line in b.splitlines()))
PY
)
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "error: /usr/bin/time is needed (Debian: apt-get install time)" >&2; exit 2; }
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr); $(cargo --version 2>/dev/null); $(python3 --version)"
for i in 0 1; do
    echo
    echo "command $((i + 1)): ${CMDS[$i]}"
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    $TIME -f "wall %e s, largest process %M KiB" bash -c "${CMDS[$i]}" > "$DIR/command$((i + 1)).log" 2> >(tail -n 3 >&2)
    echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo
echo "logs: $DIR/command1.log, $DIR/command2.log"
