#!/bin/sh
# A command agent for the capability test: every worker turn runs the
# capability "trapz" once for each N listed in research/plan.txt (idempotent:
# a repeated request returns the same receipt).
[ "$SIMJECTURE_ROLE" = worker ] || exit 0
[ -f plan.txt ] || exit 0
while read -r n; do
  [ -n "$n" ] || continue
  printf '{"capability":"trapz","args":["%s","out.txt"],"outputs":["out.txt"],"timeout":30}' "$n" |
    "$SIMJECTURE_BIN" lab run >/dev/null
done < plan.txt
exit 0
