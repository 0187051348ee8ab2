#!/usr/bin/env bash
# A small real VM for the nested-pod proof (docs/ovn.md, "A real VM"): Debian's own kernel (it has 8021q, which this
# host's kernel lacks) on a minimal Debian root file system, booted by qemu under software emulation (TCG).
#
#   vm.sh install     install the missing Debian packages (qemu-system-x86, debootstrap; root)
#   vm.sh build       make the image once (root; debootstrap from the machine's configured apt mirror); cached in
#                     $RAVEN_VM_DIR (default .raven/vm): vmlinuz, initrd.img, root.img, built (stamp)
#   vm.sh check       boot it, make a VLAN sub-interface inside, power off; prints the boot time
#   vm.sh boot --agent SOCKET [--tap NAME --mac MAC]
#                     run the VM in the foreground (exec qemu: the caller's child is qemu itself). The guest's
#                     command agent listens on SOCKET (a virtio-serial port): one line in, base64 of a bash script;
#                     one line out, "<base64 of its output> <exit code>". --tap: its NIC is that tap device (qemu
#                     makes it; the caller plugs it into a switch), with MAC.
#                     --share DIR: DIR read-only in the guest as 9p tag raven (mount -t 9p -o trans=virtio raven …).
#                     --forward PORT (repeatable): a second NIC, qemu's user-mode network with restrict=on (the guest
#                     reaches nothing outside), on which a connection to 10.0.2.100:PORT reaches the host's
#                     127.0.0.1:PORT (socat per connection): how the guest reaches the API server and Neutron.
#
# The root disk is attached with snapshot=on: a VM never changes the image, so several can boot from it at once.
set -euo pipefail

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C.UTF-8 LANG=C.UTF-8
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RIG=vm
# shellcheck source-path=SCRIPTDIR source=../lib/services.sh
source "$SCRIPT_DIR/../lib/services.sh"

VM_DIR=${RAVEN_VM_DIR:-$PWD/.raven/vm}
[[ $VM_DIR == /* ]] || VM_DIR=$PWD/$VM_DIR
# 256 MB is enough for the kernel, bash and a few namespaces; RAVEN_VM_MEMORY to change it (MB)
MEMORY=${RAVEN_VM_MEMORY:-256}
PACKAGES=(qemu-system-x86 debootstrap e2fsprogs)
# in the guest: the kernel (8021q, virtio) and its initrd tools, ip, ping, socat (the probes), ethtool
GUEST_PACKAGES=linux-image-amd64,initramfs-tools,kmod,iproute2,iputils-ping,socat,ethtool
# the initrd only has to find the root disk
INITRD_MODULES=(virtio_pci virtio_blk ext4)

# apt_mirror: the first Debian archive the machine's apt sources name (deb822 or one-line format).
apt_mirror() {
  local uri
  uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' \
    /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
  [[ -n $uri ]] || uri=$(awk '$1 == "deb" && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
  [[ -n $uri ]] || die "no Debian mirror in /etc/apt/sources.list or /etc/apt/sources.list.d/*.sources"
  echo "$uri"
}

# the guest's PID 1 (printed): no systemd, no udev; mounts, loads the modules, then either runs the built-in check
# (raven.check on the kernel command line) or serves the command agent forever.
print_init() {
  cat <<'EOF'
#!/bin/bash
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# the initrd hands over /proc, /sys, /dev and /run mounted
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mountpoint -q /run || mount -t tmpfs run /run
mount -t tmpfs tmp /tmp
mkdir -p /run/netns
modprobe -a virtio_net virtio_console 8021q
ip link set lo up
poweroff() { echo o >/proc/sysrq-trigger; sleep 10; }
if grep -qw raven.check /proc/cmdline; then
  echo "raven-check: up $(cut -d' ' -f1 /proc/uptime) s, kernel $(uname -r)"
  # no NIC in this mode: the sub-interface goes on a dummy device
  if ip link add raven0 type dummy && ip link add link raven0 name raven0.101 type vlan id 101 &&
    ip -d link show raven0.101 | grep -q 'vlan protocol 802.1Q id 101'; then
    echo "raven-check: ok (VLAN sub-interface raven0.101)"
  else
    echo "raven-check: FAILED to make a VLAN sub-interface"
  fi
  awk '/^(MemTotal|MemAvailable):/ { printf "raven-check: %s %d MB\n", $1, $2 / 1024 }' /proc/meminfo
  poweroff
fi
port=
for f in /sys/class/virtio-ports/*/name; do
  [[ $(cat "$f" 2>/dev/null) == raven.agent ]] && port=/dev/$(basename "$(dirname "$f")")
done
[[ -n $port ]] || { echo "raven-init: no raven.agent port"; poweroff; }
echo "raven-init: agent on $port, up $(cut -d' ' -f1 /proc/uptime) s"
# one request per line: base64 of a bash script; one answer per line: base64 of its output, a space, its exit code.
# A read on a port with no host connected returns at once (EOF): wait and open it again.
while :; do
  exec 3<>"$port"
  while IFS= read -r -u 3 line; do
    base64 -d <<<"$line" >/tmp/req 2>/dev/null
    bash /tmp/req >/tmp/out 2>&1 </dev/null
    rc=$?
    printf '%s %d\n' "$(base64 -w0 /tmp/out)" "$rc" >&3
  done
  exec 3>&-
  sleep 0.2
done
EOF
}

init_hash() { print_init | sha256sum | cut -c1-16; }

# refresh_init: the image's /sbin/raven-init replaced by this script's (debugfs edits the ext4 image in place), so
# that a change to the init needs no new debootstrap.
refresh_init() {
  local f
  f=$(mktemp)
  print_init >"$f"
  # /sbin is a symbolic link to usr/sbin (merged /usr), which debugfs does not follow; it exits 0 whatever fails
  debugfs -w -f - "$VM_DIR/root.img" >/dev/null 2>&1 <<EOF || true
cd /usr/sbin
rm raven-init
write $f raven-init
sif raven-init mode 0100755
EOF
  cmp -s "$f" <(debugfs -R "cat /usr/sbin/raven-init" "$VM_DIR/root.img" 2>/dev/null) || {
    rm -f "$f"
    die "could not update the init in $VM_DIR/root.img (delete $VM_DIR to build anew)"
  }
  rm -f "$f"
  sed -i "s/ init [0-9a-f]*\$//; s/\$/ init $(init_hash)/" "$VM_DIR/built"
  say "vm: updated the guest's init in $VM_DIR/root.img"
}

do_build() {
  if [[ -f $VM_DIR/built ]]; then
    grep -q " init $(init_hash)\$" "$VM_DIR/built" || refresh_init
    say "image already built ($VM_DIR, $(cat "$VM_DIR/built"))"
    return 0
  fi
  need_root build "debootstrap makes device nodes and runs the packages' scripts in a chroot"
  pkg_install vm "${PACKAGES[@]}" >&2
  local t0 tmp mirror suite
  t0=$(now)
  mirror=$(apt_mirror)
  suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
  mkdir -p "$VM_DIR"
  tmp=$(mktemp -d "$VM_DIR/build.XXXXXX")
  # shellcheck disable=SC2064 # expand now: the path is fixed
  trap "umount -l '$tmp/root/proc' 2>/dev/null || true; rm -rf '$tmp'" EXIT
  say "vm: debootstrap $suite from $mirror (minbase + $GUEST_PACKAGES)"
  debootstrap --variant=minbase --include="$GUEST_PACKAGES" "$suite" "$tmp/root" "$mirror" \
    >"$tmp/debootstrap.log" 2>&1 || {
    tail -n 20 "$tmp/debootstrap.log" >&2
    die "debootstrap failed"
  }
  timing "debootstrap" "$t0"
  local t1
  t1=$(now)
  print_init >"$tmp/root/sbin/raven-init"
  chmod 0755 "$tmp/root/sbin/raven-init"
  printf 'MODULES=list\nCOMPRESS=gzip\n' >"$tmp/root/etc/initramfs-tools/conf.d/raven"
  printf '%s\n' "${INITRD_MODULES[@]}" >>"$tmp/root/etc/initramfs-tools/modules"
  mount -t proc proc "$tmp/root/proc"
  chroot "$tmp/root" update-initramfs -u -k all >"$tmp/initramfs.log" 2>&1 || {
    cat "$tmp/initramfs.log" >&2
    die "update-initramfs failed"
  }
  umount "$tmp/root/proc"
  cp "$(readlink -f "$tmp/root/vmlinuz")" "$tmp/vmlinuz"
  cp "$(readlink -f "$tmp/root/initrd.img")" "$tmp/initrd.img"
  # what the guest never needs: apt's lists and caches, documentation
  rm -rf "$tmp/root/var/cache/apt/"* "$tmp/root/var/lib/apt/lists/"* "$tmp/root/usr/share/doc" \
    "$tmp/root/usr/share/man" "$tmp/root/usr/share/locale" "$tmp/root/boot/"*
  local size
  size=$(du -sm "$tmp/root" | cut -f1)
  # an ext4 image made from the directory (no loop mount), with room to spare
  mkfs.ext4 -q -L raven-vm -d "$tmp/root" "$tmp/root.img" "$((size + 128))M" >/dev/null
  timing "initrd + root image" "$t1"
  mv "$tmp/vmlinuz" "$tmp/initrd.img" "$tmp/root.img" "$VM_DIR/"
  local kernel
  kernel=$(basename "$(readlink -f "$tmp/root/vmlinuz")")
  echo "$(date -u +%FT%TZ) kernel $kernel root ${size} MB init $(init_hash)" >"$VM_DIR/built"
  rm -rf "$tmp"
  trap - EXIT
  timing "TOTAL build" "$t0"
  say "vm: built in $VM_DIR: $(cat "$VM_DIR/built")"
  printf '  %s\n' "${TIMINGS[@]}"
}

need_image() { [[ -f $VM_DIR/built ]] || die "no image in $VM_DIR: run 'vm.sh build' first"; }

# qemu_args: the machine every mode shares; software emulation, one vCPU, no display, no reboot (a guest that
# powers off or panics ends qemu).
qemu_args() {
  QEMU=(qemu-system-x86_64 -machine pc -accel tcg,tb-size=64 -cpu max -smp 1 -m "$MEMORY" -nographic -no-reboot
    -nodefaults -serial stdio
    -kernel "$VM_DIR/vmlinuz" -initrd "$VM_DIR/initrd.img"
    -drive "file=$VM_DIR/root.img,if=virtio,format=raw,snapshot=on")
}

KERNEL_CMDLINE="root=/dev/vda ro console=ttyS0 init=/sbin/raven-init panic=1 quiet loglevel=3"

do_check() {
  need_image
  qemu_args
  local t0 out
  t0=$(now)
  out=$(timeout 120 "${QEMU[@]}" -append "$KERNEL_CMDLINE raven.check" 2>&1) || true
  grep -o 'raven-check:.*' <<<"$out" || true
  grep -q 'raven-check: ok' <<<"$out" || {
    tail -n 30 <<<"$out" >&2
    die "check failed"
  }
  say "vm: boot + check + power-off in $(secs "$t0" "$(now)") s (qemu ${MEMORY} MB, TCG, 1 vCPU)"
}

do_boot() {
  need_image
  local agent="" tap="" mac="" share="" forwards=()
  while (($#)); do
    case $1 in
      --agent)
        agent=${2:?--agent needs a value}
        shift 2
        ;;
      --tap)
        tap=${2:?--tap needs a value}
        shift 2
        ;;
      --mac)
        mac=${2:?--mac needs a value}
        shift 2
        ;;
      --share)
        share=${2:?--share needs a directory}
        shift 2
        ;;
      --forward)
        [[ ${2:-} =~ ^[0-9]+$ ]] || die "boot: --forward needs a port number"
        forwards+=("$2")
        shift 2
        ;;
      *) die "boot: unknown argument '$1'" ;;
    esac
  done
  [[ -n $agent ]] || die "boot: --agent SOCKET is required"
  qemu_args
  QEMU+=(-device virtio-serial-pci -chardev "socket,id=agent,path=$agent,server=on,wait=off"
    -device virtserialport,chardev=agent,name=raven.agent)
  if [[ -n $tap ]]; then
    [[ -n $mac ]] || die "boot: --tap needs --mac"
    # vnet_hdr=off: the guest then computes every checksum itself. With it, qemu hands the tap half-done checksums
    # (the guest's offload), and the userspace switch, which reads the tap through a raw socket, never completes them.
    QEMU+=(-netdev "tap,id=net0,ifname=$tap,script=no,downscript=no,vnet_hdr=off"
      -device "virtio-net-pci,netdev=net0,mac=$mac")
  fi
  if [[ -n $share ]]; then
    QEMU+=(-virtfs "local,path=$share,mount_tag=raven,security_model=none,readonly=on")
  fi
  if ((${#forwards[@]})); then
    local netdev="user,id=net1,restrict=on" port
    for port in "${forwards[@]}"; do
      netdev+=",guestfwd=tcp:10.0.2.100:$port-cmd:socat - TCP:127.0.0.1:$port"
    done
    QEMU+=(-netdev "$netdev" -device "virtio-net-pci,netdev=net1")
  fi
  exec "${QEMU[@]}" -append "$KERNEL_CMDLINE"
}

cmd=${1:-}
[[ $# -gt 0 ]] && shift
case $cmd in
  install)
    need_root install "apt-get"
    pkg_install vm "${PACKAGES[@]}"
    ;;
  build) do_build "$@" ;;
  check) do_check "$@" ;;
  boot) do_boot "$@" ;;
  *)
    sed -n '5,18p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
