#!/usr/bin/env bash
# Builds the one image of every service with podman, without a container registry by default:
#   deploy/image/build.sh            (what `make image` runs)
# Environment:
#   POKER_IMAGE          tag to build (default localhost/poker-platform:latest, which also gets :<version>-<commit>)
#   POKER_IMAGE_BASE     debian (default: base from Debian packages) or registry (FROM python:3.12-slim)
#   POKER_IMAGE_CACHE    cache folder for the base tarball and the wheels
#                        (default ${XDG_CACHE_HOME:-~/.cache}/poker-platform-image; a fresh machine fills it)
#   POKER_BASE_MAX_AGE_DAYS  rebuild the Debian base after this many days, for security updates (7)
#   CONTAINERS_CONF      podman config; as root it defaults to deploy/podman/containers.conf
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo"
# As root (CI, VMs) podman needs the project's settings; rootless podman keeps the user's own.
if [[ $EUID == 0 ]]; then export CONTAINERS_CONF="${CONTAINERS_CONF:-$repo/deploy/podman/containers.conf}"; fi
image="${POKER_IMAGE:-localhost/poker-platform:latest}"
base_kind="${POKER_IMAGE_BASE:-debian}"
cache="${POKER_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/poker-platform-image}"
max_age_days="${POKER_BASE_MAX_AGE_DAYS:-7}"
host_python="${PYTHON:-python3}"
arch="$(uname -m)"
mkdir -p "$cache"
staging=""
trap 'rm -rf ${staging:+"$staging"} "$cache"/*.$$.partial' EXIT
command -v podman >/dev/null || { echo "build.sh: podman is missing (apt-get install podman runc)" >&2; exit 3; }
log() { printf '[image %(%H:%M:%S)T] %s\n' -1 "$*"; }
hash_of() { sha256sum | cut -c1-16; }

case "$base_kind" in
  debian) python_version=3.11.2 ;;   # bookworm's python3 (markers such as python_full_version need the patch level)
  registry) python_version=3.12.0; base_image="${POKER_REGISTRY_BASE:-docker.io/library/python:3.12-slim}" ;;
  *) echo "build.sh: POKER_IMAGE_BASE must be debian or registry, not $base_kind" >&2; exit 2 ;;
esac

# 1. The Debian base: a tarball from Debian packages, imported as an image (both cached).
if [[ $base_kind == debian ]]; then
  key="$( (cat deploy/image/base.sh; echo "$arch") | hash_of)"
  tarball="$cache/base-$key.tar"
  base_image="localhost/poker-base:bookworm-$key"
  fresh=""
  if [[ -f $tarball ]] && [[ -n $(find "$tarball" -mtime +"$max_age_days") ]]; then
    log "Debian base older than $max_age_days days: rebuilding it"
    rm -f "$tarball"
  fi
  if [[ ! -f $tarball ]]; then
    log "building the Debian base from packages (mmdebstrap)"
    # Written aside and renamed: a concurrent build (another worktree, another CI job) never sees half a tarball.
    deploy/image/base.sh "$tarball.$$.partial"
    mv -f "$tarball.$$.partial" "$tarball"
    fresh=1
  fi
  # A fresh tarball is imported under the same tag; the old base loses its tag and ages out.
  if [[ -n $fresh ]] || ! podman image exists "$base_image"; then
    log "importing $tarball as $base_image"
    podman import --quiet "$tarball" "$base_image" >/dev/null
  fi
fi

# 2. Wheels of the runtime dependencies, pinned by deploy/constraints.txt, for the image's Python.
staging="$(mktemp -d "$cache/context.XXXXXX")"
"$host_python" - "$staging/requirements.txt" <<'PY'
import sys, tomllib
with open("pyproject.toml", "rb") as f:
    deps = tomllib.load(f)["project"]["dependencies"]
with open(sys.argv[1], "w") as out:
    out.write("".join(f"{d}\n" for d in deps))
PY
minor="${python_version%.*}"
abi="cp${minor/./}"
wheels_key="$( (cat deploy/constraints.txt "$staging/requirements.txt"; echo "$python_version $abi $arch") | hash_of)"
wheels="$cache/wheels-$wheels_key"
if [[ ! -f $wheels/.complete ]]; then
  log "downloading wheels for $abi/$arch into $wheels"
  partial="$wheels.$$.partial"
  rm -rf "$partial"
  platforms=()
  for p in manylinux2014 manylinux_2_17 manylinux_2_24 manylinux_2_27 manylinux_2_28 manylinux_2_31 manylinux_2_34 manylinux_2_36; do
    platforms+=(--platform "${p}_$arch")
  done
  # async-timeout: pip evaluates python_full_version markers against the host's interpreter, not the
  # target's, and redis needs it below 3.11.3 (bookworm has 3.11.2); a spare wheel costs nothing.
  "$host_python" -m pip download --quiet --disable-pip-version-check --dest "$partial" \
      --only-binary=:all: --implementation cp --python-version "$python_version" \
      --abi "$abi" --abi abi3 --abi none "${platforms[@]}" \
      -c deploy/constraints.txt -r "$staging/requirements.txt" async-timeout \
      2> >(grep -v "^WARNING: Location .* is ignored" >&2)
  touch "$partial/.complete"
  rm -rf "$wheels"
  mv -T "$partial" "$wheels" 2>/dev/null || rm -rf "$partial"   # a concurrent build got there first
fi

# 3. The build context: only what the image needs (no tests, no virtual environment, no caches).
mkdir "$staging/wheels"
cp -l "$wheels"/*.whl "$staging/wheels/" 2>/dev/null || cp "$wheels"/*.whl "$staging/wheels/"
tar --exclude=__pycache__ --exclude='*.pyc' -cf - libs services | tar -xf - -C "$staging"
# The web client the gateway serves (`make web`); without it the gateway's page says it is not built.
mkdir -p "$staging/web/dist"
if [[ -f web/dist/index.html ]]; then cp -r web/dist/. "$staging/web/dist/"
else log "!!! web/dist is not built (make web): the image's gateway serves no page !!!"; fi
cp deploy/constraints.txt deploy/image/healthcheck.py "$staging/"

# 4. Build with the network off.
version="$(sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)"
revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
short="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
[[ -z $(git status --porcelain -- libs services deploy pyproject.toml 2>/dev/null) ]] || short="$short-dirty"
version_tag="${image%:*}:$version-$short"
pull=never; [[ $base_kind == registry ]] && pull=missing
# The version tag only for the default name: a one-off tag (the tests') leaves nothing behind.
names=("$image"); [[ -n ${POKER_IMAGE:-} ]] || names+=("$version_tag")
tags=(); for name in "${names[@]}"; do tags+=(--tag "$name"); done
log "building ${names[*]} on $base_image"
podman build --quiet --network=none --format docker --pull="$pull" \
    --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 \
    --build-arg BASE_IMAGE="$base_image" \
    --build-arg VERSION="$version-$short" --build-arg REVISION="$revision" \
    --build-arg SOURCE="${POKER_IMAGE_SOURCE:-https://example.invalid/poker-platform}" \
    "${tags[@]}" \
    --file deploy/Containerfile "$staging" >/dev/null
log "built $image: $(podman image inspect --format '{{.Id}} {{.Size}}' "$image" | awk '{printf "%.12s, %d MB", $1, $2/1e6}')"
