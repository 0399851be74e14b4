#!/bin/sh
# A command agent for the live-output test: its first worker turn queues
# one Python experiment that prints 40 setup lines (more than a screen, so
# that following matters), then "tick N t=EPOCH" once a second for about
# 20 s, flushing each line, so the test can tell how long a line takes to
# reach the log viewer. Later turns queue nothing.
set -e
[ "$SIMJECTURE_ROLE" = worker ] || exit 0
cat > /dev/null
[ "$SIMJECTURE_TURN" = 1 ] || exit 0
marker=$(sed -n 's/^e2e-marker: //p' ../operator/instructions.txt 2>/dev/null || true)
cat > ticker.py <<'PY'
import sys, time
for k in range(1, 41):
    print("setup line %d" % k)
for n in range(1, 21):
    print("tick %d t=%.3f" % (n, time.time()), flush=True)
    time.sleep(1)
open("out.txt", "w").write("done\n")
PY
printf '{"source":"ticker.py","args":["%s"],"outputs":["out.txt"],"timeout":120,"key":"ticker","purpose":"print a line a second"}' \
	"$marker" | "$SIMJECTURE_BIN" lab run > /dev/null
