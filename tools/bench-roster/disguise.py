#!/usr/bin/env python3
"""Writes a disguised copy of a Shift Scheduling Benchmark instance, as a check of the engine does:
employees and shift types renamed, the lines of each section shuffled, comments added. The optimum
is unchanged. With --reweight, every request and cover weight is also redrawn (so no published
answer applies), and the copy must be judged against another solver given the same problem.

    disguise.py IN OUT --seed N [--reweight]
"""
import argparse
import random
import sys

from benchmark_format import read_sections

SECTIONS = ["SECTION_HORIZON", "SECTION_SHIFTS", "SECTION_STAFF", "SECTION_DAYS_OFF",
            "SECTION_SHIFT_ON_REQUESTS", "SECTION_SHIFT_OFF_REQUESTS", "SECTION_COVER"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source")
    parser.add_argument("target")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--reweight", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    sections = read_sections(open(args.source).read())

    shifts = [row[0] for row in sections["SECTION_SHIFTS"]]
    staff = [row[0] for row in sections["SECTION_STAFF"]]
    shift_names = dict(zip(shifts, rng.sample([f"S{n:02d}{chr(97 + n % 26)}" for n in range(100)], len(shifts))))
    staff_names = dict(zip(staff, rng.sample([f"emp-{n:04d}" for n in range(10000)], len(staff))))

    def weight(value):
        return str(rng.randint(1, 5)) if args.reweight else value

    out = {name: [] for name in SECTIONS}
    out["SECTION_HORIZON"] = sections["SECTION_HORIZON"]
    for shift, length, followers in sections["SECTION_SHIFTS"]:
        renamed = "|".join(shift_names[f] for f in followers.split("|") if f)
        out["SECTION_SHIFTS"].append([shift_names[shift], length, renamed])
    for row in sections["SECTION_STAFF"]:
        limits = "|".join(f"{shift_names[k]}={v}" for k, v in (pair.split("=") for pair in row[1].split("|") if pair))
        out["SECTION_STAFF"].append([staff_names[row[0]], limits] + row[2:])
    for row in sections["SECTION_DAYS_OFF"]:
        out["SECTION_DAYS_OFF"].append([staff_names[row[0]]] + row[1:])
    for name in ("SECTION_SHIFT_ON_REQUESTS", "SECTION_SHIFT_OFF_REQUESTS"):
        for employee, day, shift, w in sections[name]:
            out[name].append([staff_names[employee], day, shift_names[shift], weight(w)])
    for day, shift, requirement, under, over in sections["SECTION_COVER"]:
        under = str(rng.choice([50, 80, 100, 120, 150])) if args.reweight else under
        over = str(rng.randint(1, 3)) if args.reweight else over
        out["SECTION_COVER"].append([day, shift_names[shift], requirement, under, over])

    # Shifts are reordered too: a may-not-follow list may name a shift declared later.
    with open(args.target, "w") as target:
        target.write(f"# disguised copy, seed {args.seed}{', reweighted' if args.reweight else ''}\n")
        for name in SECTIONS:
            rows = out[name]
            if name != "SECTION_HORIZON":
                rng.shuffle(rows)
            target.write(f"\n# {rng.random():.6f}\n{name}\n")
            for index, row in enumerate(rows):
                if index % 7 == 3:
                    target.write("# a comment among the data\n")
                target.write(",".join(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
