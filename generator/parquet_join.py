"""One Parquet file made of the column chunks of others, their bytes copied rather than decoded and encoded again.

The grading stage keeps each run's grades as small Parquet files
(:mod:`dualboard.grading.run_cache`) and publishes one file per table holding
every run (:mod:`dualboard.scored_files`). Reading every run back and writing
it again cost most of a grade after one run was added; but a Parquet column
chunk (its pages, headers included) holds no position in the file, only the
footer does. So :class:`JoinedParquet` writes the magic bytes, then, row group
after row group, the chunks of the columns it is asked for, copied from the
files that hold them, and at the end the footer of an empty file of the target
schema (as ``pyarrow.parquet.ParquetWriter`` writes it: schema, key-value
metadata, creator) with these row groups in it, their offsets moved to where
the chunks now lie. The result is the file ParquetWriter writes from the same
rows when each source row group came from one ``write_table`` call with the
same options (tests/test_parquet_join.py checks the bytes).

Only flat schemas, and chunks without page indexes, bloom filters or
encryption (pyarrow's defaults), are joined; anything else is refused.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import BinaryIO

from dualboard.thrift_compact import I64, LIST, STRUCT, Items, Struct, ThriftError, decode, encode

MAGIC = b"PAR1"
_TAIL = 8
"""The footer's length (4 bytes, little-endian) and the magic end every Parquet file."""

# Field ids of parquet.thrift (the Parquet format's definition) that a join reads or rewrites.
_FILE_SCHEMA, _FILE_ROWS, _FILE_ROW_GROUPS = 2, 3, 4
_ELEMENT_NAME, _ELEMENT_CHILDREN = 4, 5
_GROUP_COLUMNS, _GROUP_BYTES, _GROUP_ROWS, _GROUP_OFFSET, _GROUP_COMPRESSED, _GROUP_ORDINAL = 1, 2, 3, 5, 6, 7
_CHUNK_OFFSET, _CHUNK_META = 2, 3
_CHUNK_UNCOPIED = {4: "an offset index", 6: "a column index", 8: "encryption", 9: "encryption"}
_META_PATH, _META_UNCOMPRESSED, _META_COMPRESSED = 3, 6, 7
_META_DATA_PAGE, _META_DICTIONARY_PAGE = 9, 11
_META_OFFSETS = (_META_DATA_PAGE, 10, _META_DICTIONARY_PAGE)
"""The offsets of a chunk's data page, index page and dictionary page."""
_META_UNCOPIED = {14: "a bloom filter", 15: "a bloom filter"}


class ParquetJoinError(ValueError):
    """A source file that cannot be joined: unreadable, of another column type, or with parts a join cannot move."""


class ParquetSource:
    """A Parquet file open for a join: its row groups, and the schema element of each column by name."""

    def __init__(self, path: Path, handle: BinaryIO):
        self.path, self.handle = path, handle
        footer, self.end = read_footer(handle, path)
        self.row_groups: list[Struct] = list(footer.get(_FILE_ROW_GROUPS, Items(STRUCT, [])).values)
        self.elements = _leaves(footer, path)

    def chunk(self, group: int, column: str) -> Struct | None:
        """The column chunk of ``column`` in row group ``group``, or None when this file lacks the column."""
        if column not in self.elements:
            return None
        for chunk in self.row_groups[group].get(_GROUP_COLUMNS).values:
            if chunk.get(_CHUNK_META).get(_META_PATH).values == [column.encode()]:
                return chunk
        raise ParquetJoinError(f"{self.path}: row group {group} has no chunk of its column {column!r}")


@contextmanager
def open_sources(paths: Iterable[Path]) -> Iterator[dict[Path, ParquetSource]]:
    """Each file of ``paths`` open and its footer read (once, however many joins take columns from it)."""
    with ExitStack() as stack:
        yield {Path(path): ParquetSource(Path(path), stack.enter_context(open(path, "rb"))) for path in paths}


class JoinedParquet:
    """A Parquet file being written at ``path`` from the row groups of others (:meth:`add`), complete at
    :meth:`close`. ``empty`` is a file of the target schema with no rows, as pyarrow's writer writes it: its
    footer becomes the joined file's, and it names the columns and their types that every source must match."""

    def __init__(self, path: Path, empty: bytes):
        self.path = Path(path)
        self._footer = decode(_footer_bytes(empty, self.path))
        self._columns = _leaves(self._footer, self.path)
        self._groups: list[Struct] = []
        self._rows = 0
        self._out = open(self.path, "wb", buffering=0)  # closed by close(); unbuffered: chunks
        # are copied in by the kernel, past any buffer
        self._out.write(MAGIC)

    def __enter__(self) -> JoinedParquet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(complete=exc[0] is None)

    def add(self, sources: Sequence[ParquetSource]) -> None:
        """Append the row groups of ``sources`` (:func:`open_sources`), read side by side: row group k of the
        joined file takes each column from the first of ``sources`` that has it, in its own row group k."""
        counts = {len(source.row_groups) for source in sources}
        if len(counts) > 1:
            raise ParquetJoinError(f"{', '.join(str(s.path) for s in sources)}: hold different numbers of row groups")
        for group in range(counts.pop() if counts else 0):
            self._add_group(sources, group)

    def _add_group(self, sources: Sequence[ParquetSource], group: int) -> None:
        chunks, rows = [], set()
        for column, element in self._columns.items():
            source, chunk = next(((s, c) for s in sources if (c := s.chunk(group, column)) is not None), (None, None))
            if source is None or chunk is None:
                raise ParquetJoinError(f"{self.path}: no source file has the column {column!r}")
            if encode(source.elements[column]) != encode(element):
                raise ParquetJoinError(f"{source.path}: the column {column!r} is not of the type {self.path} needs")
            chunks.append(self._copy(source, chunk))
            rows.add(source.row_groups[group].get(_GROUP_ROWS))
        if len(rows) > 1:
            raise ParquetJoinError(f"{self.path}: row group {group} of the sources has {sorted(rows)} rows")
        metas = [chunk.get(_CHUNK_META) for chunk in chunks]
        joined = sources[0].row_groups[group].copy()
        joined.set(_GROUP_COLUMNS, Items(STRUCT, chunks))
        joined.set(_GROUP_BYTES, sum(meta.get(_META_UNCOMPRESSED) for meta in metas))
        joined.set(_GROUP_OFFSET, _start(metas[0]) if metas else self._out.tell())
        joined.set(_GROUP_COMPRESSED, sum(meta.get(_META_COMPRESSED) for meta in metas))
        if _GROUP_ORDINAL in joined.fields:
            joined.set(_GROUP_ORDINAL, len(self._groups))
        self._groups.append(joined)
        self._rows += rows.pop() if rows else 0

    def _copy(self, source: ParquetSource, chunk: Struct) -> Struct:
        """Copy ``chunk``'s bytes to the end of the joined file; return its metadata with the offsets moved."""
        meta = chunk.get(_CHUNK_META)
        refused = [what for fid, what in _CHUNK_UNCOPIED.items() if fid in chunk.fields]
        refused += [what for fid, what in _META_UNCOPIED.items() if fid in meta.fields]
        if refused:
            raise ParquetJoinError(f"{source.path}: a column chunk has {refused[0]}, which a join does not copy")
        start, length = _start(meta), meta.get(_META_COMPRESSED)
        if length < 0 or (length and start < len(MAGIC)) or start + length > source.end:
            raise ParquetJoinError(f"{source.path}: a column chunk lies outside the file's data")
        shift = self._out.tell() - start
        _copy_range(source.handle, self._out, start, length)
        moved, moved_meta = chunk.copy(), meta.copy()
        for where, fid in [(moved, _CHUNK_OFFSET)] + [(moved_meta, f) for f in _META_OFFSETS]:
            if where.get(fid, 0) > 0:  # 0 is no offset: no such page (pyarrow leaves the chunk's offset 0)
                where.set(fid, where.get(fid) + shift)
        moved.set(_CHUNK_META, moved_meta)
        return moved

    def close(self, *, complete: bool = True) -> None:
        """Write the footer (when ``complete``) and close the file."""
        if self._out.closed:
            return
        try:
            if complete:
                footer = self._footer.copy()
                footer.set(_FILE_ROWS, self._rows, I64)
                footer.set(_FILE_ROW_GROUPS, Items(STRUCT, self._groups), LIST)
                data = encode(footer)
                self._out.write(data + struct.pack("<I", len(data)) + MAGIC)
        finally:
            self._out.close()


def read_footer(handle: BinaryIO, path: Path) -> tuple[Struct, int]:
    """The decoded footer (FileMetaData) of the Parquet file open as ``handle``, and where it starts."""
    size = os.fstat(handle.fileno()).st_size
    if size < len(MAGIC) + _TAIL:
        raise ParquetJoinError(f"{path}: too short to be a Parquet file")
    handle.seek(size - _TAIL)
    length, magic = struct.unpack("<I4s", handle.read(_TAIL))
    if magic != MAGIC or length > size - len(MAGIC) - _TAIL:
        raise ParquetJoinError(f"{path}: not a Parquet file (no footer at its end)")
    handle.seek(size - _TAIL - length)
    try:
        return decode(handle.read(length)), size - _TAIL - length
    except ThriftError as exc:
        raise ParquetJoinError(f"{path}: unreadable Parquet footer ({exc})") from exc


def _footer_bytes(data: bytes, path: Path) -> bytes:
    """The footer's bytes of the whole Parquet file ``data``."""
    if data[:4] != MAGIC or data[-4:] != MAGIC:
        raise ParquetJoinError(f"{path}: the empty file given is not a Parquet file")
    (length,) = struct.unpack("<I", data[-_TAIL:-4])
    return data[-_TAIL - length : -_TAIL]


def _leaves(footer: Struct, path: Path) -> dict[str, Struct]:
    """The schema element of each column of a flat schema, by name (a nested schema is refused)."""
    root, *leaves = footer.get(_FILE_SCHEMA).values
    if root.get(_ELEMENT_CHILDREN) != len(leaves) or any(_ELEMENT_CHILDREN in leaf.fields for leaf in leaves):
        raise ParquetJoinError(f"{path}: a nested schema, which a join does not handle")
    return {leaf.get(_ELEMENT_NAME).decode(): leaf for leaf in leaves}


def _start(meta: Struct) -> int:
    """Where a column chunk starts: its dictionary page when it has one, else its first data page."""
    dictionary = meta.get(_META_DICTIONARY_PAGE, 0)
    return dictionary if dictionary > 0 else meta.get(_META_DATA_PAGE, 0)


def _copy_range(source: BinaryIO, target: BinaryIO, start: int, length: int) -> None:
    """Append ``length`` bytes of ``source`` from ``start`` to ``target`` (in the kernel where it can)."""
    done = 0
    try:
        while done < length:
            copied = os.copy_file_range(source.fileno(), target.fileno(), length - done, start + done)
            if copied == 0:
                raise ParquetJoinError(f"{source.name}: ends inside a column chunk")
            done += copied
    except (AttributeError, OSError):  # no copy_file_range here, or not between these file systems
        source.seek(start + done)
        target.seek(0, os.SEEK_END)
        while done < length:
            block = source.read(min(length - done, 1 << 20))
            if not block:
                raise ParquetJoinError(f"{source.name}: ends inside a column chunk") from None
            target.write(block)
            done += len(block)
    target.seek(0, os.SEEK_END)
