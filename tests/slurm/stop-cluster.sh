#!/usr/bin/env bash
# stop-cluster.sh - stop what start-cluster.sh started, by PID file only.
# Idempotent. "--purge" also removes Slurm state, spool dirs, logs and the
# test plugin's drop-in.
set -uo pipefail

log() { printf '[stop-cluster] %s\n' "$*"; }
stop_pidfile() {                # stop_pidfile PIDFILE COMM
  local p
  [ -s "$1" ] || { rm -f "$1"; return 0; }
  p=$(cat "$1")
  if [ -r "/proc/$p/comm" ] && [ "$(cat "/proc/$p/comm")" = "$2" ]; then
    kill "$p"
    for _ in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && kill -9 "$p"
    log "stopped $2 (pid $p)"
  fi
  rm -f "$1"
}

# cancel jobs first so that their slurmstepd processes exit cleanly
if [ -s /run/slurmctld.pid ] && squeue -h >/dev/null 2>&1; then
  jobs=$(squeue -h -o %i)
  if [ -n "$jobs" ]; then
    scancel $jobs
    for _ in $(seq 100); do [ -z "$(squeue -h -o %i)" ] && break; sleep 0.1; done
  fi
fi
for pf in /run/slurmd-*.pid; do [ -e "$pf" ] && stop_pidfile "$pf" slurmd; done
stop_pidfile /run/slurmctld.pid slurmctld
stop_pidfile /run/munge/munged.pid munged

if [ "${1:-}" = --purge ]; then
  rm -rf /var/lib/slurm/slurmctld/* /var/lib/slurm/slurmd-* /var/log/slurm/*.log \
         /tmp/slurm-node* /etc/slurm/plugstack.conf.d/autosync-test.conf
  log "purged state, spool, logs and the test drop-in"
fi
log "done"
