#!/bin/sh
# A command agent for the TUI filter test: its first worker turn queues 40
# quick experiments, purposes case-0 … case-39, through the lab protocol;
# later turns do nothing (the test cancels the study). The experiments
# carry the test's marker so that leftovers can be found.
set -e
[ "$SIMJECTURE_ROLE" = worker ] || exit 0
cat > /dev/null
[ "$SIMJECTURE_TURN" = 1 ] || exit 0
marker=$(sed -n 's/^e2e-marker: //p' ../operator/instructions.txt 2>/dev/null || true)
printf 'echo "$2" > out.txt\n' > quick.sh
i=0
while [ $i -lt 40 ]; do
	printf '{"source":"quick.sh","args":["%s","%s"],"outputs":["out.txt"],"timeout":60,"key":"case-%s","purpose":"case-%s"}' \
		"$marker" "$i" "$i" "$i" | "$SIMJECTURE_BIN" lab run > /dev/null
	i=$((i + 1))
done
