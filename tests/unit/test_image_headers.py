"""An image's width and height are read from its own header, as each format's specification lays it out.

What a user sees: an image they attach is counted at what the provider bills for its real size, never at
the 1,600-token cap for an image whose size is unknown, whichever header format, frame type or base64
spelling it comes in; and a header that is damaged or cut short is reported as unreadable (the cap)
rather than misread. Every file here is built byte by byte from the format's specification:

- PNG: signature (8 bytes), then the IHDR chunk: length, type, width and height as big-endian uint32.
- GIF: ``GIF87a``/``GIF89a``, then the logical screen: width and height as little-endian uint16.
- WebP: ``RIFF`` size ``WEBP``, then a ``VP8 `` (lossy: frame tag, start code 9d 01 2a, 14-bit sizes with
  2 scale bits), ``VP8L`` (lossless: signature 0x2f, 14 bits width-1, 14 bits height-1) or ``VP8X``
  (extended: flags, 24-bit canvas width-1 and height-1) chunk.
- JPEG: SOI, then marker segments (FF, marker, big-endian length counting itself); the frame header
  (SOF0 to SOF15 but DHT C4, JPG C8 and DAC CC) holds precision, height and width; standalone markers
  (TEM 01, RST0 to RST7 D0 to D7, SOI D8) have no length.
"""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

import pytest

from sleepcompact.domain.attachments import IMAGE_TOKEN_CAP, attachment_tokens, image_size


def words(text: str) -> int:
    return len(text.split())


def image_block(data: bytes | str, media_type: str) -> dict[str, Any]:
    encoded = data if isinstance(data, str) else base64.b64encode(data).decode("ascii")
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": encoded}}


def tokens(data: bytes | str, media_type: str) -> int:
    return attachment_tokens(image_block(data, media_type), words)


# -- PNG ---------------------------------------------------------------------------------------------


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_file(width: int, height: int, software: str = "GIMP") -> bytes:
    """A complete PNG: IHDR, a tEXt ``Software`` chunk (as editors write), red pixels, IEND."""
    ihdr = _png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    text = _png_chunk(b"tEXt", b"Software\x00" + software.encode("latin-1"))
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    idat = _png_chunk(b"IDAT", zlib.compress(rows))
    return b"\x89PNG\r\n\x1a\n" + ihdr + text + idat + _png_chunk(b"IEND", b"")


def test_the_first_24_bytes_of_a_png_are_enough_to_read_its_size() -> None:
    # Signature (8), IHDR length and type (8), width and height (8): the size ends at byte 24.
    head = png_file(640, 480)[:24]
    assert image_size(head) == (640, 480)
    assert image_size(head[:23]) is None


def test_a_png_size_is_read_as_the_unsigned_numbers_its_header_stores() -> None:
    # The specification caps each side at 2**31 - 1; a header declaring more is still read as declared
    # (and then costs what any huge image costs once scaled down), not as a negative size.
    assert image_size(png_file(1, 1)[:16] + struct.pack(">II", 2**31 - 1, 2**31 - 1)) == (
        2**31 - 1,
        2**31 - 1,
    )
    assert image_size(png_file(1, 1)[:16] + struct.pack(">II", 2**31, 3)) == (2**31, 3)


# -- GIF ---------------------------------------------------------------------------------------------


def gif_file(width: int, height: int, version: bytes = b"89a") -> bytes:
    """A complete one-colour GIF: header, logical screen, 2-entry colour table, one image, trailer."""
    screen = struct.pack("<HHBBB", width, height, 0x80, 0, 0) + b"\x00\x00\x00\xff\xff\xff"
    image = b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0) + b"\x02\x02\x44\x01\x00"
    return b"GIF" + version + screen + image + b"\x3b"


def test_an_old_gif87a_file_is_read_like_a_gif89a() -> None:
    assert image_size(gif_file(320, 200, b"87a")) == (320, 200)
    assert tokens(gif_file(320, 200, b"87a"), "image/gif") == 86  # 64,000 / 750 = 85.3
    assert image_size(gif_file(320, 200, b"89a")) == (320, 200)


def test_the_first_ten_bytes_of_a_gif_are_enough_to_read_its_size() -> None:
    head = gif_file(512, 384)[:10]
    assert image_size(head) == (512, 384)
    assert image_size(head[:9]) is None


def test_a_gif_side_over_32767_pixels_is_read_as_the_unsigned_16_bits_it_is() -> None:
    assert image_size(gif_file(65535, 40000)) == (65535, 40000)
    assert image_size(gif_file(32768, 1)) == (32768, 1)


def test_only_the_two_gif_versions_in_upper_and_lower_case_as_specified_are_read() -> None:
    assert image_size(b"GIF87A" + gif_file(10, 10)[6:]) is None
    assert image_size(b"gif87a" + gif_file(10, 10)[6:]) is None


# -- WebP ---------------------------------------------------------------------------------------------


def _riff_chunk(fourcc: bytes, payload: bytes) -> bytes:
    return fourcc + struct.pack("<I", len(payload)) + payload + b"\x00" * (len(payload) % 2)


def webp_file(*chunks: bytes) -> bytes:
    body = b"WEBP" + b"".join(chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def vp8_key_frame(width: int, height: int, *, scale: int = 0) -> bytes:
    """A lossy key frame: 3-byte frame tag (key frame, version 0, shown), start code, sizes, partition."""
    partition = bytes(range(1, 41))
    tag = (0 | 0 << 1 | 1 << 4 | len(partition) << 5).to_bytes(3, "little")
    sizes = struct.pack("<HH", width | scale << 14, height | scale << 14)
    return tag + b"\x9d\x01\x2a" + sizes + partition


def vp8l_bitstream(width: int, height: int, *, alpha: bool = True) -> bytes:
    bits = (width - 1) | (height - 1) << 14 | int(alpha) << 28  # version 0 in the top three bits
    return b"\x2f" + bits.to_bytes(4, "little") + bytes(range(7, 47))


def vp8x_header(width: int, height: int, *, flags: int = 0x10) -> bytes:
    """The extended header: flags (0x10 = has alpha), 3 reserved bytes, canvas width-1 and height-1."""
    canvas = (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return _riff_chunk(b"VP8X", bytes([flags, 0, 0, 0]) + canvas)


def test_a_lossy_webp_is_read_from_its_key_frame() -> None:
    data = webp_file(_riff_chunk(b"VP8 ", vp8_key_frame(1024, 768)))
    assert image_size(data) == (1024, 768)
    assert tokens(data, "image/webp") == 1049  # 786,432 / 750 = 1048.6


def test_a_lossy_webp_upscaling_bits_are_not_part_of_its_size() -> None:
    # The top two bits of each 16-bit size ask the decoder to upscale; the frame is still 800 x 600.
    data = webp_file(_riff_chunk(b"VP8 ", vp8_key_frame(800, 600, scale=3)))
    assert image_size(data) == (800, 600)


def test_a_lossless_webp_with_its_bitstream_following_is_read() -> None:
    data = webp_file(_riff_chunk(b"VP8L", vp8l_bitstream(16384, 3)))
    assert image_size(data) == (16384, 3)
    assert image_size(webp_file(_riff_chunk(b"VP8L", vp8l_bitstream(1, 1, alpha=False)))) == (1, 1)


def test_an_extended_webp_with_alpha_is_read_from_its_canvas_not_the_chunks_after_it() -> None:
    # VP8X, then ALPH and VP8 (what encoders write for a lossy image with transparency): byte 30 onwards
    # is the next chunk's name, not part of the canvas height.
    data = webp_file(
        vp8x_header(20000, 300),
        _riff_chunk(b"ALPH", b"\x00" + bytes(16)),
        _riff_chunk(b"VP8 ", vp8_key_frame(16383, 300)),
    )
    assert image_size(data) == (20000, 300)


def test_a_webp_cut_off_inside_its_canvas_size_is_unreadable() -> None:
    data = webp_file(vp8x_header(640, 480))
    assert image_size(data[:30]) == (640, 480)
    assert image_size(data[:29]) is None


def test_a_vp8_chunk_without_the_key_frame_start_code_is_unreadable_not_misread() -> None:
    # A damaged frame: its first byte happens to be the lossless signature 0x2f, and its start code is
    # gone, so neither the lossy nor the lossless layout applies.
    frame = b"\x2f" + vp8_key_frame(640, 480)[1:3] + b"\x00\x00\x00" + vp8_key_frame(640, 480)[6:]
    assert image_size(webp_file(_riff_chunk(b"VP8 ", frame))) is None
    assert tokens(webp_file(_riff_chunk(b"VP8 ", frame)), "image/webp") == IMAGE_TOKEN_CAP


# -- JPEG ---------------------------------------------------------------------------------------------

SOI, EOI = b"\xff\xd8", b"\xff\xd9"


def segment(marker: int, payload: bytes) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


JFIF = segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
DQT = segment(0xDB, b"\x00" + bytes(range(1, 65)))
DHT = segment(0xC4, b"\x00" + b"\x01" + bytes(15) + b"\x00")
SOS = segment(0xDA, b"\x03\x01\x00\x02\x11\x03\x11\x00\x3f\x00")


def frame_header(marker: int, width: int, height: int) -> bytes:
    """SOFn: precision 8, height, width, three components (Y 2x2, Cb and Cr 1x1)."""
    return segment(
        marker, struct.pack(">BHHB", 8, height, width, 3) + b"\x01\x22\x00\x02\x11\x01\x03\x11\x01"
    )


def jpeg_file(
    width: int, height: int, *, sof: int = 0xC0, before_frame: bytes = b"", scan: int = 64
) -> bytes:
    """SOI, JFIF, whatever comes before the frame, DQT, the frame header, DHT, a scan, EOI."""
    entropy = bytes(range(1, 65)) * (scan // 64 + 1)
    return (
        SOI + JFIF + before_frame + DQT + frame_header(sof, width, height) + DHT + SOS + entropy[:scan] + EOI
    )


ALL_FRAME_TYPES = {
    0xC0: "baseline",
    0xC1: "extended sequential",
    0xC2: "progressive",
    0xC3: "lossless",
    0xC5: "differential sequential",
    0xC6: "differential progressive",
    0xC7: "differential lossless",
    0xC9: "extended sequential, arithmetic",
    0xCA: "progressive, arithmetic",
    0xCB: "lossless, arithmetic",
    0xCD: "differential sequential, arithmetic",
    0xCE: "differential progressive, arithmetic",
    0xCF: "differential lossless, arithmetic",
}


@pytest.mark.parametrize("sof", list(ALL_FRAME_TYPES), ids=list(ALL_FRAME_TYPES.values()))
def test_a_jpeg_size_is_read_from_every_kind_of_frame_header(sof: int) -> None:
    data = jpeg_file(1200, 900, sof=sof)
    assert image_size(data) == (1200, 900)
    assert tokens(data, "image/jpeg") == 1440  # 1,080,000 / 750


@pytest.mark.parametrize(
    "before",
    [
        segment(0xC4, b"\x10" + b"\x01" + bytes(15) + b"\x05"),  # DHT: a Huffman table
        segment(0xCC, b"\x00\x10"),  # DAC: arithmetic conditioning
        segment(0xC8, b"\x01\x02\x03"),  # JPG: reserved
    ],
    ids=["DHT", "DAC", "JPG"],
)
def test_tables_in_the_frame_marker_range_before_the_frame_are_stepped_over(before: bytes) -> None:
    assert image_size(jpeg_file(640, 480, before_frame=before)) == (640, 480)


@pytest.mark.parametrize(
    "standalone",
    [b"\xff\xd8", b"\xff\x01", b"\xff\xd0", b"\xff\xd3", b"\xff\xd7"],
    ids=["SOI", "TEM", "RST0", "RST3", "RST7"],
)
def test_standalone_markers_before_the_frame_have_no_length_and_are_stepped_over(standalone: bytes) -> None:
    assert image_size(jpeg_file(640, 480, before_frame=standalone)) == (640, 480)
    assert image_size(SOI + standalone + frame_header(0xC0, 33, 44) + EOI) == (33, 44)


def test_a_jpeg_side_over_32767_pixels_is_read_as_the_unsigned_16_bits_it_is() -> None:
    assert image_size(jpeg_file(65535, 40000)) == (65535, 40000)


def test_a_jpeg_with_no_frame_header_is_unreadable() -> None:
    # Metadata and an end marker only (a thumbnail stripped of its image): nothing to read, no crash.
    assert image_size(SOI + JFIF + segment(0xE1, b"Exif\x00\x00" + bytes(40)) + EOI) is None
    assert image_size(SOI + JFIF + DQT) is None


# How far into an image its size is looked for: the first 96 KB of the file, taken as whole base64 quads,
# i.e. (98,304 // 3 + 1) * 3 = 98,307 bytes. A frame header is found when the nine bytes from its marker
# to the end of its width lie inside them, so the last offset it may start at is 98,307 - 9.
LAST_FRAME_OFFSET = 98_298


def jpeg_with_frame_at(offset: int) -> bytes:
    """A camera JPEG whose frame header starts at ``offset``: a big EXIF block and an ICC profile first."""
    metadata = offset - len(SOI + JFIF + DQT)
    exif = segment(0xE1, b"Exif\x00\x00" + bytes(60_000 - 10))
    icc = segment(0xE2, b"ICC_PROFILE\x00\x01\x01" + bytes(metadata - len(exif) - 18))
    data = jpeg_file(1024, 768, before_frame=exif + icc, scan=20_000)
    assert data.index(frame_header(0xC0, 1024, 768)) == offset
    return data


def test_a_jpeg_frame_header_at_the_end_of_the_first_96_kb_is_read() -> None:
    assert tokens(jpeg_with_frame_at(LAST_FRAME_OFFSET), "image/jpeg") == 1049  # 786,432 / 750 = 1048.6


def test_a_jpeg_frame_header_past_the_first_96_kb_costs_the_cap() -> None:
    assert tokens(jpeg_with_frame_at(LAST_FRAME_OFFSET + 1), "image/jpeg") == IMAGE_TOKEN_CAP


# -- base64 as senders write it ---------------------------------------------------------------------


def test_base64_wrapped_in_76_column_lines_is_read() -> None:
    wrapped = base64.encodebytes(png_file(64, 48)).decode("ascii")  # MIME: a newline every 76 characters
    assert "\n" in wrapped.rstrip("\n")
    assert tokens(wrapped, "image/png") == 5  # 3,072 / 750 = 4.1


@pytest.mark.parametrize(
    ("software", "missing"),
    [("ShareX", "=="), ("Shutter", "=")],
)
def test_base64_without_its_trailing_padding_is_read(software: str, missing: str) -> None:
    encoded = base64.b64encode(png_file(2, 2, software)).decode("ascii")
    assert encoded.endswith(missing) and not encoded.endswith("=" + missing)
    assert tokens(encoded.rstrip("="), "image/png") == 1


def test_unpadded_base64_wrapped_in_lines_is_read() -> None:
    encoded = base64.b64encode(png_file(320, 240, "ShareX")).decode("ascii").rstrip("=")
    lines = [encoded[i : i + 76] for i in range(0, len(encoded), 76)]
    assert len(encoded) % 4 == 2 and len(lines) == 16
    assert tokens("\n".join(lines), "image/png") == 103  # 76,800 / 750 = 102.4


def test_a_jpeg_cut_right_after_its_frame_headers_width_is_read() -> None:
    head = SOI + JFIF + frame_header(0xC0, 640, 480)
    assert image_size(head[: head.index(frame_header(0xC0, 640, 480)) + 9]) == (640, 480)


@pytest.mark.parametrize("fill", [1, 2, 7])
def test_fill_bytes_before_a_marker_are_stepped_over(fill: int) -> None:
    # ITU T.81 B.1.1.2: any marker may be preceded by any number of 0xFF fill bytes.
    head = SOI + JFIF + b"\xff" * fill + DQT + b"\xff" * fill + frame_header(0xC2, 1200, 900)
    assert image_size(head) == (1200, 900)


def test_a_big_image_wrapped_in_76_column_lines_is_read_from_its_header() -> None:
    # 200 KB of image data after the header: the first 96 KB, once its line breaks are dropped, decode.
    image = png_file(800, 600) + bytes(200_000)
    for wrapped in (
        base64.encodebytes(image).decode("ascii"),
        base64.encodebytes(image).decode().replace("\n", "\r\n"),
    ):
        assert wrapped.count("\n") > 2_000
        assert tokens(wrapped, "image/png") == 640  # 480,000 / 750


def test_a_jpeg_wrapped_in_lines_is_read_past_its_first_line() -> None:
    # The frame header sits after camera metadata, many 76-character lines into the base64.
    wrapped = base64.encodebytes(jpeg_file(1024, 768, before_frame=segment(0xE1, bytes(2_000)))).decode()
    assert wrapped.index("\n") < 100 and wrapped.count("\n") > 20
    assert tokens(wrapped, "image/jpeg") == 1049


def test_base64_pasted_with_a_trailing_full_stop_is_read() -> None:
    assert tokens(base64.b64encode(png_file(64, 48)).decode() + ".", "image/png") == 5
