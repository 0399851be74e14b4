#!/bin/sh
# A command agent for the kill loop: every worker turn queues short and long
# experiments (exp.sh MARKER TENTHS sleeps TENTHS × 0.1 s, its argv carrying
# the marker read from ./marker next to this script); once ./stop exists it
# cancels the study instead.
[ "$SIMJECTURE_ROLE" = worker ] || exit 0
cat >/dev/null
here=$(dirname "$0")
if [ -f "$here/stop" ]; then
  exec "$SIMJECTURE_BIN" cancel --campaign "$SIMJECTURE_STUDY" >&2
fi
marker=$(cat "$here/marker")
[ -f exp.sh ] || cat >exp.sh <<'SRC'
i=0
while [ "$i" -lt "$2" ]; do sleep 0.1; i=$((i+1)); done
echo done >done.txt
SRC
n=0
for tenths in 0 8 0 0 8 0 0 3 0 0; do
  n=$((n+1))
  printf '{"source":"exp.sh","args":["%s","%s"],"outputs":["done.txt"],"timeout":30,"key":"t%s-%s","resources":{"cpus":1,"memory_mb":64,"max_file_mb":1}}' \
    "$marker" "$tenths" "$SIMJECTURE_TURN" "$n" | "$SIMJECTURE_BIN" lab run >/dev/null
done
exit 0
