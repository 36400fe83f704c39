# libpodman.sh — an OCI archive run by podman, as a container user would.
# Source it after libtest.sh.
#
#   podman_usable || test_skip ...      # podman and runc are installed
#   podman_run FILE.tar TAG CMD...      # podman load FILE.tar, run CMD in TAG
#
# Its storage lives under $SCRATCH (nothing is left in /var/lib/containers).
# Two settings are for build machines like CI's, where the container
# manager may not raise resource limits (no CAP_SYS_RESOURCE) and cgroups
# are v1 under a systemd-less init: no default ulimits, and runc with
# cgroupfs (crun refuses that cgroup layout).  Neither changes what the
# image is or what runs in it.

podman_usable () {
    command -v podman > /dev/null && command -v runc > /dev/null
}

podman_run () {
    local tar=$1 tag=$2; shift 2
    mkdir -p "$SCRATCH/podman"
    printf '[containers]\ndefault_ulimits = []\n' > "$SCRATCH/podman/containers.conf"
    local p=(podman --root "$SCRATCH/podman/root" --runroot "$SCRATCH/podman/run"
             --runtime runc --cgroup-manager cgroupfs --events-backend none)
    CONTAINERS_CONF="$SCRATCH/podman/containers.conf" "${p[@]}" load -q -i "$tar" > /dev/null || return 1
    CONTAINERS_CONF="$SCRATCH/podman/containers.conf" "${p[@]}" run --rm --network=none "$tag" "$@"
}
