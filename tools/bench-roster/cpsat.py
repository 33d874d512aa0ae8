#!/usr/bin/env python3
"""The independent referee: Google's CP-SAT (PyPI `ortools`) on a Shift Scheduling Benchmark file,
written from the benchmark's rules alone (no code shared with opsd). Prints one JSON object:
{"objective": ..., "lowerBound": ..., "status": ...}.

    cpsat.py FILE --seconds 60 --threads 2
"""
import argparse
import json
import sys

from benchmark_format import read_sections

from ortools.sat.python import cp_model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    s = read_sections(open(args.file).read())
    horizon = int(s["SECTION_HORIZON"][0][0])
    shifts = {row[0]: (int(row[1]), [f for f in row[2].split("|") if f]) for row in s["SECTION_SHIFTS"]}
    staff = [row for row in s["SECTION_STAFF"]]
    days_off = {row[0]: {int(d) for d in row[1:] if d} for row in s["SECTION_DAYS_OFF"]}

    m = cp_model.CpModel()
    x = {(e[0], d, t): m.NewBoolVar(f"x{e[0]}_{d}_{t}") for e in staff for d in range(horizon) for t in shifts}
    work = {}
    for e in staff:
        name = e[0]
        limits = dict(pair.split("=") for pair in e[1].split("|") if pair)
        max_min, min_min, max_cons, min_cons, min_off, max_we = map(int, e[2:8])
        for d in range(horizon):
            w = m.NewBoolVar(f"w{name}_{d}")
            m.Add(sum(x[name, d, t] for t in shifts) == w)
            work[name, d] = w
            if d in days_off.get(name, ()):
                m.Add(w == 0)
        for t, (length, followers) in shifts.items():
            if t in limits:
                m.Add(sum(x[name, d, t] for d in range(horizon)) <= int(limits[t]))
            for d in range(horizon - 1):
                for f in followers:
                    m.AddBoolOr([x[name, d, t].Not(), x[name, d + 1, f].Not()])
        minutes = sum(length * x[name, d, t] for d in range(horizon) for t, (length, _) in shifts.items())
        m.Add(minutes <= max_min)
        m.Add(minutes >= min_min)
        for start in range(horizon - max_cons):
            m.Add(sum(work[name, d] for d in range(start, start + max_cons + 1)) <= max_cons)
        # No short run that starts after day 0 and ends before the last day.
        for length in range(1, min_cons):
            for start in range(1, horizon - length):
                m.AddBoolOr([work[name, start - 1]] + [work[name, d].Not() for d in range(start, start + length)]
                            + [work[name, start + length]])
        for length in range(1, min_off):
            for start in range(1, horizon - length):
                m.AddBoolOr([work[name, start - 1].Not()] + [work[name, d] for d in range(start, start + length)]
                            + [work[name, start + length].Not()])
        weekends = []
        for k in range((horizon + 6) // 7):
            days = [d for d in (7 * k + 5, 7 * k + 6) if d < horizon]
            if days:
                we = m.NewBoolVar(f"we{name}_{k}")
                m.AddMaxEquality(we, [work[name, d] for d in days])
                weekends.append(we)
        m.Add(sum(weekends) <= max_we)

    terms = []
    for employee, day, shift, weight in s["SECTION_SHIFT_ON_REQUESTS"]:
        terms.append(int(weight) * (1 - x[employee, int(day), shift]))
    for employee, day, shift, weight in s["SECTION_SHIFT_OFF_REQUESTS"]:
        terms.append(int(weight) * x[employee, int(day), shift])
    for day, shift, requirement, under, over in s["SECTION_COVER"]:
        staffed = sum(x[e[0], int(day), shift] for e in staff)
        short = m.NewIntVar(0, len(staff), f"u{day}{shift}")
        extra = m.NewIntVar(0, len(staff), f"o{day}{shift}")
        m.Add(staffed - int(requirement) == extra - short)
        terms.append(int(under) * short + int(over) * extra)
    m.Minimize(sum(terms))

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = args.seconds
    solver.parameters.num_workers = args.threads
    status = solver.Solve(m)
    found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    print(json.dumps({
        "objective": int(solver.ObjectiveValue()) if found else None,
        "lowerBound": int(solver.BestObjectiveBound() + 0.999999) if found else None,
        "status": {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible",
                   cp_model.INFEASIBLE: "infeasible"}.get(status, "unknown"),
        "seconds": round(solver.WallTime(), 3),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
