#!/usr/bin/env bash
# Measures the TUI's memory on a study of many experiments against the
# bundled demo study, in the same run: a study whose command agent queues
# N_EXP trivial experiments (default 3000, run under Bubblewrap), then the
# dashboard of each study in tmux, its RSS read from /proc every 0.5 s for
# 12 s while the experiments pane is scrolled. Needs bwrap and tmux.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N_EXP:-3000}
out=$(mktemp -d)
trap 'tmux kill-server 2>/dev/null || true; rm -rf "$out"' EXIT
go build -o "$out/simjecture" .
bin=$out/simjecture
export SIMJECTURE_WORKSPACE=$out/ws
echo "A trivial experiment finishes." > "$out/hyp.txt"
echo "Run many trivial experiments." > "$out/ins.txt"
cat > "$out/agent.sh" <<AGENT
#!/bin/sh
# Turn 1: queue $N experiments; later turns: nothing (the script cancels).
[ "\$SIMJECTURE_TURN" = 1 ] || exit 0
echo 'echo 1 > r.txt' > sim.sh
i=0
while [ \$i -lt $N ]; do
  echo "{\"source\":\"sim.sh\",\"outputs\":[\"r.txt\"],\"key\":\"\$i\"}" | "\$SIMJECTURE_BIN" lab run >/dev/null
  i=\$((i+1))
done
AGENT
chmod +x "$out/agent.sh"
"$bin" study --campaign "$out/big" --hypothesis-file "$out/hyp.txt" --instructions-file "$out/ins.txt" \
  --backend command --executable "$out/agent.sh" --execution-backend bubblewrap --batch >/dev/null 2>&1 &
sup=$!
done_count() { "$bin" status --campaign "$out/big" --json 2>/dev/null | python3 -c '
import json,sys; s=json.load(sys.stdin); print(sum(1 for e in s["experiments"] if e["status"] not in ("queued","running")))' 2>/dev/null || echo 0; }
until [ "$(done_count)" -ge "$N" ]; do sleep 2; done
"$bin" cancel --campaign "$out/big" >/dev/null
wait "$sup" || true
"$bin" demo --batch >/dev/null 2>&1
demo=$(ls -d "$out"/ws/demo-* | head -1)

measure() { # name campaign
  tmux new-session -d -s m -x 120 -y 40 "$bin tui --read-only --campaign $1"
  sleep 2
  local pid
  pid=$(pgrep -f "^$bin tui --read-only --campaign $1" | head -1)
  local max=0 first=0 last=0
  for i in $(seq 24); do
    tmux send-keys -t m Tab 2>/dev/null || true
    for k in $(seq 20); do tmux send-keys -t m j; done
    rss=$(awk '/VmRSS/{print $2}' /proc/$pid/status)
    [ "$first" = 0 ] && first=$rss
    last=$rss; [ "$rss" -gt "$max" ] && max=$rss
    sleep 0.5
  done
  tmux kill-session -t m
  printf '%-28s RSS first %6.1f MB  last %6.1f MB  max %6.1f MB\n' "$2" "$(echo "$first/1024" | bc -l)" "$(echo "$last/1024" | bc -l)" "$(echo "$max/1024" | bc -l)"
}
measure "$demo" "demo study (3 experiments)"
measure "$out/big" "study of $N experiments"
