#!/usr/bin/env python3
"""`just bench-roster`: opsd's rostering engine on the Shift Scheduling Benchmark.

Runs `opsd roster solve --json` on instances 1 to 4 of ../shared/research/rostering/ and on every
FILE[=BEST] given, each with the same time limit and threads, checks that each answer kept the limit
(at most a second over) and prints one row per instance: objective, lower bound, the gap to the best
known value, the proven gap, and when the best roster was found.

--disguise also runs each instance disguised as a check does it (names, line order, comments; the
optimum is unchanged). --referee runs a reweighted copy of each instance (no published answer
applies) through opsd and through CP-SAT (tools/bench-roster/cpsat.py, PyPI ortools in .venv) with the
same time and threads, and prints both objectives. --largest also runs a synthetic instance of the
benchmark's largest size (Instance24's: 364 days, 150 employees, 32 shift types; synthetic.py), where
no optimum is known: it checks that the run keeps its limit, and its peak memory is in its row.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent

# Proven optima from ../shared/research/rostering.md.
KNOWN = {"Instance1.txt": 607, "Instance2.txt": 828, "Instance3.txt": 1001, "Instance4.txt": 1716}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("opsd", help="the opsd binary")
    parser.add_argument("instances", nargs="*", help="more instances, as FILE or FILE=BEST_KNOWN")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--research", default=str(HERE.parents[2] / "shared/research/rostering"))
    parser.add_argument("--disguise", action="store_true", help="also solve a disguised copy of each instance")
    parser.add_argument("--referee", action="store_true", help="reweighted copies, opsd against CP-SAT")
    parser.add_argument("--seed", type=int, default=20261128, help="the disguises' seed")
    parser.add_argument("--largest", action="store_true", help="also a synthetic instance of Instance24's size")
    args = parser.parse_args()
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="bench-roster-"))

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

    if args.disguise:
        runs += [(disguised(path, scratch, args.seed, False), best) for path, best in list(runs)]
    if args.largest:
        largest = scratch / "synthetic-24.txt"
        subprocess.run([sys.executable, str(HERE / "synthetic.py"), str(largest)], check=True)
        runs.append((largest, None))

    print(f"{'instance':<16} {'objective':>9} {'bound':>9} {'best known':>10} {'over best':>9} {'proven gap':>10} {'best at':>8} {'took':>6} {'peak MB':>7}  status")
    failed = False
    for path, best in runs:
        answer, took, peak = solve(args, path)
        if answer is None:
            failed = True
            continue
        objective, bound = answer["objective"], answer["lowerBound"]
        over = f"{100 * (objective - best) / best:+.1f} %" if objective is not None and best else "-"
        gap = f"{100 * answer['gap']:.1f} %" if answer["gap"] is not None else "-"
        at = f"{answer['secondsToBest']:.1f} s" if answer["secondsToBest"] is not None else "-"
        print(f"{path.name:<16} {objective if objective is not None else '-':>9} {bound:>9} {best or '-':>10} {over:>9} {gap:>10} {at:>8} {took:>5.1f}s {peak:>7.0f}  {answer['status']}")
        if took > args.seconds + 1.0:
            print(f"{path.name}: took {took:.1f} s, over the {args.seconds} s limit", file=sys.stderr)
            failed = True
    if args.referee:
        failed |= referee(args, [path for path, _ in runs if "disguised" not in path.name], scratch)
    return 1 if failed else 0


def solve(args, path):
    """opsd's JSON answer (None, printed, when it failed), the wall time and the peak resident MB."""
    command = [args.opsd, "roster", "solve", str(path), "--time-limit", str(args.seconds),
               "--threads", str(args.threads), "--json"]
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        child = subprocess.Popen(command, stdout=stdout, stderr=stderr, text=True)
        # wait4, not wait: the child's own resource usage, its peak memory among it.
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        took = time.monotonic() - started
        stdout.seek(0)
        stderr.seek(0)
        out, err = stdout.read(), stderr.read()
    peak = usage.ru_maxrss / 1024
    if child.returncode not in (0, 3):
        print(f"{path.name:<16} failed with exit {child.returncode}: {err.strip()[-300:]}")
        return None, took, peak
    return json.loads(out), took, peak


def disguised(path, scratch, seed, reweight):
    target = scratch / f"{path.stem}-{'reweighted' if reweight else 'disguised'}.txt"
    command = [sys.executable, str(HERE / "disguise.py"), str(path), str(target), "--seed", str(seed)]
    subprocess.run(command + (["--reweight"] if reweight else []), check=True)
    return target


def referee(args, paths, scratch):
    """Reweighted copies: opsd's objective against CP-SAT's with the same time and threads."""
    python = HERE / ".venv/bin/python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(HERE / ".venv")], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "ortools==9.15.6755"], check=True)
    print(f"\n{'reweighted copy':<28} {'opsd':>9} {'bound':>9} {'CP-SAT':>9} {'its bound':>9}  opsd no worse")
    failed = False
    for path in paths:
        copy = disguised(path, scratch, args.seed, True)
        answer, _, _ = solve(args, copy)
        done = subprocess.run([str(python), str(HERE / "cpsat.py"), str(copy), "--seconds", str(args.seconds),
                               "--threads", str(args.threads)], capture_output=True, text=True, check=True)
        cpsat = json.loads(done.stdout)
        ours = answer["objective"] if answer else None
        theirs = cpsat["objective"]
        no_worse = ours is not None and (theirs is None or ours <= theirs)
        failed |= not no_worse
        print(f"{copy.name:<28} {ours if ours is not None else '-':>9} {answer['lowerBound'] if answer else '-':>9} "
              f"{theirs if theirs is not None else '-':>9} {cpsat['lowerBound'] if cpsat['lowerBound'] is not None else '-':>9}  "
              f"{'yes' if no_worse else 'NO'}")
    return failed


if __name__ == "__main__":
    sys.exit(main())
