#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""szip_ref.py - strict, independent szip decoder for the CLI tests.

Written only from docs/szip-format.md (no code shared with szip/*.c), so
that files written by our packer are checked by a second reader.

    szip_ref.py FILE.sz > out        decode FILE.sz to standard output
    szip_ref.py --layout FILE.sz     check the layout faulty.lib's szip tool
                                     writes (sections 2-3): windowBits -15,
                                     entry[0] == 20 + dictSize + 4*nChunks,
                                     totalSize == file size, chunks in
                                     order and contiguous (decoding checks
                                     that each stream fills its extent);
                                     v2: contiguous chunks, none longer
                                     than its size; prints one summary line

Format 2 (section 9): header, tables, stored, deflate, zstd and LZ4
chunks and both checksums are decoded here.  zstd and LZ4 need Debian's
python3-zstandard and python3-lz4 (run with the system's python3); without
the one a file needs, decoding stops with exit status 3 and says which.

Exit status: 0, 1 for a bad file, 2 for a usage error, 3 for a missing
decoder.

Strict: anything the format doc lists as unchecked by the original reader
(offset order/range, windowBits, filter id, exact chunk length, bytes left
in a chunk, bytes after totalSize) is an error.  Errors go to stderr as
"szip_ref.py: FILE: message".
"""
import re
import struct
import sys
import zlib

try:
    import zstandard
except ImportError:
    zstandard = None
try:
    import lz4.block as lz4_block
except ImportError:
    lz4_block = None

HEADER_SIZE = 20
MAGIC = b"SeZz"
M32 = 0xFFFFFFFF
FILTER_NONE, FILTER_THUMB, FILTER_ARM, FILTER_X86 = 0, 1, 2, 3
FILTER_NAMES = {0: "none", 1: "thumb", 2: "arm", 3: "x86"}


class SzipError(Exception):
    pass


class CodecMissing(Exception):
    """The file needs a decoder this Python lacks."""


# ------------------------------------------------------------- header (2)

def check_total_size(total_size, buf):
    """totalSize is the file's length: no more (truncated), no less."""
    if total_size > len(buf):
        raise SzipError("totalSize %d exceeds file length %d"
                        % (total_size, len(buf)))
    if total_size < len(buf):
        raise SzipError("%d trailing bytes after totalSize"
                        % (len(buf) - total_size))


class Header:
    version = 1

    def __init__(self, buf):
        if len(buf) < HEADER_SIZE:
            raise SzipError("shorter than the 20-byte header")
        if buf[0:4] != MAGIC:
            raise SzipError("bad magic (expected 'SeZz')")
        (self.total_size, self.chunk_size, self.dict_size, self.nchunks,
         self.last_chunk_size, self.wbits, self.filter) = struct.unpack_from(
             "<IHHIHbB", buf, 4)
        cs = self.chunk_size
        if cs == 0 or cs % 4096 or cs > 32768:
            raise SzipError("chunkSize %d invalid" % cs)
        if self.nchunks < 1:
            raise SzipError("nChunks is 0")
        if not 1 <= self.last_chunk_size <= cs:
            raise SzipError("lastChunkSize %d invalid" % self.last_chunk_size)
        wb = self.wbits
        if not (wb == 0 or 8 <= abs(wb) <= 15):
            raise SzipError("windowBits %d not accepted by zlib" % wb)
        if self.filter not in FILTER_NAMES:
            raise SzipError("unknown filter id %d" % self.filter)
        if self.dict_size and wb >= 0:
            raise SzipError("dictionary requires raw deflate (windowBits < 0)")
        check_total_size(self.total_size, buf)
        self.table_offset = HEADER_SIZE + self.dict_size
        self.data_offset = self.table_offset + 4 * self.nchunks
        if self.data_offset > self.total_size:
            raise SzipError("header + dictionary + offset table exceed "
                            "totalSize")
        self.dictionary = bytes(buf[HEADER_SIZE:self.table_offset])
        # offset table (3): read bytewise, it may be unaligned
        self.offsets = [struct.unpack_from("<I", buf, self.table_offset + 4 * i)[0]
                        for i in range(self.nchunks)]
        self.size = (self.nchunks - 1) * cs + self.last_chunk_size

    def extent(self, i):
        start = self.offsets[i]
        end = (self.offsets[i + 1] if i + 1 < self.nchunks
               else self.total_size)
        if not self.data_offset <= start < end <= self.total_size:
            raise SzipError("chunk %d: offsets %d..%d out of range"
                            % (i, start, end))
        return start, end

    def ulen(self, i):
        return self.chunk_size if i + 1 < self.nchunks else self.last_chunk_size


# ------------------------------------------------------------ format 2 (9)

MAGIC2 = b"SeZ2"
HEADER2_SIZE = 64
CODEC_DEFLATE, CODEC_ZSTD, CODEC_LZ4 = 1, 2, 3
CODEC_NAMES = {1: "deflate", 2: "zstd", 3: "lz4"}
CSUM_NONE, CSUM_XXH64, CSUM_CRC32C = 0, 1, 2
M64 = (1 << 64) - 1


def _crc32c_table():
    t = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        t.append(c)
    return t


CRC32C_TABLE = _crc32c_table()


def crc32c(data):
    c = M32
    for b in data:
        c = CRC32C_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ M32


P1, P2, P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
P4, P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _round(acc, lane):
    return (_rotl((acc + lane * P2) & M64, 31) * P1) & M64


def xxh64(data, seed=0):
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M64, (seed + P2) & M64, seed, (seed - P1) & M64]
        while i + 32 <= n:
            for k in range(4):
                v[k] = _round(v[k], struct.unpack_from("<Q", data, i + 8 * k)[0])
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) +
             _rotl(v[3], 18)) & M64
        for k in range(4):
            h = ((h ^ _round(0, v[k])) * P1 + P4) & M64
    else:
        h = (seed + P5) & M64
    h = (h + n) & M64
    while i + 8 <= n:
        h ^= _round(0, struct.unpack_from("<Q", data, i)[0])
        h = (_rotl(h, 27) * P1 + P4) & M64
        i += 8
    if i + 4 <= n:
        h ^= (struct.unpack_from("<I", data, i)[0] * P1) & M64
        h = (_rotl(h, 23) * P2 + P3) & M64
        i += 4
    while i < n:
        h ^= (data[i] * P5) & M64
        h = (_rotl(h, 11) * P1) & M64
        i += 1
    h ^= h >> 33
    h = (h * P2) & M64
    h ^= h >> 29
    h = (h * P3) & M64
    return h ^ (h >> 32)


class Header2:
    version = 2
    wbits = -15

    def __init__(self, buf):
        if len(buf) < HEADER2_SIZE:
            raise SzipError("shorter than the 64-byte v2 header")
        (self.codec, shift, self.filter, self.checksum, self.size,
         self.total_size, self.dict_size, self.nchunks) = struct.unpack_from(
             "<BBBBQQII", buf, 4)
        if self.codec not in CODEC_NAMES:
            raise SzipError("unknown codec %d" % self.codec)
        if not 12 <= shift <= 17:
            raise SzipError("chunkShift %d invalid" % shift)
        if self.filter not in FILTER_NAMES:
            raise SzipError("unknown filter id %d" % self.filter)
        if self.checksum not in (CSUM_NONE, CSUM_XXH64, CSUM_CRC32C):
            raise SzipError("unknown checksum %d" % self.checksum)
        if any(buf[32:64]):
            raise SzipError("reserved bytes set")
        cs = self.chunk_size = 1 << shift
        # size 0: an empty file, no chunks
        if self.nchunks != (self.size + cs - 1) // cs:
            raise SzipError("size %d and nChunks %d disagree"
                            % (self.size, self.nchunks))
        if self.dict_size > 262144:
            raise SzipError("dictSize %d too large" % self.dict_size)
        check_total_size(self.total_size, buf)
        self.table_offset = HEADER2_SIZE + self.dict_size
        csum_offset = self.table_offset + 8 * self.nchunks
        width = {CSUM_NONE: 0, CSUM_XXH64: 8, CSUM_CRC32C: 4}[self.checksum]
        self.data_offset = csum_offset + width * self.nchunks
        if self.data_offset > self.total_size:
            raise SzipError("header + dictionary + tables exceed totalSize")
        if not self.nchunks and self.total_size != self.data_offset:
            raise SzipError("empty file with %d bytes after its tables"
                            % (self.total_size - self.data_offset))
        self.dictionary = bytes(buf[HEADER2_SIZE:self.table_offset])
        self.offsets = [struct.unpack_from("<Q", buf, self.table_offset + 8 * i)[0]
                        for i in range(self.nchunks)]
        fmt = "<Q" if width == 8 else "<I"
        self.csums = [struct.unpack_from(fmt, buf, csum_offset + width * i)[0]
                      for i in range(self.nchunks)] if width else None
        self.last_chunk_size = (self.size - (self.nchunks - 1) * cs
                                if self.nchunks else 0)

    extent = Header.extent
    ulen = Header.ulen


def parse_header(buf):
    if buf[0:4] == MAGIC2:
        return Header2(buf)
    return Header(buf)


# ------------------------------------------------------------ filters (5)

X86_OK = (True, True, True, False, True, False, False, False)
X86_BIT = (0, 1, 2, 2, 3, 3, 3, 3)
RE_ARM = re.compile(rb"(?s)...\xeb")
RE_THUMB = re.compile(rb"(?s).[\xf0-\xf7].[\xf8-\xff]")
RE_X86 = re.compile(rb"[\xe8\xe9]")


def bcj_arm(b, pos, encode):
    """ARM BL: 4-aligned words whose top byte is 0xEB."""
    n = len(b)
    k = 0
    while True:
        m = RE_ARM.search(b, k, n)
        if not m:
            return
        k = m.start()
        if k % 4:
            k += 1
            continue
        v = (b[k] | b[k + 1] << 8 | b[k + 2] << 16) << 2
        a = pos + k + 8
        d = ((v + a) if encode else (v - a)) & M32
        d >>= 2
        b[k] = d & 0xFF
        b[k + 1] = (d >> 8) & 0xFF
        b[k + 2] = (d >> 16) & 0xFF
        k += 4


def bcj_thumb(b, pos, encode):
    """Thumb BL pairs at even offsets; a match advances by 4."""
    n = len(b)
    k = 0
    while True:
        m = RE_THUMB.search(b, k, n)
        if not m:
            return
        k = m.start()
        if k % 2:
            k += 1
            continue
        v = ((b[k + 1] & 7) << 19 | b[k] << 11 | (b[k + 3] & 7) << 8
             | b[k + 2]) << 1
        a = pos + k + 4
        d = ((v + a) if encode else (v - a)) & M32
        d >>= 1
        b[k] = (d >> 11) & 0xFF
        b[k + 1] = 0xF0 | ((d >> 19) & 7)
        b[k + 2] = d & 0xFF
        b[k + 3] = 0xF8 | ((d >> 8) & 7)
        k += 4


def bcj_x86(b, pos, encode):
    """x86 CALL/JMP rel32, xz's x86 BCJ with fresh state at @pos."""
    n = len(b)
    m = 0   # previous mask
    q = 0   # last candidate position
    k = 0
    while True:
        hit = RE_X86.search(b, k, n - 4) if n >= 5 else None
        if not hit:
            return
        k = hit.start()
        a = (pos + k) & M32
        g = (a - q) & M32
        q = a
        if g > 5:
            m = 0
        else:
            for _ in range(g):
                m = (m & 0x77) << 1
        h = b[k + 4]
        if h in (0, 0xFF) and X86_OK[(m >> 1) & 7] and (m >> 1) < 16:
            v = b[k + 1] | b[k + 2] << 8 | b[k + 3] << 16 | b[k + 4] << 24
            while True:
                d = ((v + a + 5) if encode else (v - (a + 5))) & M32
                if m == 0:
                    break
                j = X86_BIT[m >> 1]
                t = (d >> (24 - 8 * j)) & 0xFF
                if t not in (0, 0xFF):
                    break
                v = d ^ ((1 << (32 - 8 * j)) - 1)
            b[k + 1] = d & 0xFF
            b[k + 2] = (d >> 8) & 0xFF
            b[k + 3] = (d >> 16) & 0xFF
            b[k + 4] = 0xFF if d & (1 << 24) else 0
            k += 5
            m = 0
        else:
            k += 1
            m |= 1
            if h in (0, 0xFF):
                m |= 0x10


BCJ = {FILTER_THUMB: bcj_thumb, FILTER_ARM: bcj_arm, FILTER_X86: bcj_x86}


# ------------------------------------------------------------ chunks (4)

def exact(i, out, want):
    """@out, chunk @i's decoded bytes, if there are exactly @want."""
    if len(out) != want:
        raise SzipError("chunk %d decodes to %d bytes, expected %d"
                        % (i, len(out), want))
    return out


def whole_stream(i, z, what, out, want):
    """Chunk @i was exactly one @what (decoder @z), of exactly @want bytes."""
    if not z.eof:
        raise SzipError("chunk %d: compressed data ends inside the %s"
                        % (i, what))
    if z.unused_data:
        raise SzipError("chunk %d: %d bytes after the %s"
                        % (i, len(z.unused_data), what))
    return exact(i, out, want)


def inflate_chunk(hdr, i, data):
    """Inflate chunk @i (@data: its compressed bytes) to exactly ulen."""
    want = hdr.ulen(i)
    if hdr.dict_size:
        z = zlib.decompressobj(hdr.wbits, zdict=hdr.dictionary)
    else:
        z = zlib.decompressobj(hdr.wbits)
    try:
        out = z.decompress(data, want)
        if not z.eof:
            # output full (or input used up): one more byte tells which
            if z.decompress(z.unconsumed_tail, 1):
                raise SzipError("chunk %d inflates to more than %d bytes"
                                % (i, want))
    except zlib.error as e:
        raise SzipError("chunk %d: %s" % (i, e)) from None
    return whole_stream(i, z, "deflate stream", out, want)


def zstd_chunk(hdr, i, data):
    """Chunk @i: exactly one zstd frame giving exactly ulen bytes."""
    if zstandard is None:
        raise CodecMissing("zstd chunks need python3-zstandard")
    want = hdr.ulen(i)
    if not hasattr(hdr, "zstd"):
        if hdr.dict_size:
            d = zstandard.ZstdCompressionDict(
                hdr.dictionary, dict_type=zstandard.DICT_TYPE_AUTO)
            hdr.zstd = zstandard.ZstdDecompressor(dict_data=d)
        else:
            hdr.zstd = zstandard.ZstdDecompressor()
    z = hdr.zstd.decompressobj()
    try:
        out = z.decompress(data)
    except zstandard.ZstdError as e:
        raise SzipError("chunk %d: zstd: %s" % (i, e)) from None
    return whole_stream(i, z, "zstd frame", out, want)


def lz4_chunk(hdr, i, data):
    """Chunk @i: one LZ4 block, all of it, giving exactly ulen bytes."""
    if lz4_block is None:
        raise CodecMissing("LZ4 chunks need python3-lz4")
    want = hdr.ulen(i)
    kw = {"dict": hdr.dictionary[-65536:]} if hdr.dict_size else {}
    try:
        # the safe decoder fails unless the block ends at the data's end;
        # more than @want bytes do not fit
        out = lz4_block.decompress(bytes(data), uncompressed_size=want, **kw)
    except lz4_block.LZ4BlockError as e:
        raise SzipError("chunk %d: LZ4: %s" % (i, e)) from None
    return exact(i, out, want)


def chunk_bytes(hdr, i, data):
    """The decompressed (still filtered) bytes of chunk @i."""
    if getattr(hdr, "version", 1) == 1:
        return inflate_chunk(hdr, i, data)
    if len(data) > hdr.ulen(i):
        raise SzipError("chunk %d: %d bytes, longer than its size"
                        % (i, len(data)))
    if len(data) == hdr.ulen(i):
        return data                               # stored
    if hdr.codec == CODEC_ZSTD:
        return zstd_chunk(hdr, i, data)
    if hdr.codec == CODEC_LZ4:
        return lz4_chunk(hdr, i, data)
    return inflate_chunk(hdr, i, data)


def decode(buf, write):
    hdr = parse_header(buf)
    for i in range(hdr.nchunks):
        start, end = hdr.extent(i)
        chunk = bytearray(chunk_bytes(hdr, i, buf[start:end]))
        if hdr.filter != FILTER_NONE:
            BCJ[hdr.filter](chunk, (i * hdr.chunk_size) & M32, False)
        csums = getattr(hdr, "csums", None)
        if csums is not None:
            got = (xxh64(chunk) if hdr.checksum == CSUM_XXH64
                   else crc32c(chunk))
            if got != csums[i]:
                raise SzipError("chunk %d: checksum 0x%x, stored 0x%x"
                                % (i, got, csums[i]))
        write(chunk)
    return hdr


def check_layout(buf):
    """What faulty.lib's szip writes: see format doc sections 2, 3 and 7.
    For a v2 file (section 9): the same contiguity, chunks no longer than
    their size, and no chunk of zstd or LZ4 data as long as the chunk
    (that length means stored)."""
    hdr = parse_header(buf)
    problems = []
    if hdr.version == 2:
        if hdr.nchunks and hdr.offsets[0] != hdr.data_offset:
            problems.append("entry[0] = %d, expected %d"
                            % (hdr.offsets[0], hdr.data_offset))
        for i in range(hdr.nchunks):
            try:
                start, end = hdr.extent(i)
            except SzipError as e:
                problems.append(str(e))
                break
            if end - start > hdr.ulen(i):
                problems.append("chunk %d longer than its size" % i)
                break
        if problems:
            raise SzipError("; ".join(problems))
        return hdr
    if buf[18] != 0xF1:
        problems.append("byte 18 is 0x%02X, not 0xF1 (windowBits -15)"
                        % buf[18])
    if hdr.offsets[0] != hdr.data_offset:
        problems.append("entry[0] = %d, expected 20 + %d + 4*%d = %d"
                        % (hdr.offsets[0], hdr.dict_size, hdr.nchunks,
                           hdr.data_offset))
    if hdr.total_size != len(buf):
        problems.append("totalSize %d != file size %d"
                        % (hdr.total_size, len(buf)))
    # contiguous: every extent non-empty and in order from entry[0] to
    # totalSize (that each deflate stream fills its extent exactly is
    # checked by decoding: inflate_chunk rejects short or trailing data)
    for i in range(hdr.nchunks):
        try:
            hdr.extent(i)
        except SzipError as e:
            problems.append(str(e))
            break
    if problems:
        raise SzipError("; ".join(problems))
    return hdr


def main(argv):
    args = argv[1:]
    layout = False
    if args and args[0] == "--layout":
        layout = True
        args = args[1:]
    if len(args) != 1 or args[0].startswith("-") and args[0] != "-":
        sys.stderr.write("usage: szip_ref.py [--layout] FILE.sz > out\n")
        return 2
    name = args[0]
    try:
        if name == "-":
            buf = sys.stdin.buffer.read()
        else:
            with open(name, "rb") as f:
                buf = f.read()
        if layout:
            h = check_layout(buf)
            print("layout ok: v%d, %d chunks of %d, dict %d, filter %s, "
                  "totalSize %d" % (getattr(h, "version", 1), h.nchunks,
                                    h.chunk_size, h.dict_size,
                                    FILTER_NAMES[h.filter], h.total_size))
        else:
            decode(buf, sys.stdout.buffer.write)
            sys.stdout.buffer.flush()
    except (SzipError, OSError) as e:
        sys.stderr.write("szip_ref.py: %s: %s\n" % (name, e))
        return 1
    except CodecMissing as e:
        sys.stderr.write("szip_ref.py: %s: cannot decode: %s\n" % (name, e))
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
