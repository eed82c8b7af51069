#!/usr/bin/env bash
# Hashing a version's zips with curl and the standard tools: the baseline `provider lock upgrade` is measured
# against (bench/figures/lock.mjs), and nothing else. For each provider it reads each platform's download document
# from the private registry's provider registry protocol, downloads the zip with curl, one after another, takes its
# SHA-256 with sha256sum (to hold against SHA256SUMS) and its h1: as Terraform computes it (dirhash's Hash1: the
# SHA-256 of the sorted lines "<sha256 of an entry>  <its name>", base64), each entry inflated by `unzip -p`. It
# also downloads each SHA256SUMS (the zh: hashes are its lines). It verifies no signature and writes no lock file.
# Prints one line per zip: <name> <platform> <sha256 of the zip> h1:<…>.
#
# Usage: lock-with-curl.sh <work-dir>
# Env:   BASE_URL (e.g. http://127.0.0.1:8081), TOKEN, ORG, NAMES (space separated provider names), VERSION,
#        PLATFORMS (space separated: linux_amd64 darwin_arm64)
# Needs: bash, curl, sed, sha256sum, cut, sort, unzip, xxd, base64.
set -euo pipefail
dir=${1:?work directory}
: "${BASE_URL:?}" "${TOKEN:?}" "${ORG:?}" "${NAMES:?}" "${VERSION:?}" "${PLATFORMS:?}"

# A string field of the one-line JSON document on stdin, as it stands in the JSON (still escaped).
field() { sed -n 's/.*"'"$1"'":"\(\([^"\\]\|\\.\)*\)".*/\1/p'; }

# The h1: of a zip: each file entry's SHA-256 (inflated by unzip) and name, sorted by name, hashed again.
h1() {
  unzip -Z1 "$1" | grep -v '/$' | LC_ALL=C sort | while IFS= read -r entry; do
    printf '%s  %s\n' "$(unzip -p "$1" "$entry" | sha256sum | cut -d' ' -f1)" "$entry"
  done | sha256sum | cut -d' ' -f1 | xxd -r -p | base64
}

for name in $NAMES; do
  protocol="$BASE_URL/api/registry/v1/providers/$ORG/$name/$VERSION/download"
  doc=
  for platform in $PLATFORMS; do
    doc=$(curl -sSf --header "Authorization: Bearer $TOKEN" "$protocol/${platform%%_*}/${platform#*_}")
    zip="$dir/$(field filename <<<"$doc")"
    curl -sSf -o "$zip" "$(field download_url <<<"$doc")"
    echo "$name $platform $(sha256sum "$zip" | cut -d' ' -f1) h1:$(h1 "$zip")"
    rm -f "$zip"
  done
  curl -sSf -o "$dir/${name}_SHA256SUMS" "$(field shasums_url <<<"$doc")"
done
