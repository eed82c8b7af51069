#!/usr/bin/env bash
# Mirroring with curl and nothing else: the baseline `provider mirror` is measured against (bench/figures/mirror.mjs),
# and nothing else. For each version it reads each platform's download document from the origin's provider
# registry protocol, downloads every zip, SHA256SUMS and its signature with curl, one after another, then
# publishes that folder with publish-with-curl.sh (the documented flow: create the version and platforms, upload
# each file with `curl -T`). Before the first version it registers the origin's signing key in the destination,
# as the armor the origin served. It verifies nothing: no signature, no sum, no zip content.
#
# Usage: mirror-with-curl.sh <work-dir>
# Env:   ORIGIN_URL (e.g. http://127.0.0.1:8081), ORIGIN_TOKEN, NAMESPACE, NAME, VERSIONS and PLATFORMS (space
#        separated: 1.0.0 1.1.0, linux_amd64 darwin_arm64), and the destination as publish-with-curl.sh takes it:
#        BASE_URL, TOKEN, ORG
# Needs: bash, curl, sed (the origin's documents are one line of JSON), and what publish-with-curl.sh needs.
set -euo pipefail
dir=${1:?work directory}
: "${ORIGIN_URL:?}" "${ORIGIN_TOKEN:?}" "${NAMESPACE:?}" "${NAME:?}" "${VERSIONS:?}" "${PLATFORMS:?}"
: "${BASE_URL:?}" "${TOKEN:?}" "${ORG:?}"
here=$(cd "$(dirname "$0")" && pwd)
protocol="$ORIGIN_URL/api/registry/v1/providers/$NAMESPACE/$NAME"

# A string field of the one-line JSON document on stdin, as it stands in the JSON (still escaped).
field() { sed -n 's/.*"'"$1"'":"\(\([^"\\]\|\\.\)*\)".*/\1/p'; }

registered=
for version in $VERSIONS; do
  out="$dir/$version"
  mkdir -p "$out"
  doc=
  for platform in $PLATFORMS; do
    doc=$(curl -sSf --header "Authorization: Bearer $ORIGIN_TOKEN" "$protocol/$version/download/${platform%%_*}/${platform#*_}")
    curl -sSf -o "$out/$(field filename <<<"$doc")" "$(field download_url <<<"$doc")"
  done
  prefix="terraform-provider-${NAME}_${version}"
  curl -sSf -o "$out/${prefix}_SHA256SUMS" "$(field shasums_url <<<"$doc")"
  curl -sSf -o "$out/${prefix}_SHA256SUMS.sig" "$(field shasums_signature_url <<<"$doc")"
  if [ -z "$registered" ]; then
    curl -sSf --header "Authorization: Bearer $TOKEN" --header "Content-Type: application/vnd.api+json" \
      --request POST "$BASE_URL/api/registry/private/v2/gpg-keys" \
      --data "{\"data\":{\"type\":\"gpg-keys\",\"attributes\":{\"namespace\":\"$ORG\",\"ascii-armor\":\"$(field ascii_armor <<<"$doc")\"}}}" \
      >/dev/null
    registered=yes
  fi
  protocols=$(sed -n 's/^{"protocols":\(\[[^]]*\]\).*/\1/p' <<<"$doc")
  VERSION=$version KEY_ID=$(field key_id <<<"$doc") PROTOCOLS=$protocols \
    bash "$here/publish-with-curl.sh" "$out" >/dev/null
  echo "mirrored $version"
done
