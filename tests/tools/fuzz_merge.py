"""Spools of hostile parts for tests/tools/fuzz_merge.sh, made from a real
spool (SEED: rank-0 and rank-1 parts of one job and its job file):

    fuzz_merge.py SEED OUTDIR FIRST COUNT RNGSEED

writes OUTDIR/<n>/ranks-0-255/rank-{0,1}.spill (and the job file) for cases
FIRST..FIRST+COUNT-1, each a mutation of the seed chosen by the case number:
truncation, bit flips, hostile counts and values in the header, a thread or
a record, entries of the tables, sparse files (a count that a hole in the
file backs), and mixes of these.  Prints "<n> <kind>" for each case.

The layout is that of lib/cf_spool.h (checked against the seed)."""
import os
import random
import struct
import sys

HDR, OP, COMM, REGION, THREAD, STAT = 488, 56, 232, 144, 56, 1280
# header fields: name -> (offset, format)
FIELDS = {
    "version": (8, "I"), "hdr_size": (12, "I"), "stat_size": (16, "I"), "hist_n": (20, "I"),
    "rank": (24, "i"), "size": (28, "i"), "node": (32, "i"), "nnodes": (36, "i"), "node_ranks": (40, "i"),
    "node_cpus": (44, "i"), "end": (48, "i"), "code": (52, "i"), "nthreads": (56, "I"), "ncomm": (60, "I"),
    "nregion": (64, "I"), "nops": (68, "I"), "nops_ucx": (72, "I"), "spawned": (76, "I"),
    "threads_refused": (88, "Q"), "req_dropped": (96, "Q"), "init_wall": (104, "d"), "wall_s": (112, "d"),
    "clock_hz": (120, "d"), "offset_ns": (128, "d"), "offset_err_ns": (136, "d"), "nonce": (336, "Q"),
    "regions_full": (408, "Q"), "regions_deep": (416, "Q"),
}
TEXT = {"host": (144, 64), "mpi_library": (208, 128), "jobid": (344, 64), "program": (424, 64)}
INTS = [0, 1, -1, 2, 3, 255, 256, 511, 512, 513, 4096, 65536, 65537, 1 << 24, (1 << 24) + 1, 1 << 26,
        (1 << 31) - 1, -(1 << 31), -2]
UINTS = [0, 1, 2, 511, 512, 513, 8191, 8192, 65536, 65537, 1 << 22, 1 << 24, 1 << 26, (1 << 31) - 1, 1 << 31,
         (1 << 32) - 1]
U64S = [0, 1, (1 << 38) + 1, 1 << 53, (1 << 62) + 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 1]
DOUBLES = [float("nan"), float("inf"), float("-inf"), -1.0, -1e-300, 0.0, 5e-324, 1e11 + 1, 1e300, -1e300, 1e16]
TEXTS = [b"\x1b[31mred\x1b[0m", b"$(touch /tmp/pwned)`id`", b"\xff\xfe\xc0\xaf\xed\xa0\x80", b"\x01\x02\x7f",
         b"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", b"A" * 200]


def layout(b):
    """Offsets of the tables and threads of a part: (ops, comms, regions, [(thread, nstats)], end)."""
    f = lambda name: struct.unpack_from("<" + FIELDS[name][1], b, FIELDS[name][0])[0]
    at = HDR
    ops = at
    at += (f("nops") + f("nops_ucx")) * OP
    comms = at
    at += f("ncomm") * COMM
    regions = at
    at += f("nregion") * REGION
    threads = []
    for _ in range(f("nthreads")):
        if at + 8 > len(b):
            break  # a part already cut short or changed: its threads as far as they go
        n = struct.unpack_from("<Q", b, at)[0]
        threads.append((at, n))
        at += THREAD + n * STAT
    return ops, comms, regions, [t for t in threads if t[0] + THREAD <= len(b)], at


def put(b, name, v):
    off, fmt = FIELDS[name]
    if fmt in "iI":
        v = int(v) & 0xffffffff
        fmt = "I"
    elif fmt == "Q":
        v = int(v) & 0xffffffffffffffff
    struct.pack_into("<" + fmt, b, off, v)


def hostile(rng, fmt):
    if fmt == "d":
        return rng.choice(DOUBLES)
    if fmt == "Q":
        return rng.choice(U64S)
    return rng.choice(INTS if fmt == "i" else UINTS)


def mutate(rng, b, kind):
    """The part b (bytearray) changed by kind; returns (bytes, sparse size or 0)."""
    if len(b) < HDR:  # cut short already: only its bytes are left to change
        if b and kind == "bitflip":
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        return b, 0
    ops, comms, regions, threads, end = layout(b)
    if kind == "truncate":
        marks = [HDR, ops, comms, regions, end] + [t for t, _ in threads] + [t + THREAD for t, _ in threads]
        cut = rng.choice(marks) + rng.choice([-1, 0, 1, 7]) if rng.random() < 0.5 else rng.randrange(len(b))
        return b[:max(0, min(cut, len(b) - 1))], 0
    if kind == "bitflip":
        span = len(b) if rng.random() < 0.5 else min(len(b), 4096)
        for _ in range(rng.randint(1, 16)):
            i = rng.randrange(span)
            b[i] ^= 1 << rng.randrange(8)
        return b, 0
    if kind == "header":
        for _ in range(rng.randint(1, 3)):
            name = rng.choice(list(FIELDS))
            put(b, name, hostile(rng, FIELDS[name][1]))
        return b, 0
    if kind == "text":
        name = rng.choice(list(TEXT))
        off, n = TEXT[name]
        t = rng.choice(TEXTS)
        b[off:off + n] = (t * (n // len(t) + 1))[:n] if rng.random() < 0.3 else t[:n].ljust(n, b"\0")
        return b, 0
    if kind == "thread" and threads:
        at, n = rng.choice(threads)
        field = rng.choice([0, 1, 2, 3, 4, 6])  # nstats, dropped, mpi_ns, failed, missed, unfinished
        v = rng.choice([n + 1, max(0, n - 1), 1 << 20, 1 << 24, 1 << 31, (1 << 64) - 1] if field == 0 else U64S)
        struct.pack_into("<Q", b, at + 8 * field, v)
        return b, 0
    if kind == "record" and any(n for _, n in threads):
        at, n = rng.choice([t for t in threads if t[1]])
        r = at + THREAD + rng.randrange(n) * STAT
        if r + STAT > len(b):
            return b, 0
        key = struct.unpack_from("<Q", b, r)[0]
        choice = rng.randrange(7)
        if choice == 0:
            key = key & ~127 | rng.choice([65, 100, 126, 127])  # a size bin past the last
        elif choice == 1:
            key |= 3 << 7  # path class 3
        elif choice == 2:
            key = key & ~(511 << 10) | rng.choice([300, 511]) << 10  # an operation it does not name
        elif choice == 3:
            key = 0
        if choice < 4:
            struct.pack_into("<Q", b, r, key)
        elif choice == 4:
            struct.pack_into("<Q", b, r + 8 * rng.randint(1, 7), rng.choice(U64S))
        elif choice == 5:
            struct.pack_into("<QQ", b, r + 32, 1000, 10)  # t_min > t_max
        else:
            struct.pack_into("<I", b, r + 64 + 4 * rng.randrange(304), 0xffffffff)
        return b, 0
    if kind == "entry":
        table = rng.choice([(ops, OP, "nops"), (comms, COMM, "ncomm"), (regions, REGION, "nregion")])
        base, size, count = table
        n = struct.unpack_from("<I", b, FIELDS[count][0])[0]
        if n and base + n * size <= len(b):
            e = base + rng.randrange(n) * size
            if rng.random() < 0.5:
                b[e:e + size] = bytes(rng.choice([0, 0x1b, 0xff, 0x41]) for _ in range(size))
            else:
                struct.pack_into("<i", b, e + 4 * rng.randrange(4), rng.choice(INTS))
        return b, 0
    if kind == "sparse":
        # a count the file seems to back: a hole as large as it needs
        name, per = rng.choice([("ncomm", COMM), ("nregion", REGION), ("nops", OP), ("nthreads", THREAD),
                                ("thread", STAT)])
        n = rng.choice([1 << 12, 1 << 16, 1 << 20, 1 << 22])
        if rng.random() < 0.3:
            b = b[:24 * 1024]  # a 24 kB part
        if name == "thread" and threads and threads[0][0] + 8 <= len(b):
            struct.pack_into("<Q", b, threads[0][0], n)
        elif name != "thread":
            put(b, name, n)
        return b, len(b) + n * per
    return b, 0


KINDS = ["truncate", "bitflip", "header", "text", "thread", "record", "entry", "sparse"]


def main():
    seed, outdir, first, count, rngseed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    sub = os.path.join(seed, "ranks-0-255")
    parts = [bytearray(open(os.path.join(sub, "rank-%d.spill" % r), "rb").read()) for r in (0, 1)]
    for p in parts:
        if layout(p)[4] != len(p):
            sys.exit("fuzz_merge.py: the seed's layout is not lib/cf_spool.h's (update HDR, COMM... here)")
    for n in range(first, first + count):
        rng = random.Random(rngseed * 1000003 + n)
        d = os.path.join(outdir, str(n), "ranks-0-255")
        os.makedirs(d)
        kinds = [rng.choice(KINDS) for _ in range(1 if rng.random() < 0.7 else rng.randint(2, 3))]
        # which part: rank 1 mostly, sometimes rank 0, sometimes both
        which = rng.choice([1, 1, 1, 0, 2])
        sparse = {}
        for r in (0, 1):
            b = bytearray(parts[r])
            if which in (r, 2):
                for k in kinds:
                    b, s = mutate(rng, bytearray(b), k)
                    if s:
                        sparse[r] = s
            path = os.path.join(d, "rank-%d.spill" % r)
            if b == parts[r]:
                os.link(os.path.join(sub, "rank-%d.spill" % r), path)
            else:
                open(path, "wb").write(b)
                if r in sparse:
                    os.truncate(path, sparse[r])
        if os.path.exists(os.path.join(seed, "job")) and rng.random() < 0.8:
            os.link(os.path.join(seed, "job"), os.path.join(outdir, str(n), "job"))
        print(n, "+".join(kinds), "rank", which if which < 2 else "both")


if __name__ == "__main__":
    main()
