#!/bin/sh
# Usage: on_full_disk.sh SIZE DIR COMMAND [ARGS...]
#
# Runs COMMAND with DIR on a filesystem of its own of SIZE (a tmpfs in a
# private user and mount namespace: `unshare --user --map-root-user
# --mount`, no privileges needed), so that writes under DIR run out of
# space as they would on a full disk. The namespace and the filesystem end
# with COMMAND, so what COMMAND left in DIR is listed, one name per line, in
# DIR.left (empty when it left nothing) before they go. Exits with
# COMMAND's status. lit's feature `full-disk` says this works here.
set -eu
size=$1 dir=$2
shift 2
mkdir -p "$dir"
exec unshare --user --map-root-user --mount sh -c '
  size=$1 dir=$2
  shift 2
  mount -t tmpfs -o "size=$size" memfmt-full-disk "$dir" || exit 125
  status=0
  "$@" || status=$?
  ls -A "$dir" > "$dir.left"
  exit $status' sh "$size" "$dir" "$@"
