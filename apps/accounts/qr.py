"""A QR code of the authenticator set-up link, drawn as SVG on the server.

No package of the project draws QR codes, and the set-up link is short, so this module
encodes it itself, as ISO/IEC 18004 describes: byte mode, error correction level M
(about 15 % of the code may be lost), versions 1 to 15 (up to 412 bytes), the mask with
the lowest penalty. The page shows the result as an inline ``<svg>``: no script, no
image fetched, nothing the Content-Security-Policy refuses.
"""

from dataclasses import dataclass
from functools import cache

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

# Per version, level M: (error-correction codewords per block,
# [(blocks, data codewords in each), ...]).
_BLOCKS_M: dict[int, tuple[int, list[tuple[int, int]]]] = {
    1: (10, [(1, 16)]),
    2: (16, [(1, 28)]),
    3: (26, [(1, 44)]),
    4: (18, [(2, 32)]),
    5: (24, [(2, 43)]),
    6: (16, [(4, 27)]),
    7: (18, [(4, 31)]),
    8: (22, [(2, 38), (2, 39)]),
    9: (22, [(3, 36), (2, 37)]),
    10: (26, [(4, 43), (1, 44)]),
    11: (30, [(1, 50), (4, 51)]),
    12: (22, [(6, 36), (2, 37)]),
    13: (22, [(8, 37), (1, 38)]),
    14: (24, [(4, 40), (5, 41)]),
    15: (24, [(5, 41), (5, 42)]),
}
_ALIGNMENT: dict[int, tuple[int, ...]] = {
    1: (),
    2: (6, 18),
    3: (6, 22),
    4: (6, 26),
    5: (6, 30),
    6: (6, 34),
    7: (6, 22, 38),
    8: (6, 24, 42),
    9: (6, 26, 46),
    10: (6, 28, 50),
    11: (6, 30, 54),
    12: (6, 32, 58),
    13: (6, 34, 62),
    14: (6, 26, 46, 66),
    15: (6, 26, 48, 70),
}
LEVEL_M_FORMAT = 0b00  # the two bits that name level M in the format information
QUIET_ZONE = 4  # light modules around the code, as the standard asks


class TooLong(ValueError):
    """More bytes than the largest version this module draws holds."""


@dataclass(frozen=True)
class QrCode:
    version: int
    mask: int
    modules: tuple[tuple[bool, ...], ...]  # rows of columns; True is dark

    @property
    def size(self) -> int:
        return len(self.modules)

    def svg(self, *, label: str) -> SafeString:
        """The code as an inline SVG image named ``label``, with its quiet zone."""
        side = self.size + 2 * QUIET_ZONE
        path = "".join(
            f"M{x + QUIET_ZONE} {y + QUIET_ZONE}h1v1h-1z"
            for y, row in enumerate(self.modules)
            for x, dark in enumerate(row)
            if dark
        )
        return mark_safe(  # noqa: S308 - numbers, and the label escaped
            f'<svg class="qr" xmlns="http://www.w3.org/2000/svg" role="img" '
            f'aria-label="{escape(label)}" viewBox="0 0 {side} {side}" '
            f'shape-rendering="crispEdges"><rect width="{side}" height="{side}" fill="#fff"/>'
            f'<path fill="#000" d="{path}"/></svg>'
        )


def encode(text: str) -> QrCode:
    """The QR code of ``text`` (UTF-8 bytes), in the smallest version that holds it."""
    data = text.encode("utf-8")
    for version in _BLOCKS_M:
        capacity = _data_codewords(version)
        count_bits = 8 if version < 10 else 16
        if 4 + count_bits + 8 * len(data) <= 8 * capacity:
            break
    else:
        raise TooLong(f"{len(data)} bytes do not fit in a version 15 QR code")
    codewords = _with_error_correction(version, _data_bits(data, count_bits, capacity))
    return _matrix(version, codewords)


# --- the data and its error correction ----------------------------------------------------


def _data_codewords(version: int) -> int:
    return sum(count * size for count, size in _BLOCKS_M[version][1])


def _data_bits(data: bytes, count_bits: int, capacity: int) -> list[int]:
    bits: list[int] = []

    def put(value: int, length: int) -> None:
        bits.extend((value >> shift) & 1 for shift in reversed(range(length)))

    put(0b0100, 4)  # byte mode
    put(len(data), count_bits)
    for byte in data:
        put(byte, 8)
    put(0, min(4, 8 * capacity - len(bits)))  # the terminator
    put(0, -len(bits) % 8)
    codewords = [int("".join(map(str, bits[i : i + 8])), 2) for i in range(0, len(bits), 8)]
    pad = (0xEC, 0x11)
    codewords += [pad[i % 2] for i in range(capacity - len(codewords))]
    return codewords


def _gf_multiply(x: int, y: int) -> int:
    """Multiplication in GF(2^8) modulo x^8 + x^4 + x^3 + x^2 + 1."""
    z = 0
    for shift in reversed(range(8)):
        z = (z << 1) ^ ((z >> 7) * 0x11D)
        z ^= ((y >> shift) & 1) * x
    return z


@cache
def _divisor(degree: int) -> tuple[int, ...]:
    """The Reed-Solomon generator polynomial of ``degree``, leading term left out."""
    result = [0] * (degree - 1) + [1]
    root = 1
    for _ in range(degree):
        for j in range(degree):
            result[j] = _gf_multiply(result[j], root)
            if j + 1 < degree:
                result[j] ^= result[j + 1]
        root = _gf_multiply(root, 0x02)
    return tuple(result)


def _remainder(data: list[int], degree: int) -> list[int]:
    divisor = _divisor(degree)
    result = [0] * degree
    for byte in data:
        factor = byte ^ result.pop(0)
        result.append(0)
        for i, coefficient in enumerate(divisor):
            result[i] ^= _gf_multiply(coefficient, factor)
    return result


def _with_error_correction(version: int, data: list[int]) -> list[int]:
    """The data in its blocks, each with its error correction, interleaved."""
    degree, groups = _BLOCKS_M[version]
    blocks, start = [], 0
    for count, size in groups:
        for _ in range(count):
            blocks.append(data[start : start + size])
            start += size
    corrections = [_remainder(block, degree) for block in blocks]
    out = []
    for i in range(max(len(block) for block in blocks)):
        out += [block[i] for block in blocks if i < len(block)]
    for i in range(degree):
        out += [correction[i] for correction in corrections]
    return out


# --- the matrix -----------------------------------------------------------------------------


class _Grid:
    def __init__(self, version: int) -> None:
        self.version = version
        self.size = 17 + 4 * version
        self.dark = [[False] * self.size for _ in range(self.size)]
        self.function = [[False] * self.size for _ in range(self.size)]

    def fix(self, x: int, y: int, dark: bool) -> None:
        self.dark[y][x] = dark
        self.function[y][x] = True

    def draw_function_patterns(self) -> None:
        size = self.size
        for i in range(size):  # timing
            self.fix(6, i, i % 2 == 0)
            self.fix(i, 6, i % 2 == 0)
        for cx, cy in ((3, 3), (size - 4, 3), (3, size - 4)):  # finders and separators
            for dy in range(-4, 5):
                for dx in range(-4, 5):
                    x, y = cx + dx, cy + dy
                    if 0 <= x < size and 0 <= y < size:
                        self.fix(x, y, max(abs(dx), abs(dy)) not in (2, 4))
        positions = _ALIGNMENT[self.version]
        last = len(positions) - 1
        for i, cy in enumerate(positions):
            for j, cx in enumerate(positions):
                if (i, j) in ((0, 0), (0, last), (last, 0)):
                    continue  # where a finder is
                for dy in range(-2, 3):
                    for dx in range(-2, 3):
                        self.fix(cx + dx, cy + dy, max(abs(dx), abs(dy)) != 1)
        self.draw_format(0)  # reserved; drawn again with the mask chosen
        self.draw_version()

    def draw_format(self, mask: int) -> None:
        data = LEVEL_M_FORMAT << 3 | mask
        remainder = data
        for _ in range(10):
            remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537)
        bits = (data << 10 | remainder) ^ 0x5412
        size = self.size

        def bit(i: int) -> bool:
            return (bits >> i) & 1 == 1

        for i in range(6):
            self.fix(8, i, bit(i))
        self.fix(8, 7, bit(6))
        self.fix(8, 8, bit(7))
        self.fix(7, 8, bit(8))
        for i in range(9, 15):
            self.fix(14 - i, 8, bit(i))
        for i in range(8):
            self.fix(size - 1 - i, 8, bit(i))
        for i in range(8, 15):
            self.fix(8, size - 15 + i, bit(i))
        self.fix(8, size - 8, True)  # the dark module

    def draw_version(self) -> None:
        if self.version < 7:
            return
        remainder = self.version
        for _ in range(12):
            remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25)
        bits = self.version << 12 | remainder
        for i in range(18):
            dark = (bits >> i) & 1 == 1
            a, b = self.size - 11 + i % 3, i // 3
            self.fix(a, b, dark)
            self.fix(b, a, dark)

    def place(self, codewords: list[int]) -> None:
        """The codewords' bits in two-module columns, zigzag from the bottom right."""
        size, i, total = self.size, 0, len(codewords) * 8
        right = size - 1
        while right >= 1:
            if right == 6:  # the vertical timing pattern
                right = 5
            upward = (right + 1) & 2 == 0
            for vertical in range(size):
                y = size - 1 - vertical if upward else vertical
                for x in (right, right - 1):
                    if not self.function[y][x] and i < total:
                        self.dark[y][x] = (codewords[i >> 3] >> (7 - (i & 7))) & 1 == 1
                        i += 1
            right -= 2

    def masked(self, mask: int) -> list[list[bool]]:
        test = _MASKS[mask]
        return [
            [self.dark[y][x] ^ (not self.function[y][x] and test(x, y)) for x in range(self.size)]
            for y in range(self.size)
        ]


_MASKS = (
    lambda x, y: (x + y) % 2 == 0,
    lambda x, y: y % 2 == 0,
    lambda x, y: x % 3 == 0,
    lambda x, y: (x + y) % 3 == 0,
    lambda x, y: (x // 3 + y // 2) % 2 == 0,
    lambda x, y: x * y % 2 + x * y % 3 == 0,
    lambda x, y: (x * y % 2 + x * y % 3) % 2 == 0,
    lambda x, y: ((x + y) % 2 + x * y % 3) % 2 == 0,
)


def _matrix(version: int, codewords: list[int]) -> QrCode:
    grid = _Grid(version)
    grid.draw_function_patterns()
    grid.place(codewords)
    best: tuple[int, int, list[list[bool]]] | None = None
    for mask in range(len(_MASKS)):
        grid.draw_format(mask)
        modules = grid.masked(mask)
        score = penalty(modules)
        if best is None or score < best[0]:
            best = (score, mask, modules)
    assert best is not None
    _score, mask, modules = best
    return QrCode(version, mask, tuple(tuple(row) for row in modules))


# Dark, light, three dark, light, dark, then four light: what a reader takes for a finder.
FINDER_LIKE = [True, False, True, True, True, False, True, False, False, False, False]


def penalty(modules: list[list[bool]]) -> int:
    """How hard the code is to read (the standard's four rules): long runs of one colour,
    2×2 blocks, patterns that look like a finder, and an uneven share of dark modules."""
    size = len(modules)
    lines = [list(row) for row in modules] + [[row[x] for row in modules] for x in range(size)]
    score = 0
    for line in lines:
        run, previous = 0, None
        for dark in line:
            run = run + 1 if dark == previous else 1
            previous = dark
            if run == 5:
                score += 3
            elif run > 5:
                score += 1
        padded = [False] * 4 + line + [False] * 4
        for start in range(len(padded) - len(FINDER_LIKE) + 1):
            if padded[start : start + len(FINDER_LIKE)] in (FINDER_LIKE, FINDER_LIKE[::-1]):
                score += 40
    for y in range(size - 1):
        for x in range(size - 1):
            colour = modules[y][x]
            if colour == modules[y][x + 1] == modules[y + 1][x] == modules[y + 1][x + 1]:
                score += 3
    dark_modules = sum(1 for row in modules for module in row if module)
    total = size * size
    score += 10 * (abs(dark_modules * 20 - total * 10) // total)
    return score
