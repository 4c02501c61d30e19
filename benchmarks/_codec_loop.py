"""``python -m benchmarks._codec_loop N``: decode + validate + encode the seed example
N times, after 50 untimed round trips. Run under ``valgrind --tool=cachegrind`` twice
(N and 0), the difference over N is the instructions one round trip executes: a count
that, unlike time on a shared machine, comes out the same run after run."""

from __future__ import annotations

import sys
from pathlib import Path

from rdq_compliance import decode, encode, validate

TEXT = (Path(__file__).resolve().parent.parent / "fixtures" / "v1" / "valid"
        / "seed-example.json").read_text("utf-8")


def main(n: int) -> None:
    for _ in range(50 + n):
        env = decode(TEXT)
        validate(env)
        encode(env)


if __name__ == "__main__":
    main(int(sys.argv[1]))
