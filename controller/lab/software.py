"""On-demand software verification (issue 28 item 3; GLI-11 style, NY 5321.18(b)(3)(iv),
NJ 13:69E-1.39B): a digest keyed by the asker's seed over every approved file, read from disk at
the moment of asking, so a copied answer or a stored hash cannot pass for the software.

Two answers over the same bytes: the bytes of every file the approved manifest lists, in the
manifest's order (sorted by path, as `controller.service.selfcheck.manifest_text` writes it),
concatenated:
- ``hmac-sha1``: HMAC-SHA1 keyed by the seed (1-64 bytes, given in hex), as GAT does; the
  console, the page and ``tablectl verify-software`` answer it;
- ``sas-crc16``: SAS long poll 21 (ROM signature verification): CRC-16/KERMIT (the link's own
  CRC, `drivers.sas.codec.crc16_kermit`) with the host's 2-byte seed as the initial value.

Which files: the approved manifest (`selfcheck.APPROVED_MANIFEST`, or the one given) when there
is one, else the installed software's own manifest (a bench: the answer says "installed, not
approved"). An entry is resolved to a file: a package file (``controller/cli/run.py``) under its
installed package, a dependency (``python/tornado==6.6.1/RECORD``) to its RECORD file,
``python/interpreter`` to the interpreter's binary, an absolute path as it is. A file that cannot
be read is no digest but a problem naming it.

Must never write a file, never cache a file's bytes or a digest between requests, never hold a
game rule; journaling who asked is the caller's (`software_verified` events).
"""

from __future__ import annotations

import binascii
import dataclasses
import hashlib
import hmac
import importlib.metadata
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from controller.service import selfcheck
from fsm.round.events import SoftwareVerified

METHODS = ("hmac-sha1", "sas-crc16")
_DEPENDENCY = re.compile(r"^python/([^=/]+)==([^/]+)/RECORD$")
#: Bits of each byte reversed: CRC-16/KERMIT (reflected) through binascii.crc_hqx (not
#: reflected, in C): kermit(d, i) = rev16(crc_hqx(rev8(d), rev16(i))).
_REV8 = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))
_CHUNK = 1 << 20


class VerifyError(Exception):
    """No digest: the seed is malformed or an approved file cannot be read (named)."""


@dataclass(frozen=True)
class Verification:
    method: str
    seed: str  # as given, normalised: lowercase hex
    digest: str  # hex: 40 digits (hmac-sha1) or 4 (sas-crc16, the 16-bit signature)
    files: int
    size: int
    manifest: str  # where the list of approved files came from
    approved: bool  # False: no approved manifest here, the installed software's own list

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)


def _rev16(x: int) -> int:
    return int(f"{x:016b}"[::-1], 2)


def crc16_kermit_fast(data: bytes, crc: int = 0) -> int:
    """CRC-16/KERMIT of ``data`` from the initial value ``crc`` (the same as
    `drivers.sas.codec.crc16_kermit`, at C speed for megabytes)."""
    return _rev16(binascii.crc_hqx(data.translate(_REV8), _rev16(crc)))


def parse_seed(method: str, text: str) -> bytes:
    """The seed's bytes: ``hmac-sha1`` 1-64 bytes in hex (2-128 digits); ``sas-crc16`` exactly
    4 hex digits, the 16-bit number the host sends (low byte first on the wire)."""
    seed = text.strip().lower().removeprefix("0x")
    if method not in METHODS:
        raise VerifyError(f"method must be one of {', '.join(METHODS)}, not {method[:20]!r}")
    if not re.fullmatch(r"[0-9a-f]+", seed) or len(seed) % 2:
        raise VerifyError(f"seed must be hex digits in pairs, got {text[:40]!r}")
    if method == "sas-crc16" and len(seed) != 4:
        raise VerifyError(f"a SAS 21 seed is 4 hex digits (2 bytes), got {text[:40]!r}")
    if not 2 <= len(seed) <= 128:
        raise VerifyError(f"seed must be 1 to 64 bytes (2 to 128 hex digits), got {len(seed)}")
    return bytes.fromhex(seed)


class _Lookup:
    """Where the packages and the dependencies are, found once per request (never a file's
    bytes: those are read at every request)."""

    def __init__(self) -> None:
        self._roots: dict[str, Path] = {}
        self._dists: dict[str, importlib.metadata.Distribution] = {}

    def root(self, package: str) -> Path:
        if package not in self._roots:
            try:
                self._roots[package] = selfcheck._package_dir(package)
            except selfcheck.SelfCheckError as exc:
                raise VerifyError(str(exc)) from None
        return self._roots[package]

    def dist(self, name: str) -> importlib.metadata.Distribution | None:
        key = selfcheck._normal(name)
        if key not in self._dists:
            try:
                self._dists[key] = importlib.metadata.distribution(name)
            except importlib.metadata.PackageNotFoundError:
                return None
        return self._dists[key]


def _record_file(dist: importlib.metadata.Distribution) -> Path | None:
    """The RECORD file of an installed distribution: beside its METADATA in its .dist-info
    directory (without reading the RECORD's list), else found through that list."""
    where = getattr(dist, "_path", None)  # PathDistribution: the .dist-info directory
    if where is not None and (Path(where) / "RECORD").is_file():
        return Path(where) / "RECORD"
    for file in dist.files or []:
        if file.name == "RECORD" and file.parent.name.endswith(".dist-info"):
            return Path(str(file.locate()))
    return None


def resolve(entry: str, lookup: _Lookup | None = None) -> Path:
    """The file an approved manifest's entry names (VerifyError when it names none here)."""
    lookup = lookup or _Lookup()
    if entry.startswith("/"):
        return Path(entry)
    if entry == selfcheck.INTERPRETER:
        return selfcheck.interpreter_path()
    dependency = _DEPENDENCY.match(entry)
    if dependency is not None:
        name, version = dependency.groups()
        dist = lookup.dist(name)
        if dist is None:
            raise VerifyError(f"{entry}: {name} is not installed")
        if dist.version != version:
            raise VerifyError(f"{entry}: {name} {dist.version} is installed")
        record = _record_file(dist)
        if record is None:
            raise VerifyError(f"{entry}: {name} has no RECORD file")
        return record
    package, _, rest = entry.partition("/")
    if package not in selfcheck.SOFTWARE_PACKAGES or not rest:
        raise VerifyError(f"{entry}: not a file of the software")
    return lookup.root(package) / rest


def approved_list(manifest_path: Path | None = None) -> tuple[list[str], str, bool]:
    """``(entries in manifest order, where from, approved)``: the approved manifest at
    ``manifest_path`` (default `selfcheck.APPROVED_MANIFEST` when it exists), else the installed
    software's own manifest (not approved)."""
    path = manifest_path
    if path is None and selfcheck.APPROVED_MANIFEST.exists():
        path = selfcheck.APPROVED_MANIFEST
    if path is not None:
        try:
            manifest: Mapping[str, str] = selfcheck.read_manifest(path)
        except selfcheck.SelfCheckError as exc:
            raise VerifyError(str(exc)) from None
        return sorted(manifest), str(path), True
    try:
        manifest = selfcheck.software_manifest()
    except selfcheck.SelfCheckError as exc:
        raise VerifyError(str(exc)) from None
    return sorted(manifest), "the installed software (no approved manifest here)", False


def _chunks(entries: list[str]) -> Iterator[bytes]:
    lookup = _Lookup()
    for entry in entries:
        path = resolve(entry, lookup)
        try:
            with path.open("rb") as f:
                while chunk := f.read(_CHUNK):
                    yield chunk
        except OSError as exc:
            raise VerifyError(f"{entry}: cannot be read ({exc.strerror or exc})") from None


def verify(method: str, seed_text: str, manifest_path: Path | None = None) -> Verification:
    """The answer to one request: ``method`` over every approved file, keyed by the seed."""
    seed = parse_seed(method, seed_text)
    entries, source, approved = approved_list(manifest_path)
    size = 0
    if method == "hmac-sha1":
        mac = hmac.new(seed, digestmod=hashlib.sha1)
        for chunk in _chunks(entries):
            mac.update(chunk)
            size += len(chunk)
        digest = mac.hexdigest()
    else:
        crc = int.from_bytes(seed, "big")
        for chunk in _chunks(entries):
            crc = crc16_kermit_fast(chunk, crc)
            size += len(chunk)
        digest = f"{crc:04x}"
    return Verification(method, seed.hex(), digest, len(entries), size, source, approved)


def rom_signature(seed: int, manifest_path: Path | None = None) -> tuple[int, Verification]:
    """SAS 21: the 16-bit ROM signature for the host's seed (0..65535)."""
    result = verify("sas-crc16", f"{seed:04x}", manifest_path)
    return int(result.digest, 16), result


def request(
    method: str, seed_text: str, by: str, via: str, manifest_path: Path | None = None
) -> tuple[SoftwareVerified, dict[str, object]]:
    """One request from ``by`` through ``via`` (console, web, sas): the ``software_verified``
    event to journal and the answer for the asker. A seed that is not one raises VerifyError
    (nothing journaled: the asker is told); an approved file that cannot be read is journaled
    as the ``problem``, with no digest."""
    parse_seed(method, seed_text)
    asked = SoftwareVerified.parse(
        {"by": by, "via": via, "method": method, "seed": seed_text.lower()}
    )
    try:
        result = verify(method, seed_text, manifest_path)
    except VerifyError as exc:
        return dataclasses.replace(asked, problem=str(exc)[:500]), {"ok": False, "error": str(exc)}
    answered = dataclasses.replace(
        asked,
        seed=result.seed,
        digest=result.digest,
        files=result.files,
        size=result.size,
        manifest=result.manifest,
        approved=result.approved,
    )
    return answered, {"ok": True, **result.to_json()}
