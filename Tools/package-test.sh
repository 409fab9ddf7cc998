#!/usr/bin/env bash
# Builds the package with Tools/package.sh and checks it: dpkg-deb --info (fields, Depends computed from the binary
# and naming the wrapped libraries, no Swift run-time), dpkg-deb --contents (every path an install needs), the size
# budget, lintian (no errors; warnings are printed), the tarball, and the tools themselves (--version, man pages
# without groff warnings, completion scripts that load). Tools/test.sh runs it every time.
#   Tools/package-test.sh [--clean-root] [--no-build]
# --clean-root (or CAST_PACKAGE_CLEAN_ROOT=1) also installs the .deb with apt into a fresh minimal Debian root made
# by debootstrap (no Swift toolchain; the Depends come from the Debian mirror) and runs there, through chroot:
# cast --version, cast --help, man cast, cast demo (as root and as an unprivileged user), castd --version,
# cast-receiver --help, the bash completion.
# Needs root and the mirror (CAST_DEBIAN_MIRROR, default: this machine's apt source); takes a few minutes.
# Prints each check, then `package: N checks passed` or the failures; exits 1 on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

clean_root=${CAST_PACKAGE_CLEAN_ROOT:-0}
package_flags=()
for argument in "$@"; do
    case "$argument" in
        --clean-root) clean_root=1 ;;
        --no-build) package_flags+=(--no-build) ;;
        *) echo "usage: Tools/package-test.sh [--clean-root] [--no-build]" >&2; exit 2 ;;
    esac
done

# The .deb must stay under this size (issue 21).
max_deb_bytes=$((40 * 1000 * 1000))
out=.build/package
passed=0
failures=()
work=$(mktemp -d)
cleanup() {
    if [ -n "${chroot_dir:-}" ] && mountpoint -q "$chroot_dir/proc"; then umount "$chroot_dir/proc"; fi
    rm -rf "$work"
}
trap cleanup EXIT

# Records one check: `expect "what" command...` passes when the command succeeds.
expect() {
    local what=$1
    shift
    if "$@" > "$work/check.log" 2>&1; then
        echo "ok: $what"
        passed=$((passed + 1))
    else
        echo "FAIL: $what"
        sed 's/^/    /' "$work/check.log" | tail -10
        failures+=("$what")
    fi
}

# Fails (printing the text) unless the text has a line matching the extended regular expression.
has_line() {
    grep -Eq -- "$2" <<< "$1" || { echo "no line matching '$2' in:"; echo "$1"; return 1; }
}

# `prints REGEX command...`: the command succeeds and its output has a line matching REGEX.
prints() {
    local regex=$1 output
    shift
    output=$("$@") || { echo "$output"; echo "exit status $? from: $*"; return 1; }
    has_line "$output" "$regex"
}

version=$(tr -d ' \t\r\n' < VERSION)
arch=$(dpkg --print-architecture)
deb=$out/swift-cast_${version}_${arch}.deb
tarball=$out/swift-cast-$version-linux-$(uname -m).tar.gz

# --- build ---
started=$(date +%s)
if ! Tools/package.sh "${package_flags[@]}" > "$work/package.log" 2>&1; then
    # A crash's message comes before its long backtrace.
    grep -m5 -E "Fatal error|error:|^package.sh:" "$work/package.log" || true
    tail -12 "$work/package.log"
    echo "FAIL: Tools/package.sh"
    echo "package: 0 checks passed, 1 failed"
    exit 1
fi
package_seconds=$(($(date +%s) - started))
echo "ok: Tools/package.sh in ${package_seconds}s: $(tail -1 "$work/package.log")"
passed=$((passed + 1))

# --- dpkg-deb --info ---
info=$(dpkg-deb --info "$deb")
expect "dpkg-deb --info: Package, Version (VERSION), Architecture" \
    eval 'has_line "$info" "^ Package: swift-cast$" && has_line "$info" "^ Version: ${version//./\\.}$" && has_line "$info" "^ Architecture: $arch$"'
depends=$(dpkg-deb --field "$deb" Depends)
echo "Depends (dpkg-shlibdeps): $depends"
for library in libssl3 libavahi-client3 libxml2 libmosquitto1 libvpx7 libopus0 libopenh264-7 libaom3 libc6; do
    expect "Depends names $library" has_line "${depends//, /$'\n'}" "^$library( |$)"
done
expect "Depends names no Swift or ICU run-time" eval '! grep -Eiq "swift|icu|foundation" <<< "$depends"'
expect "the .deb ($(stat -c %s "$deb") bytes) is under $max_deb_bytes bytes" test "$(stat -c %s "$deb")" -lt "$max_deb_bytes"

# --- dpkg-deb --contents ---
contents=$(dpkg-deb --contents "$deb" | awk '{ path = $6; for (i = 7; i <= NF; i++) path = path " " $i; print path }')
expected=(
    "./usr/bin/cast" "./usr/bin/castd -> cast" "./usr/bin/cast-receiver -> cast"
    "./lib/systemd/system/castd.service"
    "./usr/share/doc/swift-cast/copyright" "./usr/share/doc/swift-cast/changelog.gz"
)
for tool in cast cast-receiver castd; do
    expected+=(
        "./usr/share/man/man1/$tool.1.gz"
        "./usr/share/bash-completion/completions/$tool"
        "./usr/share/zsh/vendor-completions/_$tool"
        "./usr/share/fish/vendor_completions.d/$tool.fish"
    )
done
# Every example profile and style of the repository.
for example in Tools/profiles/*.xml Tools/profiles/styles/*.xml; do
    expected+=("./usr/share/doc/swift-cast/examples/${example#Tools/profiles/}")
done
missing=()
for path in "${expected[@]}"; do
    grep -Fxq -- "$path" <<< "$contents" || missing+=("$path")
done
expect "dpkg-deb --contents lists the ${#expected[@]} expected paths" eval '[ ${#missing[@]} = 0 ] || { printf "missing: %s\n" "${missing[@]}"; false; }'

# --- the unpacked package: the tools, their man pages, completions and unit ---
root=$work/root
dpkg-deb --extract "$deb" "$root"
expect "castd.service runs /usr/bin/castd" grep -q "^ExecStart=/usr/bin/castd " "$root/lib/systemd/system/castd.service"
expect "cast needs no Swift library and finds every library it needs (ldd)" \
    eval 'libraries=$(ldd "$root/usr/bin/cast") && ! grep -Ei "swift|foundation|not found" <<< "$libraries"'
expect "cast is stripped" eval 'sections=$(readelf -SW "$root/usr/bin/cast") && ! grep -E "\.symtab|\.debug_" <<< "$sections"'
stamp=$(Tools/version-stamp.sh)
for tool in cast castd cast-receiver; do
    expect "$tool --version prints '$stamp'" eval '[ "$("$root/usr/bin/$tool" --version)" = "$stamp" ]'
done
expect "cast --help" prints "A Google Cast sender" "$root/usr/bin/cast" --help
expect "castd --help" prints "^USAGE: castd" "$root/usr/bin/castd" --help
expect "cast-receiver --help" prints "^USAGE: cast-receiver" "$root/usr/bin/cast-receiver" --help
for tool in cast castd cast-receiver; do
    expect "man page $tool.1 renders without warnings and documents --version" \
        eval 'out=$(MANWIDTH=80 man --warnings -l "$root/usr/share/man/man1/$tool.1.gz" 2> "$work/man.err") && [ ! -s "$work/man.err" ] && grep -q -- "--version" <<< "$out" || { cat "$work/man.err"; false; }'
    expect "bash completion for $tool loads" \
        bash -c "source '$root/usr/share/bash-completion/completions/$tool' && complete -p $tool"
done
if command -v zsh > /dev/null; then
    expect "zsh completions parse" sh -c 'for f; do zsh -n "$f" || exit 1; done' - "$root"/usr/share/zsh/vendor-completions/_*
fi
if command -v fish > /dev/null; then
    expect "fish completions parse" sh -c 'for f; do fish -n "$f" || exit 1; done' - "$root"/usr/share/fish/vendor_completions.d/*.fish
fi

# --- lintian: no errors ---
if command -v lintian > /dev/null; then
    # --fail-on error: exit status 1 on an error tag (2 when lintian itself fails); warnings are printed.
    lintian_status=0
    lintian --pedantic --fail-on error "$deb" > "$work/lintian.log" 2>&1 || lintian_status=$?
    lintian_warnings=$(grep -c "^W: " "$work/lintian.log" || true)
    grep -E "^(E|W): " "$work/lintian.log" | sed 's/^/    lintian: /' || true
    expect "lintian: no errors ($lintian_warnings warnings)" eval '[ "$lintian_status" = 0 ] && ! grep -q "^E: " "$work/lintian.log" || { cat "$work/lintian.log"; false; }'
else
    expect "lintian is installed (Tools/setup.sh test installs it)" false
fi

# --- the tarball ---
missing=()
tarlist=$(tar -tzvf "$tarball" | awk '{ path = $6; for (i = 7; i <= NF; i++) path = path " " $i; print path }')
for path in bin/cast "bin/castd -> cast" "bin/cast-receiver -> cast" share/man/man1/cast.1.gz \
    share/bash-completion/completions/cast share/zsh/site-functions/_cast share/fish/vendor_completions.d/cast.fish \
    share/doc/swift-cast/LICENSE share/doc/swift-cast/examples/castd.xml lib/systemd/system/castd.service \
    share/doc/swift-cast/README; do
    grep -Fxq -- "swift-cast-$version/$path" <<< "$tarlist" || missing+=("$path")
done
mkdir -p "$work/tar"
tar -xzf "$tarball" -C "$work/tar"
expect "the tarball holds the binary, symlinks, man pages, completions and licence; its castd runs" \
    eval '[ ${#missing[@]} = 0 ] && [ "$("$work/tar/swift-cast-$version/bin/castd" --version)" = "$stamp" ] || { printf "missing: %s\n" "${missing[@]}"; false; }'

# --- optionally: install into a clean Debian root and run there ---
if [ "$clean_root" = 1 ]; then
    started=$(date +%s)
    suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
    mirror=${CAST_DEBIAN_MIRROR:-$(grep -hEo "^(URIs: |deb )https?://[^ ]+/debian/?( |$)" /etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2> /dev/null | head -1 | grep -Eo "https?://[^ ]+" || true)}
    mirror=${mirror:-http://deb.debian.org/debian}
    chroot_dir=$(pwd)/.build/package-root
    if mountpoint -q "$chroot_dir/proc"; then umount "$chroot_dir/proc"; fi
    rm -rf --one-file-system "$chroot_dir"
    command -v debootstrap > /dev/null || apt-get install -y -qq --no-install-recommends debootstrap > /dev/null
    mkdir -p .build/debootstrap-cache
    in_root() { chroot "$chroot_dir" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb "$@"; }
    expect "debootstrap --variant=minbase $suite ($mirror)" \
        debootstrap --variant=minbase --cache-dir="$(pwd)/.build/debootstrap-cache" "$suite" "$chroot_dir" "$mirror"
    if [ -x "$chroot_dir/bin/sh" ]; then
        cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
        mount -t proc proc "$chroot_dir/proc"
        cp "$deb" "$chroot_dir/tmp/"
        expect "the clean root has no Swift toolchain or run-time" \
            eval '! in_root sh -c "command -v swift swiftc" && [ -z "$(find "$chroot_dir" -xdev -name "libswiftCore*" -print -quit)" ]'
        expect "apt-get install ./$(basename "$deb") man-db bash-completion (Depends from the mirror)" \
            in_root sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /tmp/$(basename "$deb") man-db bash-completion"
        expect "clean root: cast --version" eval '[ "$(in_root cast --version)" = "$stamp" ]'
        expect "clean root: cast --help" prints "A Google Cast sender" in_root cast --help
        expect "clean root: man cast" prints "A Google Cast sender" in_root env MANPAGER=cat MANWIDTH=80 man cast
        expect "clean root: cast demo" prints "Demo complete" in_root timeout 120 cast demo
        # castd.service runs as a throwaway user (DynamicUser), and people run cast as themselves.
        expect "clean root: cast demo as an unprivileged user" prints "Demo complete" \
            in_root setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp timeout 120 cast demo
        expect "clean root: castd --version" eval '[ "$(in_root castd --version)" = "$stamp" ]'
        expect "clean root: castd token" prints "^hash: " in_root castd token
        expect "clean root: cast-receiver --help" prints "^USAGE: cast-receiver" in_root cast-receiver --help
        expect "clean root: the bash completion loads" \
            in_root bash -c "source /usr/share/bash-completion/completions/cast && complete -p cast"
        umount "$chroot_dir/proc"
    fi
    echo "clean root: $(($(date +%s) - started))s (debootstrap and apt from $mirror; root left in $chroot_dir)"
fi

if [ ${#failures[@]} = 0 ]; then
    echo "package: $passed checks passed ($(basename "$deb") $(stat -c %s "$deb") bytes, $(basename "$tarball") $(stat -c %s "$tarball") bytes, package.sh ${package_seconds}s)"
else
    printf 'FAIL: %s\n' "${failures[@]}"
    echo "package: $passed checks passed, ${#failures[@]} failed"
    exit 1
fi
