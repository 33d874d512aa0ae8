#!/usr/bin/env python3
"""`just soak SECONDS [SEED]`: a Jepsen-style run over the local cluster (tools/cluster).

Clients do what this service's clients and producers do, through the balancer (workload.py), and
every operation is recorded in a history with its outcome. Faults come from a schedule the seed
decides, each with its start and end in the same history. At the end the checker (checker.py)
reads the history, the final database and the fakes' logs: lost 0, twice 0, stuck 0, no 500, p99
outside the faults under 1 s. It writes target/soak/history.jsonl, summary.txt and timeline.svg. A
failing run prints its seed; the same seed injects the same schedule.
"""

import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cluster"))
import cluster  # noqa: E402
from cluster import APP_NODES, Net  # noqa: E402

import checker  # noqa: E402
import workload  # noqa: E402

OUT = cluster.ROOT / "target" / "soak"


# --- faults ---------------------------------------------------------------------------------------

def fault_schedule(rng, seconds):
    kinds = ["kill-opsd", "pause-opsd", "cut-opsd-from-db", "kill-leader", "cut-leader", "restart-pgbouncer", "skew-clock"]
    schedule, at = [], 10.0
    while at < seconds - 25:
        kind = rng.choice(kinds)
        schedule.append({"kind": kind, "at": at, "duration": rng.uniform(5, 12), "node": rng.choice(APP_NODES)})
        at += schedule[-1]["duration"] + rng.uniform(15, 30)
    return schedule


def inject(state, fault):
    net, kind, node = Net(state), fault["kind"], fault["node"]
    if kind == "kill-opsd":
        cluster.stop(state, f"opsd-{node}", cluster.signal.SIGKILL)
        return f"kill -9 opsd on {node}"
    if kind == "pause-opsd":
        cluster.os.killpg(state["pids"][f"opsd-{node}"], cluster.signal.SIGSTOP)
        return f"SIGSTOP opsd on {node} (past the guest-event lease of 5 s)"
    if kind == "cut-opsd-from-db":
        cluster.cut_from(net, node, "lb")
        return f"{node}'s packets to the database host dropped (nftables)"
    if kind == "kill-leader":
        fault["node"] = cluster.leader(net)
        cluster.kill_host(net, fault["node"])
        return f"every process on the leader's host {fault['node']} killed"
    if kind == "cut-leader":
        fault["node"] = cluster.leader(net)
        cluster.cut_off(net, fault["node"])
        return f"the leader's host {fault['node']} cut off (nftables)"
    if kind == "restart-pgbouncer":
        cluster.stop(state, "pgbouncer", cluster.signal.SIGKILL)
        return "PgBouncer killed (restarted at the window's end)"
    if kind == "skew-clock":
        cluster.stop(state, f"opsd-{node}", cluster.signal.SIGTERM)
        time.sleep(1)
        offset = "+90s" if fault["duration"] > 8 else "-90s"
        cluster.start_opsd(state, net, node, wrapper=("faketime", "-f", offset))
        return f"opsd on {node} restarted with its clock {offset} (faketime)"
    raise ValueError(kind)


def heal(state, fault):
    net, kind, node = Net(state), fault["kind"], fault["node"]
    if kind in ("kill-opsd", "skew-clock"):
        cluster.stop(state, f"opsd-{node}", cluster.signal.SIGKILL)
        cluster.start_opsd(state, net, node)
    elif kind == "pause-opsd":
        cluster.os.killpg(state["pids"][f"opsd-{node}"], cluster.signal.SIGCONT)
    elif kind == "cut-opsd-from-db":
        cluster.reconnect(net, node)
    elif kind == "kill-leader":
        cluster.start_patroni(state, net, node)
    elif kind == "cut-leader":
        cluster.reconnect(net, node)
    elif kind == "restart-pgbouncer":
        cluster.start_pgbouncer(state, net)


def nemesis(state, history, schedule, stop):
    for fault in schedule:
        if stop.wait(max(0, fault["at"] - history.now())):
            return
        started = history.now()
        description = inject(state, fault)
        history.add(process="nemesis", kind="fault", outcome="info", invoked=started, completed=history.now(),
                    fault=fault["kind"], description=description, phase="start")
        print(f"  {started:6.1f} s  fault: {description}", flush=True)
        stop.wait(fault["duration"])
        heal(state, fault)
        history.add(process="nemesis", kind="fault", outcome="info", invoked=history.now(), completed=history.now(),
                    fault=fault["kind"], description=description, phase="end")
        print(f"  {history.now():6.1f} s  healed: {fault['kind']}", flush=True)


def run(seconds, seed, binaries, opsd_binary, chaos, title):
    """The workload over a cluster started on `opsd_binary`, `chaos(state, history, stop)` beside it,
    then the checker; answers whether the run held."""
    cluster.signal.signal(cluster.signal.SIGTERM, lambda *_: sys.exit(143))
    OUT.mkdir(parents=True, exist_ok=True)
    fakes = str(binaries / "opsd-soak-fakes")
    keys = json.loads(subprocess.run([fakes, "keys", "2"], check=True, capture_output=True, text=True).stdout)
    try:
        state = cluster.up(str(opsd_binary), extra_env=workload.environment(keys))
        keys_file = cluster.HOME / "fake-keys.json"
        keys_file.write_text(json.dumps(keys))
        workload.start_fakes(state, fakes, keys_file)
        history, expected, stop = workload.History(), workload.Expected(), threading.Event()
        team = workload.setup(state, history, keys)
        workers = [workload.Worker(workload.Client(state, history, n), random.Random(seed + n), state["demo"], team, expected)
                   for n in range(6)]
        threads = [threading.Thread(target=w.run, args=(stop,), daemon=True) for w in workers]
        threads.append(threading.Thread(target=workload.cron, args=(workload.Client(state, history, "cron"), stop), daemon=True))
        nemesis_thread = threading.Thread(target=chaos, args=(state, history, stop), daemon=True)
        for thread in threads + [nemesis_thread]:
            thread.start()
        time.sleep(seconds)
        stop.set()
        nemesis_thread.join(120)
        for thread in threads:
            thread.join(60)
        result = checker.check(state, history, expected, team, workload.Client(state, history, "settle"))
        text = checker.summary(history, result, seed, seconds)
        (OUT / "history.jsonl").write_text("\n".join(json.dumps(op) for op in history.ops))
        (OUT / "summary.txt").write_text(text + "\n")
        checker.timeline(history, OUT / "timeline.svg")
        print(text, flush=True)
        ok = checker.held(result) and not getattr(chaos, "failed", False)
        print(f"{title} {'held' if ok else 'FAILED'} (seed {seed}); history, summary and timeline in {OUT}", flush=True)
        return ok
    finally:
        cluster.down()


def main():
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 180
    seed = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else random.randrange(1 << 31)
    binaries = Path(sys.argv[3]).resolve().parent if len(sys.argv) > 3 else cluster.ROOT / "target" / "release"
    print(f"soak: {seconds} s, seed {seed} (rerun: just soak {seconds} {seed})", flush=True)
    schedule = fault_schedule(random.Random(seed), seconds)
    chaos = lambda state, history, stop: nemesis(state, history, schedule, stop)  # noqa: E731
    sys.exit(0 if run(seconds, seed, binaries, binaries / "opsd", chaos, "soak") else 1)


if __name__ == "__main__":
    main()
