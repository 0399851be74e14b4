#!/usr/bin/env bash
# Installs the system packages simjecture needs, with apt-get when root;
# otherwise says what is missing.
#   deps.sh run   bubblewrap (the default isolation backend), proot (the
#                 cooperative fallback) and python3 (the demo's simulations)
#   deps.sh test  the same plus tmux (TUI tests), util-linux's setpriv
#                 (tests as an unprivileged uid), npm (the Codex and Claude Code CLI tests),
#                 openssh-server/openssh-client (the SSH worker tests' sshd) and
#                 Slurm with munge (the Slurm worker tests' own test cluster)
set -euo pipefail
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v proot >/dev/null 2>&1 || need+=(proot)
[ -x /usr/bin/python3 ] || need+=(python3)
if [ "${1:-run}" = test ]; then
  command -v tmux    >/dev/null 2>&1 || need+=(tmux)
  command -v setpriv >/dev/null 2>&1 || need+=(util-linux)
  command -v npm     >/dev/null 2>&1 || need+=(npm)
  [ -x /usr/sbin/sshd ]              || need+=(openssh-server)
  command -v ssh     >/dev/null 2>&1 || need+=(openssh-client)
  command -v slurmctld >/dev/null 2>&1 || need+=(slurm-wlm)
  command -v sbatch    >/dev/null 2>&1 || need+=(slurm-client)
  command -v munged    >/dev/null 2>&1 || need+=(munge)
fi
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "deps: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
else
  echo "deps: missing ${need[*]}; install them with your package manager (e.g. sudo apt-get install ${need[*]})" >&2
  exit 1
fi
