#!/usr/bin/env python3
"""Split a paymentsd CPU profile into components (docs/benchmarks.md, "Eighth session").

Usage: scripts/pprof_breakdown.py BINARY PROFILE [PROFILE...]

Reads `go tool pprof -traces` and gives every sample to one component: the
first in COMPONENTS whose pattern matches a frame anywhere in its stack (so a
JSON encoder that formats a decimal counts as JSON, a TLS write under pgx as
the driver's TLS). Each component is also split by the goroutine's area: an API
request (net/http's server), a webhook delivery, or anything else. Allocation
(runtime.mallocgc) is counted with the component that allocated and shown
again on its own line.
"""
import re
import subprocess
import sys
from collections import defaultdict

GC = re.compile(r"^runtime\.(gcBgMarkWorker|gcAssistAlloc|bgsweep|bgscavenge|gcStart|gcMarkTermination|markroot|scanobject|gcDrain|wbBufFlush|sweepone|gcMarkDone)")

# (component, pattern over one frame); the first component with a matching
# frame takes the sample.
COMPONENTS = [
    ("GC (collector, assists, scavenger)", GC),
    ("P-256 signature", re.compile(r"crypto/ecdsa|fips140/ecdsa|fips140/nistec|crypto/elliptic")),
    ("HMAC signature", re.compile(r"crypto/hmac|fips140/hmac|webhooks/signing\.Sign$")),
    ("driver: socket reads and writes", re.compile(r"^PGSYSCALL$")),  # set in classify
    ("driver: TLS (records, encryption)", re.compile(r"^PGTLS$")),  # set in classify
    ("driver: pgx, database/sql", re.compile(r"jackc/pgx|^database/sql\.|modernc\.org/sqlite")),
    ("JSON encode/decode", re.compile(r"^encoding/json\.|/internal/jsonx\.")),
    ("pricing, decimals", re.compile(r"shopspring/decimal|/internal/pricing\.|^math/big\.")),
    ("auth (credentials)", re.compile(r"/internal/auth\.|/internal/tokens\.|golang\.org/x/crypto")),
    ("logging, metrics", re.compile(r"^log/slog|prometheus")),
    ("scheduler, netpoll", re.compile(r"^runtime\.(schedule|findRunnable|netpoll|park_m|mcall|goexit0|stopm|notesleep|futex)")),
]
# What no pattern took goes by its leaf-most frame outside the runtime and
# the small standard packages: net/http (server or client by area), our
# code, or anything else.
HTTP_SERVER, HTTP_CLIENT = "HTTP server (read, parse, write)", "HTTP client (webhook POST)"
OURS, OTHER = "our code (handlers, services, store)", "other (runtime, libraries)"
PLUMBING = re.compile(r"^(runtime|internal|syscall|sync|io|bufio|net|strings|bytes|strconv|fmt|sort|slices|maps|unicode|context|time|errors|reflect|math|os)[./]")


def traces(binary, profile):
    out = subprocess.run(["go", "tool", "pprof", "-traces", binary, profile],
                         capture_output=True, text=True, check=True).stdout
    value, stack = None, []
    for line in out.splitlines():
        if line.startswith("-----------+"):
            if value is not None:
                yield value, stack
            value, stack = None, []
            continue
        m = re.match(r"^\s+([\d.]+)(ms|s|us|µs|ns)\s+(\S.*)$", line)
        if m and value is None and "Duration:" not in line:
            scale = {"s": 1000.0, "ms": 1.0, "us": 0.001, "µs": 0.001, "ns": 1e-6}[m.group(2)]
            value, stack = float(m.group(1)) * scale, [m.group(3).strip()]
        elif value is not None and line.strip():
            stack.append(line.strip())
    if value is not None:
        yield value, stack


def area(stack):
    # The transport's connection goroutines (persistConn) serve only the
    # webhook client under this load.
    if any("/internal/webhooks." in f or f.startswith("net/http.(*persistConn)") for f in stack):
        return "webhooks"
    if any(f.startswith("net/http.(*conn).serve") for f in stack):
        return "request"
    return "other"


def classify(stack):
    frames = list(stack)
    if any("jackc/pgx" in f for f in frames):
        if any(f.startswith("syscall.") for f in frames):
            frames.append("PGSYSCALL")
        elif any(f.startswith("crypto/tls.") for f in frames):
            frames.append("PGTLS")
    for name, pat in COMPONENTS:
        if any(pat.search(f) for f in frames):
            return name
    for f in stack:
        if f.startswith("net/http."):
            return HTTP_CLIENT if area(stack) == "webhooks" and "(*conn)" not in f else HTTP_SERVER
        if f.startswith("github.com/paymentsd/"):
            return OURS
        if not PLUMBING.match(f):
            return OTHER
    return OTHER


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary = sys.argv[1]
    total, alloc = 0.0, defaultdict(float)
    cells = defaultdict(lambda: defaultdict(float))
    for prof in sys.argv[2:]:
        for v, stack in traces(binary, prof):
            total += v
            a = area(stack)
            cells[classify(stack)][a] += v
            if any(f.startswith("runtime.mallocgc") for f in stack) and not any(GC.search(f) for f in stack):
                alloc[a] += v
    names = [n for n, _ in COMPONENTS] + [HTTP_SERVER, HTTP_CLIENT, OURS, OTHER]
    print(f"{'component':42s} {'share':>6s} {'request':>8s} {'webhooks':>8s} {'other':>7s}")
    for n in names:
        row = cells.get(n, {})
        s = sum(row.values())
        if s == 0:
            continue
        print(f"{n:42s} {100*s/total:5.1f}% " + " ".join(f"{100*row.get(a, 0)/total:7.1f}%" for a in ("request", "webhooks", "other")))
    areas = defaultdict(float)
    for row in cells.values():
        for a, v in row.items():
            areas[a] += v
    print(f"{'all':42s} 100.0% " + " ".join(f"{100*areas[a]/total:7.1f}%" for a in ("request", "webhooks", "other")))
    print(f"{'  of which allocation (mallocgc)':42s} {100*sum(alloc.values())/total:5.1f}% " + " ".join(f"{100*alloc[a]/total:7.1f}%" for a in ("request", "webhooks", "other")))
    print(f"samples: {total/1000:.2f} s of CPU")


if __name__ == "__main__":
    main()
