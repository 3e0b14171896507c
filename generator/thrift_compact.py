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
    :class:`Struct`, or a :class:`Items` (list or set).

    ``raw`` is the struct's bytes as decoded: :func:`encode` writes them back as they are while the struct is
    unchanged, so a footer whose row groups move re-encodes only what moved (statistics are copied as bytes).
    :meth:`set` forgets them; the structs holding this one keep theirs, so to change a struct inside another,
    set a :meth:`copy` of it into a copy of its holder.
    """

    fields: dict[int, tuple[int, Any]] = field(default_factory=dict)
    raw: bytes | None = None

    def get(self, fid: int, default: Any = None) -> Any:
        """The value of field ``fid``, or ``default`` when the struct does not have it."""
        return self.fields[fid][1] if fid in self.fields else default

    def set(self, fid: int, value: Any, wire: int | None = None) -> None:
        """Set field ``fid`` to ``value``, keeping its wire type (``wire`` for a field not there yet)."""
        kind = self.fields[fid][0] if fid in self.fields else wire
        if kind is None:
            raise KeyError(f"field {fid} is new: give its wire type")
        self.fields[fid] = (kind, value)
        self.raw = None

    def copy(self) -> Struct:
        """A copy whose fields can be set without changing this struct (values are shared, not copied:
        set a copied child struct to change one)."""
        return Struct(dict(self.fields), self.raw)


@dataclass
class Items:
    """A list or set: the wire type of its elements and the elements."""

    kind: int
    values: list[Any]


def decode(data: bytes) -> Struct:
    """The struct encoded at the start of ``data`` (bytes after its stop byte are refused)."""
    view = bytes(data)
    try:
        found, end = _struct(view, 0)
    except IndexError:
        raise ThriftError("the bytes end inside a struct") from None
    if end != len(view):
        raise ThriftError(f"{len(view) - end} byte(s) after the struct's end")
    return found


def encode(value: Struct) -> bytes:
    """The compact-protocol bytes of ``value``."""
    if value.raw is not None:
        return value.raw
    out = bytearray()
    _write_struct(out, value)
    return bytes(out)


def _varint_at(data: bytes, pos: int) -> tuple[int, int]:
    """The unsigned varint at ``pos`` and the position after it."""
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise ThriftError("a varint longer than 10 bytes")


def _zigzag_at(data: bytes, pos: int) -> tuple[int, int]:
    value, pos = _varint_at(data, pos)
    return (value >> 1) ^ -(value & 1), pos


def _struct(data: bytes, pos: int) -> tuple[Struct, int]:
    """The struct at ``pos`` (its raw bytes kept) and the position after its stop byte."""
    start, fields, last = pos, {}, 0
    while True:
        header = data[pos]
        pos += 1
        if header == 0:
            return Struct(fields, data[start:pos]), pos
        kind, delta = header & 0x0F, header >> 4
        if delta:
            last += delta
        else:
            last, pos = _zigzag_at(data, pos)
        if kind == TRUE or kind == FALSE:
            fields[last] = (kind, kind == TRUE)
        else:
            value, pos = _value(data, pos, kind)
            fields[last] = (kind, value)


def _value(data: bytes, pos: int, kind: int) -> tuple[Any, int]:
    """The value of wire type ``kind`` at ``pos`` and the position after it."""
    if kind == I32 or kind == I64 or kind == I16:
        return _zigzag_at(data, pos)
    if kind == BINARY:
        size, pos = _varint_at(data, pos)
        if pos + size > len(data):
            raise ThriftError("a binary field runs past the end")
        return data[pos : pos + size], pos + size
    if kind == STRUCT:
        return _struct(data, pos)
    if kind == LIST or kind == SET:
        header = data[pos]
        pos += 1
        size, element = header >> 4, header & 0x0F
        if size == 15:
            size, pos = _varint_at(data, pos)
        values = []
        for _ in range(size):
            if element == TRUE or element == FALSE:  # in a list a bool is a byte of its own
                values.append(data[pos] == TRUE)
                pos += 1
            else:
                value, pos = _value(data, pos, element)
                values.append(value)
        return Items(element, values), pos
    if kind == BYTE or kind == DOUBLE:
        size, form = (1, "b") if kind == BYTE else (8, "<d")
        if pos + size > len(data):
            raise ThriftError("a value runs past the end")
        return struct.unpack_from(form, data, pos)[0], pos + size
    raise ThriftError(f"wire type {kind} is not one a Parquet footer holds")


def _varint(out: bytearray, value: int) -> None:
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _zigzag(out: bytearray, value: int) -> None:
    _varint(out, (value << 1) ^ (value >> 63))


def _write_struct(out: bytearray, value: Struct) -> None:
    if value.raw is not None:
        out += value.raw
        return
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
