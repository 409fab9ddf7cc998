#!/usr/bin/env bash
# A hermetic mDNS lab for the discovery tests: avahi-daemon and a private D-Bus "system" bus inside network
# namespaces this script creates, so nothing is ever multicast on the machine's real interfaces.
#
#   eval "$(Tools/mdns-lab.sh start)"    prints the exports the tests read (DBUS_SYSTEM_BUS_ADDRESS, CAST_MDNS_LAB…)
#   Tools/mdns-lab.sh stop
#   Tools/mdns-lab.sh status             exits 0 when the lab's daemons answer
#   eval "$(Tools/mdns-lab.sh env)"      the exports again, for another shell, without restarting
#
# What it builds (needs root: CAP_NET_ADMIN for namespaces, CAP_SYS_ADMIN for the private mounts):
#   $NS      loopback only; avahi on lo; its bus is $DIR/main/bus (exported as DBUS_SYSTEM_BUS_ADDRESS).
#   $NS-rx   one end of a veth pair, cast0 = 10.77.0.1/24 and fe80::77:1; its own bus and avahi on cast0.
#   $NS-tx   the other end, cast0 = 10.77.0.2/24 and fe80::77:2; its own bus and avahi on cast0.
# Both veth ends are created directly inside their namespaces: no address or interface of the lab ever exists in
# the root namespace. Each avahi-daemon gets a private /run (its pid file and socket live in /run/avahi-daemon,
# one per mount namespace), so several labs and a host avahi-daemon never see each other.
#
# Environment: MDNS_NS (default castlab), MDNS_DIR (default /tmp/mdns-lab-$MDNS_NS). Based on the recipe in
# shared/lab/mdns-lab.sh (ready in ~25 ms; an advertisement reaches a browser in ~1 s because of mDNS probing).
set -euo pipefail
NS=${MDNS_NS:-castlab}
DIR=${MDNS_DIR:-/tmp/mdns-lab-$NS}
RX=$NS-rx
TX=$NS-tx

say() { echo "mdns-lab: $*" >&2; }

# write_configs NAME HOSTNAME INTERFACE USE_IPV6
write_configs() {
    local dir=$DIR/$1
    mkdir -p "$dir"
    cat > "$dir/dbus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$dir/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
EOF
    cat > "$dir/avahi.conf" <<EOF
[server]
host-name=$2
domain-name=local
use-ipv4=yes
use-ipv6=$4
allow-interfaces=$3
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
publish-aaaa-on-ipv4=no
publish-a-on-ipv6=no
[reflector]
[rlimits]
EOF
}

# Closes every descriptor above 2 in the current (sub)shell: the daemons must not keep the caller's pipes open
# (a reader would never see EOF, and Foundation's Process never sees its child exit while a descendant holds them).
close_inherited() {
    local fd
    for fd in /proc/self/fd/*; do
        fd=${fd##*/}
        [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2> /dev/null
    done
    return 0
}

# start_daemons NAME NAMESPACE: a bus, then avahi-daemon inside NAMESPACE with a private /run.
start_daemons() {
    local dir=$DIR/$1 ns=$2
    rm -f "$dir/bus"
    (close_inherited && exec dbus-daemon --config-file="$dir/dbus.conf" --fork --print-pid) > "$dir/dbus.pid"
    # `ip netns exec` already runs its command in a new mount namespace (slave to the host's), so the tmpfs on
    # /run stays private to this avahi-daemon. `exec` keeps the pid, so $! is avahi-daemon itself.
    (close_inherited && exec setsid ip netns exec "$ns" env DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/bus" sh -c \
        'mount -t tmpfs -o size=1m,mode=755 lab-run /run && exec avahi-daemon -f "$1" --no-drop-root --no-chroot --no-rlimits' \
        avahi "$dir/avahi.conf") < /dev/null > "$dir/avahi.log" 2>&1 &
    echo $! > "$dir/avahi.pid"
}

# wait_ready NAME: until the daemon answers on its bus (normally a few tens of milliseconds).
wait_ready() {
    local dir=$DIR/$1
    for _ in $(seq 1 250); do
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/bus" dbus-send --system --print-reply --dest=org.freedesktop.Avahi / \
            org.freedesktop.Avahi.Server.GetVersionString > /dev/null 2>&1 && return 0
        sleep 0.02
    done
    say "avahi-daemon in $1 did not come up; its log:"
    cat "$dir/avahi.log" >&2 || true
    return 1
}

start() {
    [ "$(id -u)" = 0 ] || { say "needs root (network namespaces, private mounts)"; exit 2; }
    stop 2> /dev/null || true
    mkdir -p "$DIR"

    ip netns add "$NS"
    ip -n "$NS" link set lo up
    ip -n "$NS" link set lo multicast on

    ip netns add "$RX"
    ip netns add "$TX"
    ip -n "$RX" link set lo up
    ip -n "$TX" link set lo up
    ip link add cast0 netns "$RX" type veth peer name cast0 netns "$TX"
    local ns index
    for ns in "$RX" "$TX"; do
        index=$([ "$ns" = "$RX" ] && echo 1 || echo 2)
        ip -n "$ns" link set cast0 addrgenmode none
        ip -n "$ns" addr add "10.77.0.$index/24" dev cast0
        ip -n "$ns" addr add "fe80::77:$index/64" dev cast0 nodad
        ip -n "$ns" link set cast0 up
    done

    write_configs main "$NS" lo no
    write_configs rx "$RX" cast0 yes
    write_configs tx "$TX" cast0 yes
    start_daemons main "$NS"
    start_daemons rx "$RX"
    start_daemons tx "$TX"
    wait_ready main
    wait_ready rx
    wait_ready tx
    exports
}

# The variables the tests read, for a running lab.
exports() {
    echo "export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$DIR/main/bus"
    echo "export CAST_MDNS_LAB=$NS"
    echo "export CAST_MDNS_LAB_DIR=$DIR"
    echo "export CAST_MDNS_LAB_RX=$RX CAST_MDNS_LAB_RX_BUS=unix:path=$DIR/rx/bus CAST_MDNS_LAB_RX_ADDRESS=10.77.0.1"
    echo "export CAST_MDNS_LAB_TX=$TX CAST_MDNS_LAB_TX_BUS=unix:path=$DIR/tx/bus CAST_MDNS_LAB_TX_ADDRESS=10.77.0.2"
}

stop() {
    local name pid
    for name in main rx tx; do
        for pid in avahi dbus; do
            if [ -f "$DIR/$name/$pid.pid" ]; then
                kill "$(cat "$DIR/$name/$pid.pid")" 2> /dev/null || true
            fi
        done
    done
    ip netns del "$NS" 2> /dev/null || true
    ip netns del "$RX" 2> /dev/null || true
    ip netns del "$TX" 2> /dev/null || true
    rm -rf "$DIR"
}

status() {
    local name
    for name in main rx tx; do
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=$DIR/$name/bus" dbus-send --system --print-reply \
            --dest=org.freedesktop.Avahi / org.freedesktop.Avahi.Server.GetVersionString > /dev/null 2>&1 \
            || { say "$name: not running"; return 1; }
    done
    say "running ($NS, $RX, $TX in $DIR)"
}

case "${1:-start}" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    env) exports ;;
    *) say "usage: $0 start|stop|status|env"; exit 2 ;;
esac
