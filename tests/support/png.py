"""Decode a PNG with the standard library only (zlib and the PNG filters), for screenshot checks.

Handles what browsers write: 8-bit greyscale, grey+alpha, RGB and RGBA, not
interlaced. Pixels come back as RGB tuples (alpha is dropped: a screenshot is
opaque).
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections import Counter
from dataclasses import dataclass

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # colour type -> samples per pixel


@dataclass(frozen=True)
class Image:
    """A decoded image: ``rows`` holds ``height`` rows of ``width * channels`` bytes."""

    width: int
    height: int
    channels: int
    rows: list[bytes]

    def pixels(self) -> list[tuple[int, int, int]]:
        """Every pixel as (r, g, b), row by row."""
        out: list[tuple[int, int, int]] = []
        c = self.channels
        for row in self.rows:
            if c >= 3:
                out.extend(zip(row[0::c], row[1::c], row[2::c], strict=True))
            else:
                out.extend((v, v, v) for v in row[0::c])
        return out

    def colours(self) -> Counter[tuple[int, int, int]]:
        """How many pixels have each colour."""
        return Counter(self.pixels())


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter(kind: int, line: bytearray, prev: bytes, bpp: int) -> bytes:
    """Undo one scanline's filter (PNG spec section 9), in place."""
    n = len(line)
    if kind == 0:
        return bytes(line)
    if kind == 2:  # Up: the common case for flat screenshots, done without a Python loop per byte
        return bytes((x + y) & 0xFF for x, y in zip(line, prev, strict=True))
    for i in range(n):
        left = line[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:
            up_left = prev[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + _paeth(left, prev[i], up_left)) & 0xFF
        else:
            raise ValueError(f"unknown PNG filter type {kind}")
    return bytes(line)


def decode(data: bytes) -> Image:
    """Decode PNG bytes; raises ``ValueError`` for anything this helper does not handle."""
    if not data.startswith(SIGNATURE):
        raise ValueError("not a PNG file")
    pos, idat = len(SIGNATURE), bytearray()
    width = height = depth = colour = interlace = -1
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length  # length, type, body, CRC
        if kind == b"IHDR":
            width, height, depth, colour, _comp, _filt, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    if depth != 8 or colour not in CHANNELS or interlace != 0:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
    channels = CHANNELS[colour]
    stride = width * channels
    raw = zlib.decompress(bytes(idat))
    if len(raw) != height * (stride + 1):
        raise ValueError(f"PNG data is {len(raw)} bytes, expected {height * (stride + 1)}")
    rows: list[bytes] = []
    prev = bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        prev = _unfilter(raw[start], bytearray(raw[start + 1 : start + 1 + stride]), prev, channels)
        rows.append(prev)
    return Image(width, height, channels, rows)


def blank(width: int, height: int) -> str:
    """A black 8-bit greyscale PNG of that size, base64-encoded (an image block's ``data``)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    pixels = zlib.compress(b"".join(b"\0" + b"\0" * width for _ in range(height)))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    raw = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    return base64.b64encode(raw).decode()
