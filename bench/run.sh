#!/usr/bin/env bash
# Runs every benchmark and prints the figures docs/benchmarks.md reports.
# Each figure is a ratio against a baseline measured in the same run. The
# cooperative backends refuse root, so their launch benchmarks run as uid
# 65534 (through setpriv) when this script runs as root.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
N=${BENCH_N:-30}
# The launch ratios are medians of launches that vary by tens of per cent
# one from the next on a shared VM: runs of 150 launches of one binary gave
# median ratios 0.1 apart; 300 each take a few seconds.
LN=${BENCH_LAUNCH_N:-300}
go test -c -o "$out/sandbox.test" ./sandbox/
chmod 755 "$out" "$out/sandbox.test"

echo "== engine: one trivial experiment through lab run → receipt vs bare bwrap"
go test -run '^$' -bench 'TrivialExperiment' -benchtime "${N}x" ./engine/ | grep Benchmark
echo "== sandbox: launch, sealing, watchdog"
(cd sandbox && "$out/sandbox.test" -test.run '^$' -test.bench 'LaunchBubblewrap' -test.benchtime "${LN}x" | grep Benchmark)
(cd sandbox && "$out/sandbox.test" -test.run '^$' -test.bench 'MemoryDetection' -test.benchtime "${N}x" | grep Benchmark)
# The watchdog keeps each process's /proc files open: many samples, so the first one's opens do not dominate.
(cd sandbox && "$out/sandbox.test" -test.run '^$' -test.bench 'WatchdogSample|WatchdogSlowSample' -test.benchtime 1000x | grep Benchmark)
(cd sandbox && "$out/sandbox.test" -test.run '^$' -test.bench 'WorkspaceMeasure' -test.benchtime 5x | grep Benchmark)
SIMJECTURE_BENCH_SEAL_MB=${SEAL_MB:-1024} bash -c "cd sandbox && '$out/sandbox.test' -test.run '^\$' -test.bench 'Seal1GiB' -test.benchtime 3x | grep Benchmark"
# Sealing after the host has been idle (a VM may have taken the freed memory back) and warm.
SIMJECTURE_BENCH_SEAL_MB=${SEAL_MB:-1024} bash -c "cd sandbox && '$out/sandbox.test' -test.run '^\$' -test.bench 'SealAfterIdle' -test.benchtime 3x | grep Benchmark"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  echo "== sandbox: cooperative launch (as uid 65534)"
  (cd sandbox && setpriv --reuid=65534 --regid=65534 --clear-groups -- env HOME=/tmp TMPDIR=/tmp \
    "$out/sandbox.test" -test.run '^$' -test.bench 'LaunchProot|LaunchProcess' -test.benchtime "${LN}x" | grep Benchmark)
else
  (cd sandbox && "$out/sandbox.test" -test.run '^$' -test.bench 'LaunchProot|LaunchProcess' -test.benchtime "${LN}x" | grep Benchmark)
fi
echo "== bench grade: an honest kepler-energy submission (6 sandboxed case runs) vs the same reducer run bare"
go test -run '^$' -bench 'BenchmarkGrade' -benchtime 10x ./engine/benchtask/ | grep Benchmark
echo "== sandbox/slurm: one trivial experiment as a Slurm job vs srun true and sbatch --wait (test cluster; root)"
go test -run '^$' -bench 'TrivialExperimentVsSrunTrue' -benchtime "${SLURM_N:-10}x" ./sandbox/slurm/ | grep -E 'Benchmark|SKIP' || true
echo "== engine: supervisor memory over 3000 experiments"
go test -run '^$' -bench 'SupervisorMemory' -benchtime 1x ./engine/ | grep Benchmark
echo "== engine: lab status and lab brief at 100, 1,000 and 3,000 experiments (ratio-3000/100 ≤ 1.5)"
go test -run '^$' -bench 'LabStatus' -benchtime 200x ./engine/ | grep Benchmark
echo "== tui: bridge and Update under 10,000 events/s"
go test -run '^$' -bench 'BridgeFlood' -benchtime 20000x ./tui/ | grep Benchmark
echo "== machine: a trivial experiment on a loopback SSH worker vs this host; 1 GiB of inputs vs scp (root, sshd)"
go test -run '^$' -bench 'WorkerTrivial|SSHCommand' -benchtime "${N}x" ./sandbox/machine/ | grep -E 'Benchmark|SKIP|skip' || true
go test -run '^$' -bench 'WorkerInputs' -benchtime 1x ./sandbox/machine/ | grep -E 'Benchmark|SKIP|skip' || true
