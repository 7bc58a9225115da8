#!/usr/bin/env bash
# install-deps.sh - install the Debian 12 packages autosync needs to build
# and test, if any is missing. Idempotent; needs root only when installing.
set -euo pipefail
PKGS=(build-essential autoconf automake libtool pkg-config
      libhwloc-dev libyaml-dev libjansson-dev libgsl-dev libxgboost-dev hwloc
      slurm-wlm slurmctld slurmd slurm-client munge libslurm-dev
      openmpi-bin libopenmpi-dev libpmix-dev
      clang libclang-rt-14-dev clang-format
      python3 python3-torch python3-numpy python3-yaml
      git ca-certificates procps iproute2 util-linux
      debhelper dh-python fakeroot lintian rpm cpio
      libmicrohttpd-dev libgnutls28-dev libcjson-dev curl openssl python3-jsonpatch
      podman runc catatonit busybox-static)
# kubectl (for kubectl kustomize): Debian's, unless the machine has one
# (another kubectl owns /usr/bin/kubectl, and the two packages conflict)
command -v kubectl >/dev/null 2>&1 || PKGS+=(kubernetes-client)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$p")
done
((${#missing[@]})) || exit 0
if [ "$(id -u)" != 0 ]; then
  echo "install-deps.sh: missing packages (run as root to install): ${missing[*]}" >&2
  exit 1
fi
echo "[install-deps] installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# Without systemd the postinst scripts print "policy-rc.d denied execution"; harmless.
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
