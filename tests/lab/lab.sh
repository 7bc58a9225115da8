#!/bin/sh
# lab.sh - an emulated multi-host cluster on one machine (root only).
#
#   lab.sh up [HOSTS] [RATE]   HOSTS namespaces ${P}h1..${P}hN, each with eth0 =
#                              $NET.I/24, veth to bridge br0 in namespace ${P}sw;
#                              tbf RATE on both directions of every uplink
#                              (RATE=none: unshaped). Removes a previous lab first.
#   lab.sh shape [HOSTS] RATE  change the rate of a running lab
#   lab.sh down [HOSTS]        kill what runs inside (by PID) and delete the namespaces
#   lab.sh mpirun ARGS...      mpirun inside ${P}h1 with the lab's hostfile, rsh agent and
#                              the MCA settings the lab needs (docs/lab.md)
#   lab.sh exec HOST CMD...    run CMD in host namespace HOST (1..N) with hostname hHOST
#
# Environment: LAB_PREFIX (default "as-"), LAB_NET (first three octets, default
# 10.77.0), LAB_DIR (scratch, default /tmp/autosync-lab), LAB_PPN (slots per host in
# the hostfile, default 2), LAB_BURST (256kb), LAB_QLAT (50ms), LAB_MPI_OPTS (extra).
# Latency cannot be added: the kernel this was written on has tbf/htb but no netem.
# Only addresses inside the lab's own namespaces are used; the root namespace is
# not touched.
set -u
P=${LAB_PREFIX:-as-}
NET=${LAB_NET:-10.77.0}
D=${LAB_DIR:-/tmp/autosync-lab}
BURST=${LAB_BURST:-256kb}
QLAT=${LAB_QLAT:-50ms}
HERE=$(cd "$(dirname "$0")" && pwd)

shape_one() { # ns dev rate
	ip netns exec "$1" tc qdisc del dev "$2" root 2>/dev/null || true
	[ "$3" = none ] || ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$3" burst "$BURST" latency "$QLAT"
}

down() {
	dn=${1:-8}
	for i in $(seq 1 "$dn"); do
		if ip netns list 2>/dev/null | grep -qw "${P}h$i"; then
			ip netns pids "${P}h$i" 2>/dev/null | xargs -r kill 2>/dev/null
			sleep 0.1
			ip netns pids "${P}h$i" 2>/dev/null | xargs -r kill -9 2>/dev/null
			ip netns del "${P}h$i" 2>/dev/null
		fi
	done
	if ip netns list 2>/dev/null | grep -qw "${P}sw"; then
		ip netns pids "${P}sw" 2>/dev/null | xargs -r kill 2>/dev/null
		ip netns del "${P}sw" 2>/dev/null
	fi
	true
}

up() {
	n=${1:-4}; rate=${2:-1gbit}
	down 8
	set -e
	mkdir -p "$D"
	ip netns add "${P}sw"
	ip -n "${P}sw" link set lo up
	ip -n "${P}sw" link add br0 type bridge
	ip -n "${P}sw" link set br0 up
	: > "$D/hosts"
	for i in $(seq 1 "$n"); do
		ip netns add "${P}h$i"
		ip -n "${P}h$i" link set lo up
		ip -n "${P}sw" link add "p$i" type veth peer name eth0 netns "${P}h$i"
		ip -n "${P}sw" link set "p$i" master br0
		ip -n "${P}sw" link set "p$i" up
		ip -n "${P}h$i" addr add "$NET.$i/24" dev eth0
		ip -n "${P}h$i" link set eth0 up
		shape_one "${P}h$i" eth0 "$rate"
		shape_one "${P}sw" "p$i" "$rate"
		echo "$NET.$i slots=${LAB_PPN:-2}" >> "$D/hosts"
	done
	set +e
	echo "$n $rate" > "$D/state"
}

case "${1:-}" in
up) shift; up "$@" ;;
down) shift; down "$@" ;;
shape)
	shift; n=$1; rate=$2
	for i in $(seq 1 "$n"); do shape_one "${P}h$i" eth0 "$rate"; shape_one "${P}sw" "p$i" "$rate"; done
	echo "$n $rate" > "$D/state" ;;
exec)
	shift; h=$1; shift
	exec ip netns exec "${P}h$h" unshare --uts sh -c 'hostname "$0"; exec "$@"' "h$h" "$@" ;;
mpirun)
	shift
	export LAB_PREFIX="$P" LAB_NET="$NET"
	xs=""
	for v in ASAN_OPTIONS UBSAN_OPTIONS AUTOSYNC_CATALOG_DIR AUTOSYNC_LIBEXECDIR OMP_NUM_THREADS; do
		eval "[ -n \"\${$v+x}\" ]" && xs="$xs -x $v"
	done
	exec ip netns exec "${P}h1" unshare --uts sh -c 'hostname h1; exec mpirun "$@"' lab-mpirun \
		--allow-run-as-root --oversubscribe --hostfile "$D/hosts" \
		--mca plm_rsh_agent "$HERE/netns-rsh" --mca plm_rsh_no_tree_spawn 1 \
		--mca pml ob1 --mca btl tcp,self,vader \
		--mca btl_tcp_if_include "$NET.0/24" --mca oob_tcp_if_include "$NET.0/24" \
		--mca mpi_yield_when_idle 1 --mca btl_tcp_links 2 \
		$xs ${LAB_MPI_OPTS:-} "$@" ;;
*) sed -n '2,20p' "$0"; exit 2 ;;
esac
