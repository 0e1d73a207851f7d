"""The two-factor set-up page shows the set-up link as a QR code, drawn on the server as an
inline SVG: a code any authenticator app reads (ISO/IEC 18004, level M)."""

import hashlib
import re
import shutil
import struct
import subprocess
import zlib

import pytest
from django.urls import reverse
from django_otp.plugins.otp_totp.models import TOTPDevice

from apps.accounts.qr import QUIET_ZONE, TooLong, encode
from apps.accounts.views import PENDING_KEY_SESSION_KEY

URL = (
    "otpauth://totp/Diligence%3Atariq?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
    "&algorithm=SHA1&digits=6&issuer=Diligence"
)
MODULE = re.compile(r"M(\d+) (\d+)h1v1h-1z")


def _bits(code) -> str:
    return "".join("1" if dark else "0" for row in code.modules for dark in row)


def _format_bits(code) -> int:
    """The 15 format bits, read from beside the top-left finder."""
    cells = [(8, y) for y in range(6)] + [(8, 7), (8, 8), (7, 8)]
    cells += [(14 - i, 8) for i in range(9, 15)]
    return sum(code.modules[y][x] << i for i, (x, y) in enumerate(cells))


def test_the_set_up_page_shows_the_link_as_a_qr_code(client, tariq):
    client.post(reverse("login"), {"username": "tariq", "password": "pw"})
    page = client.get(reverse("accounts:two_factor"))
    html = page.content.decode()
    pending = TOTPDevice(user=tariq, key=client.session[PENDING_KEY_SESSION_KEY])
    svg = html.split('<svg class="qr"', 1)[1].split("</svg>", 1)[0]
    assert 'role="img"' in svg and 'aria-label="QR code of the setup link' in svg
    assert "<script" not in svg and "style=" not in svg  # nothing the policy refuses

    # The drawn modules are the code of this person's set-up link.
    code = encode(pending.config_url)
    side = code.size + 2 * QUIET_ZONE
    assert f'viewBox="0 0 {side} {side}"' in svg
    drawn = {(int(x) - QUIET_ZONE, int(y) - QUIET_ZONE) for x, y in MODULE.findall(svg)}
    dark = {(x, y) for y, row in enumerate(code.modules) for x, d in enumerate(row) if d}
    assert drawn == dark
    assert "Or enter this key:" in html and page.context["secret"] in html


def test_a_known_link_is_encoded_as_a_reader_decoded_it():
    # Decoded by zbar when this was written: version 7, mask 3.
    code = encode(URL)
    assert (code.version, code.mask, code.size) == (7, 3, 45)
    expected = "40dad5923ad18e23f421acf02adef62cbc4939e53cb8ac53c063a49409720413"
    assert hashlib.sha256(_bits(code).encode()).hexdigest() == expected


@pytest.mark.parametrize("length", [1, 17, 106, 107, 180, 260, 340, 412])
def test_every_version_carries_its_finders_timing_and_format(length):
    code = encode("x" * length)
    size = code.size
    assert size == 17 + 4 * code.version
    finder = [
        [max(abs(x - 3), abs(y - 3)) != 2 and max(abs(x - 3), abs(y - 3)) < 4 for x in range(7)]
        for y in range(7)
    ]
    for left, top in ((0, 0), (size - 7, 0), (0, size - 7)):
        assert [list(row[left : left + 7]) for row in code.modules[top : top + 7]] == finder
    assert [code.modules[6][x] for x in range(8, size - 8)] == [
        x % 2 == 0 for x in range(8, size - 8)
    ]
    assert code.modules[size - 8][8]  # the dark module
    # Format information: level M, the mask chosen, checked by its BCH code.
    data = (_format_bits(code) ^ 0x5412) >> 10
    assert data == code.mask
    remainder = data
    for _ in range(10):
        remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537)
    assert (data << 10 | remainder) ^ 0x5412 == _format_bits(code)


def test_a_link_too_long_to_draw_is_refused():
    with pytest.raises(TooLong):
        encode("x" * 413)


def _png(code, scale: int = 4) -> bytes:
    side = code.size + 2 * QUIET_ZONE
    lines = []
    for y in range(side):
        line = bytearray([0])
        for x in range(side):
            inner = QUIET_ZONE <= x < side - QUIET_ZONE and QUIET_ZONE <= y < side - QUIET_ZONE
            dark = inner and code.modules[y - QUIET_ZONE][x - QUIET_ZONE]
            line += bytes([0 if dark else 255]) * scale
        lines += [bytes(line)] * scale

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    width = side * scale
    header = struct.pack(">IIBBBBB", width, width, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(lines)))
        + chunk(b"IEND", b"")
    )


@pytest.mark.skipif(shutil.which("zbarimg") is None, reason="zbar's reader is not installed")
@pytest.mark.parametrize("length", [5, 60, 121, 200, 300, 412])
def test_a_reader_decodes_the_code(tmp_path, length):
    text = (URL * 5)[:length]
    path = tmp_path / "code.png"
    path.write_bytes(_png(encode(text)))
    read = subprocess.run(
        ["zbarimg", "-q", "--raw", str(path)], capture_output=True, text=True, timeout=30
    )
    assert read.stdout.rstrip("\n") == text
