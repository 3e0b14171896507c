"""Thrift's compact protocol, read and written back without loss: the encoding of a Parquet file's footer.

:mod:`dualboard.parquet_join` moves row groups from one Parquet file into
another, which means rewriting the offsets the footer records; pyarrow reads
and writes footers but lets no offset be changed. This module decodes a
compact-protocol struct into a :class:`Struct` (each field with its id, wire
type and value, unknown fields included) and encodes it again byte for byte
as Thrift's own writers do (field ids ascending, the short header when the id
grows by 1 to 15), so a footer read and written unchanged keeps its bytes.
The Parquet fields it is used on are named where they are used.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(1, 13)
"""The compact protocol's wire types (0 ends a struct)."""
_INTEGERS = (BYTE, I16, I32, I64)


class ThriftError(ValueError):
    """Bytes that are not a compact-protocol struct (a truncated or foreign footer)."""


@dataclass
class Struct:
    """A decoded struct: field id → (wire type, value). A value is an int, float, bytes, bool, a
    :class:`Struct`, or a :class:`Items` (list or set)."""

    fields: dict[int, tuple[int, Any]] = field(default_factory=dict)

    def get(self, fid: int, default: Any = None) -> Any:
        """The value of field ``fid``, or ``default`` when the struct does not have it."""
        return self.fields[fid][1] if fid in self.fields else default

    def set(self, fid: int, value: Any, wire: int | None = None) -> None:
        """Set field ``fid`` to ``value``, keeping its wire type (``wire`` for a field not there yet)."""
        kind = self.fields[fid][0] if fid in self.fields else wire
        if kind is None:
            raise KeyError(f"field {fid} is new: give its wire type")
        self.fields[fid] = (kind, value)

    def copy(self) -> Struct:
        """A deep copy: structs and lists are copied, plain values shared."""
        return Struct({fid: (kind, _copied(value)) for fid, (kind, value) in self.fields.items()})


@dataclass
class Items:
    """A list or set: the wire type of its elements and the elements."""

    kind: int
    values: list[Any]


def _copied(value: Any) -> Any:
    if isinstance(value, Struct):
        return value.copy()
    if isinstance(value, Items):
        return Items(value.kind, [_copied(v) for v in value.values])
    return value


def decode(data: bytes) -> Struct:
    """The struct encoded at the start of ``data`` (bytes after its stop byte are refused)."""
    reader = _Reader(memoryview(data))
    found = reader.struct()
    if reader.pos != len(data):
        raise ThriftError(f"{len(data) - reader.pos} byte(s) after the struct's end")
    return found


def encode(value: Struct) -> bytes:
    """The compact-protocol bytes of ``value``."""
    out = bytearray()
    _write_struct(out, value)
    return bytes(out)


class _Reader:
    def __init__(self, data: memoryview):
        self.data, self.pos = data, 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise ThriftError("the bytes end inside a struct")
        self.pos += 1
        return self.data[self.pos - 1]

    def varint(self) -> int:
        result, shift = 0, 0
        while True:
            byte = self.byte()
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7
            if shift > 70:
                raise ThriftError("a varint longer than 10 bytes")

    def zigzag(self) -> int:
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def take(self, size: int) -> bytes:
        if size < 0 or self.pos + size > len(self.data):
            raise ThriftError("a binary field runs past the end")
        self.pos += size
        return bytes(self.data[self.pos - size : self.pos])

    def struct(self) -> Struct:
        found, last = Struct(), 0
        while (header := self.byte()) != 0:
            kind, delta = header & 0x0F, header >> 4
            last = last + delta if delta else self.zigzag()
            found.fields[last] = (kind, True if kind == TRUE else False if kind == FALSE else self.value(kind))
        return found

    def value(self, kind: int) -> Any:
        if kind in _INTEGERS:
            return self.zigzag() if kind != BYTE else struct.unpack("b", self.take(1))[0]
        if kind == DOUBLE:
            return struct.unpack("<d", self.take(8))[0]
        if kind == BINARY:
            return self.take(self.varint())
        if kind in (LIST, SET):
            header = self.byte()
            size = header >> 4 if header >> 4 != 15 else self.varint()
            element = header & 0x0F
            return Items(element, [self.element(element) for _ in range(size)])
        if kind == STRUCT:
            return self.struct()
        raise ThriftError(f"wire type {kind} is not one a Parquet footer holds")

    def element(self, kind: int) -> Any:
        if kind in (TRUE, FALSE):  # in a list a bool is a byte of its own
            return self.byte() == TRUE
        return self.value(kind)


def _varint(out: bytearray, value: int) -> None:
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _zigzag(out: bytearray, value: int) -> None:
    _varint(out, (value << 1) ^ (value >> 63))


def _write_struct(out: bytearray, value: Struct) -> None:
    last = 0
    for fid in sorted(value.fields):
        kind, item = value.fields[fid]
        if kind in (TRUE, FALSE):
            kind = TRUE if item else FALSE
        if 0 < fid - last <= 15:
            out.append((fid - last) << 4 | kind)
        else:
            out.append(kind)
            _zigzag(out, fid)
        last = fid
        if kind not in (TRUE, FALSE):
            _write_value(out, kind, item)
    out.append(0)


def _write_value(out: bytearray, kind: int, value: Any) -> None:
    if kind == BYTE:
        out += struct.pack("b", value)
    elif kind in _INTEGERS:
        _zigzag(out, value)
    elif kind == DOUBLE:
        out += struct.pack("<d", value)
    elif kind == BINARY:
        _varint(out, len(value))
        out += value
    elif kind in (LIST, SET):
        size = len(value.values)
        out.append((size << 4 | value.kind) if size < 15 else (0xF0 | value.kind))
        if size >= 15:
            _varint(out, size)
        for element in value.values:
            if value.kind in (TRUE, FALSE):
                out.append(TRUE if element else FALSE)
            else:
                _write_value(out, value.kind, element)
    elif kind == STRUCT:
        _write_struct(out, value)
    else:
        raise ThriftError(f"wire type {kind} is not one a Parquet footer holds")
