#!/usr/bin/env bash
# The documented way to publish a private provider (HCP Terraform docs, "Publishing private providers"):
# create the version and each platform with curl, then upload each file with `curl -T`, one after another.
# It verifies nothing and never waits. It is the baseline `provider publish` is measured against (bench/),
# and nothing else: the demo uses `provider publish`.
#
# Usage: publish-with-curl.sh <release-dir>
# Env:   BASE_URL (e.g. http://127.0.0.1:8080), TOKEN, ORG, NAME, VERSION, KEY_ID, PROTOCOLS (JSON array)
# Needs: bash, curl, node (to read JSON; jq is not assumed).
set -euo pipefail
dir=${1:?release directory}
: "${BASE_URL:?}" "${TOKEN:?}" "${ORG:?}" "${NAME:?}" "${VERSION:?}" "${KEY_ID:?}" "${PROTOCOLS:=[\"6.0\"]}"
api="$BASE_URL/api/v2/organizations/$ORG/registry-providers/private/$ORG/$NAME"
auth=(--header "Authorization: Bearer $TOKEN" --header "Content-Type: application/vnd.api+json")

# Reads a JSON path such as data.links.shasums-upload from stdin.
field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let v=JSON.parse(s);for(const k of process.argv[1].split("."))v=v?.[k];process.stdout.write(String(v??""))})' "$1"; }

curl -sSf "${auth[@]}" --request POST "$BASE_URL/api/v2/organizations/$ORG/registry-providers" \
  --data "{\"data\":{\"type\":\"registry-providers\",\"attributes\":{\"name\":\"$NAME\",\"namespace\":\"$ORG\",\"registry-name\":\"private\"}}}" \
  >/dev/null || true # already there is fine

version=$(curl -sSf "${auth[@]}" --request POST "$api/versions" \
  --data "{\"data\":{\"type\":\"registry-provider-versions\",\"attributes\":{\"version\":\"$VERSION\",\"key-id\":\"$KEY_ID\",\"protocols\":$PROTOCOLS}}}")
prefix="terraform-provider-${NAME}_${VERSION}"
curl -sSf -T "$dir/${prefix}_SHA256SUMS" "$(field data.links.shasums-upload <<<"$version")" >/dev/null
curl -sSf -T "$dir/${prefix}_SHA256SUMS.sig" "$(field data.links.shasums-sig-upload <<<"$version")" >/dev/null

for zip in "$dir/${prefix}"_*.zip; do
  file=$(basename "$zip")
  platform=${file#"${prefix}_"}
  platform=${platform%.zip}
  os=${platform%%_*}
  arch=${platform#*_}
  shasum=$(sha256sum "$zip" | cut -d' ' -f1)
  created=$(curl -sSf "${auth[@]}" --request POST "$api/versions/$VERSION/platforms" \
    --data "{\"data\":{\"type\":\"registry-provider-version-platforms\",\"attributes\":{\"os\":\"$os\",\"arch\":\"$arch\",\"shasum\":\"$shasum\",\"filename\":\"$file\"}}}")
  curl -sSf -T "$zip" "$(field data.links.provider-binary-upload <<<"$created")" >/dev/null
  echo "uploaded $file"
done
