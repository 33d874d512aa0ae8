#!/usr/bin/env python3
"""Writes a synthetic instance of the benchmark's size at its largest (Instance24: 364 days, 150
employees, 32 shift types) in its text format, for checking that the engine ends within its limit
with bounded memory on an instance that size. Not a benchmark: no optimum is known.

    synthetic.py OUT [--days 364] [--staff 150] [--shifts 32] [--seed 1]
"""
import argparse
import random
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("target")
    parser.add_argument("--days", type=int, default=364)
    parser.add_argument("--staff", type=int, default=150)
    parser.add_argument("--shifts", type=int, default=32)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    days, weeks = args.days, args.days // 7
    # Shift k starts at 6:00 + 30 min × k and lasts 6 to 10 hours; one that ends late may not be
    # followed by one that starts early.
    shifts = [(f"T{k}", 360 + 60 * rng.randint(0, 4), 360 + 30 * k) for k in range(args.shifts)]
    lines = ["SECTION_HORIZON", str(days), "", "SECTION_SHIFTS"]
    for name, length, start in shifts:
        end = start + length
        early = [other for other, _, other_start in shifts if other_start + 24 * 60 - end < 11 * 60]
        lines.append(f"{name},{length},{'|'.join(early)}")
    lines += ["", "SECTION_STAFF"]
    staff = [f"E{n}" for n in range(args.staff)]
    for name in staff:
        limits = "|".join(f"{shift}={rng.randint(days // 8, days)}" for shift, _, _ in shifts if rng.random() < 0.3)
        max_minutes = days * 5 // 7 * 480
        lines.append(f"{name},{limits},{max_minutes},{max_minutes // 3},5,2,2,{int(weeks * 0.6)}")
    lines += ["", "SECTION_DAYS_OFF"]
    for name in staff:
        lines.append(",".join([name] + [str(day) for day in sorted(rng.sample(range(days), days // 20))]))
    for section in ("SECTION_SHIFT_ON_REQUESTS", "SECTION_SHIFT_OFF_REQUESTS"):
        lines += ["", section]
        for name in staff:
            for day in sorted(rng.sample(range(days), days // 8)):
                lines.append(f"{name},{day},{rng.choice(shifts)[0]},{rng.randint(1, 3)}")
    lines += ["", "SECTION_COVER"]
    for day in range(days):
        for shift, _, _ in shifts:
            lines.append(f"{day},{shift},{rng.randint(0, 4)},100,1")
    with open(args.target, "w") as target:
        target.write("# synthetic, for size only\n" + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
