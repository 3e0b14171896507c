"""Symbolic links and special files are never read: the safe reader refuses them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dualboard.safe_read import UnsafeFileError, read_regular, untrusted_entries


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text("HF_TOKEN=hf_secret")
    return path


def test_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_bytes(b"ok")
    assert read_regular(tmp_path / "a" / "f.txt", root=tmp_path) == b"ok"


@pytest.mark.parametrize("target", ["/proc/self/environ", "secret"])
def test_linked_file_is_refused(tmp_path: Path, secret: Path, target: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "human_labels.csv").symlink_to(secret if target == "secret" else target)
    with pytest.raises(UnsafeFileError, match="symbolic link"):
        read_regular(root / "human_labels.csv", root=root)
    assert untrusted_entries(root) == [(root / "human_labels.csv", "symbolic link")]


def test_linked_folder_on_the_way_is_refused(tmp_path: Path, secret: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "bench").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(UnsafeFileError, match="bench: is a symbolic link"):
        read_regular(root / "bench" / "secret.txt", root=root)


def test_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(UnsafeFileError, match="special file"):
        read_regular(tmp_path / "pipe", root=tmp_path)
    assert untrusted_entries(tmp_path) == [(tmp_path / "pipe", "special file")]


def test_limit_and_outside_root(tmp_path: Path, secret: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "big").write_bytes(b"x" * 11)
    with pytest.raises(UnsafeFileError, match="10-byte limit"):
        read_regular(root / "big", root=root, limit=10)
    with pytest.raises(UnsafeFileError, match="outside"):
        read_regular(secret, root=root)
