"""The tables' link keys (docs/link.md "Keys and the threat model"): ``tablectl link keys new``
provisions a table's key (its key file and the centre's keyring), a second ``new`` rotates it
(both accepted until ``retire``), a key file others can read is refused, and a MAC made with one
table's key is never another table's (NY 5321.18(b): the link identifies each table).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.cli import main
from controller.link.keys import Keyring, LinkKeyError, load_table_key, read_key_lines
from controller.link.messages import hit_subject

DIGEST = "ab" * 32


def test_keys_are_provisioned_rotated_and_retired_with_tablectl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ring_dir = tmp_path / "link-keys"
    first, second = tmp_path / "T1.key", tmp_path / "T1.next.key"
    assert main(["link", "keys", "new", "--keys", str(ring_dir), "--table", "T1",
                 "--out", str(first)]) == 0  # fmt: skip
    assert oct(first.stat().st_mode & 0o777) == "0o600"
    assert oct((ring_dir / "T1.keys").stat().st_mode & 0o777) == "0o600"
    old = load_table_key(first, "T1")
    ring = Keyring(ring_dir)
    assert ring.check_entry("T1", 7, DIGEST, old.entry_header(7, DIGEST)) is None
    # a rotation: the new key is added, the old one still accepted (entries in flight)
    assert main(["link", "keys", "new", "--keys", str(ring_dir), "--table", "T1",
                 "--out", str(second)]) == 0  # fmt: skip
    new = load_table_key(second, "T1")
    assert new.id != old.id
    ring = Keyring(ring_dir)
    assert ring.check_entry("T1", 8, DIGEST, new.entry_header(8, DIGEST)) is None
    assert ring.check_entry("T1", 7, DIGEST, old.entry_header(7, DIGEST)) is None
    capsys.readouterr()
    assert main(["link", "keys", "list", "--keys", str(ring_dir)]) == 0
    listed = capsys.readouterr().out
    assert f"T1: {old.id} {new.id}" in listed and old.secret.hex() not in listed
    # once the table ships under the new key, the old one is retired and refused
    assert main(["link", "keys", "retire", "--keys", str(ring_dir), "--table", "T1",
                 "--key-id", old.id]) == 0  # fmt: skip
    ring = Keyring(ring_dir)
    why = ring.check_entry("T1", 9, DIGEST, old.entry_header(9, DIGEST))
    assert why is not None and "not a key of table T1" in why
    assert main(["link", "keys", "retire", "--keys", str(ring_dir), "--table", "T1",
                 "--key-id", new.id]) == 2  # never its last key  # fmt: skip
    assert "only key" in capsys.readouterr().err
    # a key file is never overwritten
    assert main(["link", "keys", "new", "--keys", str(ring_dir), "--table", "T1",
                 "--out", str(second)]) == 2  # fmt: skip


def test_one_tables_key_makes_nothing_of_another_table(tmp_path: Path) -> None:
    """T1's key: its MAC of an entry or a request never passes as T2's, nor an entry's MAC as
    a request's; an altered hash or seq fails."""
    ring_dir = tmp_path / "k"
    for t in ("T1", "T2"):
        main(["link", "keys", "new", "--keys", str(ring_dir), "--table", t,
              "--out", str(tmp_path / f"{t}.key")])  # fmt: skip
    t1 = load_table_key(tmp_path / "T1.key", "T1")
    ring = Keyring(ring_dir)
    header = t1.entry_header(5, DIGEST)
    assert ring.check_entry("T1", 5, DIGEST, header) is None
    assert ring.check_entry("T2", 5, DIGEST, header) is not None
    assert ring.check_entry("T1", 6, DIGEST, header) is not None
    assert ring.check_entry("T1", 5, "cd" * 32, header) is not None
    assert ring.check_entry("T1", 5, DIGEST, None) == "no MAC (not made with the table's link key)"
    body = t1.sign(hit_subject("P"), {"table": "T1", "round": 3, "line": "royal-flush"})
    assert ring.check_request("T1", hit_subject("P"), body) is None
    assert ring.check_request("T2", hit_subject("P"), {**body, "table": "T2"}) is not None
    assert ring.check_request("T1", hit_subject("P"), {**body, "round": 4}) is not None
    assert ring.check_request("T1", hit_subject("P"), {**body, "mac": header}) is not None


def test_a_key_file_others_can_read_is_refused(tmp_path: Path) -> None:
    main(["link", "keys", "new", "--keys", str(tmp_path / "k"), "--table", "T1",
          "--out", str(tmp_path / "T1.key")])  # fmt: skip
    os.chmod(tmp_path / "T1.key", 0o644)
    with pytest.raises(LinkKeyError, match="mode 0644: a link key must be readable by its owner"):
        load_table_key(tmp_path / "T1.key", "T1")
    os.chmod(tmp_path / "T1.key", 0o600)
    (tmp_path / "T1.key").write_text("0000000000000000 " + "00" * 32 + "\n")
    with pytest.raises(LinkKeyError, match="the key id does not match the key"):
        read_key_lines(tmp_path / "T1.key")
    with pytest.raises(LinkKeyError, match="no such keyring directory"):
        Keyring(tmp_path / "missing")
