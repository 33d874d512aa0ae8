#!/usr/bin/env python3
"""`just bench-roster`: opsd's rostering engine on the Shift Scheduling Benchmark.

Runs `opsd roster solve --json` on instances 1 to 4 of ../shared/research/rostering/ and on every
FILE[=BEST] given, each with the same time limit and threads, checks that each answer kept the limit
(at most a second over) and prints one row per instance: objective, lower bound, the gap to the best
known value, the proven gap, and when the best roster was found.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import time

# Proven optima from ../shared/research/rostering.md.
KNOWN = {"Instance1.txt": 607, "Instance2.txt": 828, "Instance3.txt": 1001, "Instance4.txt": 1716}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("opsd", help="the opsd binary")
    parser.add_argument("instances", nargs="*", help="more instances, as FILE or FILE=BEST_KNOWN")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--research", default=str(pathlib.Path(__file__).resolve().parents[3] / "shared/research/rostering"))
    args = parser.parse_args()

    runs = []
    research = pathlib.Path(args.research)
    for name, best in KNOWN.items():
        if (research / name).exists():
            runs.append((research / name, best))
        else:
            print(f"bench-roster: {research / name} is not there; skipped", file=sys.stderr)
    for spec in args.instances:
        path, _, best = spec.partition("=")
        runs.append((pathlib.Path(path), int(best) if best else None))

    print(f"{'instance':<16} {'objective':>9} {'bound':>9} {'best known':>10} {'over best':>9} {'proven gap':>10} {'best at':>8} {'took':>6}  status")
    failed = False
    for path, best in runs:
        started = time.monotonic()
        done = subprocess.run(
            [args.opsd, "roster", "solve", str(path), "--time-limit", str(args.seconds), "--threads", str(args.threads), "--json"],
            capture_output=True, text=True)
        took = time.monotonic() - started
        if done.returncode not in (0, 3):
            print(f"{path.name:<16} failed with exit {done.returncode}: {done.stderr.strip()[-300:]}")
            failed = True
            continue
        answer = json.loads(done.stdout)
        objective, bound = answer["objective"], answer["lowerBound"]
        over = f"{100 * (objective - best) / best:+.1f} %" if objective is not None and best else "-"
        gap = f"{100 * answer['gap']:.1f} %" if answer["gap"] is not None else "-"
        at = f"{answer['secondsToBest']:.1f} s" if answer["secondsToBest"] is not None else "-"
        print(f"{path.name:<16} {objective if objective is not None else '-':>9} {bound:>9} {best or '-':>10} {over:>9} {gap:>10} {at:>8} {took:>5.1f}s  {answer['status']}")
        if took > args.seconds + 1.0:
            print(f"{path.name}: took {took:.1f} s, over the {args.seconds} s limit", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
