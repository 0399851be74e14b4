#!/bin/sh
# A command agent for the terminal UI tests: every worker turn queues one
# long sleep experiment (a new one per turn) through the lab protocol, so
# the study stays busy until the operator pauses or cancels it. The
# experiment carries the test's marker so that leftovers can be found.
set -e
[ "$SIMJECTURE_ROLE" = worker ] || exit 0
cat > /dev/null
marker=$(sed -n 's/^e2e-marker: //p' ../operator/instructions.txt 2>/dev/null || true)
printf 'sleep 300\necho done > out.txt\n' > sleep.sh
printf '{"source":"sleep.sh","args":["%s"],"outputs":["out.txt"],"timeout":600,"key":"turn-%s","purpose":"keep the study busy"}' \
	"$marker" "$SIMJECTURE_TURN" | "$SIMJECTURE_BIN" lab run > /dev/null
