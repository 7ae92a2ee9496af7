#!/usr/bin/env bash
# Build one release (`make release`) from the commit checked out, into build/release/<version>/:
#
#   deploy/release.sh [--no-wheelhouse] [OUT]
#
#   paigow-table-controller-<version>.tar.gz   the source tree (git archive) with its version
#   paigow_table_controller-<version>-py3-none-any.whl   the controller, built from that tree
#   wheelhouse-aarch64/, wheelhouse-x86_64/    the locked wheels (deploy/wheelhouse.sh) and the
#                                              controller's wheel: `install.sh --wheelhouse DIR`
#   software-packages.manifest                 the release's manifest (deploy/manifest.sh): the
#                                              unit file and the controller's files, with one
#                                              release hash (its SHA-256, in the notes); also in
#                                              each wheelhouse, where install.sh compares with it
#   RELEASE-NOTES.md                           this version's CHANGELOG.md section, the hashes
#   SHA256SUMS                                 every file above
#
# The version comes from the git tag: HEAD tagged vX.Y.Z gives X.Y.Z, and CHANGELOG.md must have
# a "## [X.Y.Z]" section. Untagged, it is a development build, <last tag>+<commits>.g<hash>
# (0+<commits>.g<hash> before the first tag), whose notes are the "## [Unreleased]" section
# under a warning that it is not a release for a table. A tree with uncommitted changes is
# refused: a release is a commit. --no-wheelhouse skips the downloads (tests; no internet).
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
WHEELHOUSE=1
OUT=""
while [ "$#" -gt 0 ]; do
    case "$1" in
        --no-wheelhouse) WHEELHOUSE=0 ;;
        -h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "release.sh: unknown option $1" >&2; exit 2 ;;
        *) OUT="$1" ;;
    esac
    shift
done
cd "$SRC"
if ! git rev-parse --git-dir >/dev/null 2>&1; then
    echo "release.sh: $SRC is not a git checkout: a release is built from a commit" >&2
    exit 1
fi
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "release.sh: the tree has uncommitted changes (git status): commit them first" >&2
    exit 1
fi

commit="$(git rev-parse HEAD)"
if tag="$(git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null)"; then
    version="${tag#v}"
    section="$version"
    tagged=1
else
    tagged=0
    section="Unreleased"
    short="$(git rev-parse --short=12 HEAD)"
    if last="$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null)"; then
        version="${last#v}+$(git rev-list --count "$last..HEAD").g$short"
    else
        version="0+$(git rev-list --count HEAD).g$short"
    fi
fi
if ! [[ "$version" =~ ^[0-9]+(\.[0-9]+)*(\+[0-9]+\.g[0-9a-f]+)?$ ]]; then
    echo "release.sh: tag $tag does not name a version (vX.Y.Z)" >&2
    exit 1
fi
notes="$(awk -v want="## [$section]" '
    index($0, want) == 1 { keep = 1; print; next }
    keep && /^## \[/ { exit }
    keep { print }' CHANGELOG.md)"
if [ -z "$notes" ]; then
    echo "release.sh: CHANGELOG.md has no \"## [$section]\" section: write it first" >&2
    exit 1
fi

OUT="${OUT:-build/release/$version}"
rm -rf "$OUT"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
name="paigow-table-controller-$version"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
git archive --format=tar --prefix="$name/" HEAD | tar -x -C "$stage"
# the version, in the one file that holds it (hashed with the rest of the software)
sed -i "s/^__version__ = .*/__version__ = \"$version\"/" "$stage/$name/controller/version.py"
grep -q "^__version__ = \"$version\"$" "$stage/$name/controller/version.py"
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner \
    --mtime="@$(git log -1 --format=%ct HEAD)" -czf "$OUT/$name.tar.gz" "$name"

echo "release $version: the wheel"
"$PYTHON" -m pip wheel --quiet --no-deps --no-build-isolation --wheel-dir "$OUT" \
    "$stage/$name" >/dev/null
wheel="$(cd "$OUT" && ls paigow_table_controller-*.whl)"

if [ "$WHEELHOUSE" -eq 1 ]; then
    for arch in aarch64 x86_64; do
        echo "release $version: the wheelhouse for $arch"
        flag=()
        [ "$arch" = x86_64 ] && flag=(--x86-64)
        PYTHON="$PYTHON" bash "$SRC/deploy/wheelhouse.sh" "${flag[@]}" "$OUT/wheelhouse-$arch"
        cp "$OUT/$wheel" "$OUT/wheelhouse-$arch/"
    done
fi

# The release's manifest (deploy/manifest.sh): the unit file and every file of fsm/, drivers/ and
# controller/ as the table hashes them (coreutils, as controller.service.selfcheck says), made from
# the tree the wheel was built from. install.sh compares what it installs with it and stops on a
# difference; it ships beside the wheel in each wheelhouse. The dependencies' lines (their
# RECORDs) and the interpreter's depend on the architecture and the OS, so install.sh adds them on
# the table when it writes the approved manifest.
bash "$SRC/deploy/manifest.sh" "$stage/$name" >"$OUT/software-packages.manifest"
packages_hash="$(sha256sum "$OUT/software-packages.manifest" | cut -d' ' -f1)"
if [ "$WHEELHOUSE" -eq 1 ]; then
    for arch in aarch64 x86_64; do
        cp "$OUT/software-packages.manifest" "$OUT/wheelhouse-$arch/"
        (cd "$OUT/wheelhouse-$arch" \
            && sha256sum -- *.whl requirements.lock software-packages.manifest >SHA256SUMS)
    done
fi

{
    if [ "$tagged" -eq 0 ]; then
        echo "> **Development build, not a release:** commit $commit is not tagged vX.Y.Z."
        echo "> Do not install it on a table in play."
        echo
    fi
    echo "# paigow-table-controller $version"
    echo
    echo "Commit \`$commit\`; built $(date -u +%Y-%m-%dT%H:%MZ)."
    echo
    echo "Release manifest (\`software-packages.manifest\`): SHA-256 \`$packages_hash\` (the release hash)."
    echo "install.sh compares the installed software with it and stops on a difference; the approved"
    echo "manifest a table writes (/etc/paigow/software.manifest) holds these lines, the interpreter's"
    echo "and one line per locked dependency; \`tablectl --version\` prints its hash."
    echo
    echo "$notes" | tail -n +2
} >"$OUT/RELEASE-NOTES.md"

(cd "$OUT" && find . -type f -not -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort \
    | xargs sha256sum >SHA256SUMS)
echo "release $version in $OUT ($( [ "$tagged" -eq 1 ] && echo "tag $tag" || echo "UNTAGGED: a development build"))"
