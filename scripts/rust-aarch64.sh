#!/usr/bin/env bash
# The toolchain of verify's Rust NEON row (`cargo aarch64 neon (qemu)`, verify/rust.py
# aarch64_rustc): a rustc with the aarch64-unknown-linux-gnu std.  Debian ships one as rustc-web
# with libstd-rust-web-dev:arm64; this script downloads those packages with a private apt state
# (no dpkg architecture added, nothing installed system-wide), unpacks them into
# build/toolchains/rust-aarch64 and writes build/toolchains/rust-aarch64/rustc, which runs that
# rustc with its own libraries.  `make verify` runs it (scripts/bootstrap.sh --verify); idempotent;
# on failure it says why and exits non-zero, and the row stays SKIPPED with its reason.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=build/toolchains/rust-aarch64
target=aarch64-unknown-linux-gnu
works() { "$1" --print target-libdir --target "$target" >/dev/null 2>&1 &&
          compgen -G "$("$1" --print target-libdir --target "$target")/libcore-*.rlib" >/dev/null; }
[ -x "$dest/rustc" ] && works "$dest/rustc" && exit 0
for tool in apt-get apt-cache dpkg-deb; do
  command -v "$tool" >/dev/null 2>&1 || { echo "rust-aarch64: no $tool (not a Debian/Ubuntu machine)" >&2; exit 1; }
done
mkdir -p build/toolchains
tmp=$(mktemp -d build/toolchains/.rust-aarch64.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/deb" "$tmp/root"
apt=(-qq -o Dir::State::Lists="$tmp/lists" -o Dir::Cache="$tmp/cache" -o Debug::NoLocking=1
     -o APT::Architectures::=amd64 -o APT::Architectures::=arm64)
apt-get "${apt[@]}" update >/dev/null 2>&1 || { echo "rust-aarch64: apt-get update failed (offline?)" >&2; exit 1; }
# the versioned names: rustc-web's std runtime and the LLVM library its rustc links
std=$(apt-cache "${apt[@]}" depends libstd-rust-web-dev 2>/dev/null | awk '/Depends: libstd-rust-web-[0-9]/ {print $2; exit}')
llvm=$(apt-cache "${apt[@]}" depends rust-web-llvm 2>/dev/null | awk '/Depends: llvm-[0-9]/ {sub("^llvm-", "libllvm", $2); print $2; exit}')
if [ -z "$std" ] || [ -z "$llvm" ]; then
  echo "rust-aarch64: this distribution has no rustc-web (Debian 12 security updates ship it)" >&2
  exit 1
fi
(cd "$tmp/deb" && apt-get "${apt[@]}" download rustc-web libstd-rust-web-dev "$std" "$llvm" \
   libstd-rust-web-dev:arm64 >/dev/null 2>&1) || { echo "rust-aarch64: apt-get download failed" >&2; exit 1; }
for deb in "$tmp"/deb/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done
cat > "$tmp/root/rustc" <<'SH'
#!/bin/sh
# Debian's rustc-web, unpacked here by scripts/rust-aarch64.sh, with its own libraries
d=$(dirname "$(readlink -f "$0")")
LD_LIBRARY_PATH="$d/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$d/usr/bin/rustc" "$@"
SH
chmod +x "$tmp/root/rustc"
if ! works "$tmp/root/rustc"; then
  echo "rust-aarch64: the unpacked rustc does not run or has no $target std:" \
       "$("$tmp/root/rustc" --version 2>&1 | head -1)" >&2
  exit 1
fi
rm -rf "$dest"
mv "$tmp/root" "$dest"
echo "rust-aarch64: $("$dest/rustc" --version) with the $target std in $dest"
