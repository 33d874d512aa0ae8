#!/usr/bin/env python3
"""`just soak SECONDS [SEED]`: a Jepsen-style run over the local cluster (tools/cluster).

Clients do what this service's clients do, through the balancer, and every operation is recorded in
a history: invoke, then ok (acknowledged), fail (a definite refusal) or info (no answer, a timeout,
a 503: it may or may not have happened). Faults come from a schedule the seed decides, each with its
start and end in the same history. Creates carry an Idempotency-Key, and an `info` create is retried
with the same key. At the end the checker reads the history and the final database:

  lost    an acknowledged create absent at the end                                 must be 0
  twice   a create that exists more than once (a retry that made a second record)  must be 0
  stuck   a job run still `running`, a guest event leased to nobody, at the end     must be 0
  500     answers with status 500                                                  must be 0
  p99     latency outside the fault windows                                        under 1 s

It writes target/soak/history.jsonl, summary.txt and timeline.svg. A failing run prints its seed;
the same seed injects the same schedule.
"""

import json
import random
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cluster"))
import cluster  # noqa: E402
from cluster import API_KEY, APP_NODES, CRON_SECRET, Net  # noqa: E402

OUT = cluster.ROOT / "target" / "soak"
CREATE_RETRIES = 6
JOBS = ["/cron/check-compliance", "/cron/report-reminder", "/cron/publish-scheduled-announcements",
        "/cron/prune-soft-deleted-contacts", "/cron/prune-idempotency-keys", "/cron/expire-coupons"]


class History:
    def __init__(self):
        self.lock = threading.Lock()
        self.ops = []
        self.started = time.monotonic()

    def now(self):
        return time.monotonic() - self.started

    def add(self, **op):
        with self.lock:
            op["index"] = len(self.ops)
            self.ops.append(op)
            return op


class Client:
    def __init__(self, state, history, process):
        self.state, self.history, self.process = state, history, process
        self.net = Net(state)
        self.token = cluster.token(state, user=f"user_soak_{process}")
        self.base = f"http://{self.net.address('lb')}:8080"

    def http(self, method, path, body=None, auth="user", key=None, timeout=10):
        headers = {"content-type": "application/json",
                   "Authorization": "Bearer " + {"user": self.token, "key": API_KEY, "cron": CRON_SECRET}[auth]}
        if key:
            headers["Idempotency-Key"] = key
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                status, raw = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        except Exception:
            status, raw = None, b""
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        return status, parsed, time.monotonic() - started

    def op(self, kind, method, path, body=None, auth="user", key=None, ok=(200, 201, 204)):
        """One operation, with its invoke and its completion in the history."""
        invoked = self.history.now()
        status, parsed, took = self.http(method, path, body, auth, key)
        if status in ok:
            outcome = "ok"
        elif status is None or status >= 500 or status in (409, 429):
            outcome = "info"  # no answer, a failure, or still in progress: it may have happened
        else:
            outcome = "fail"
        self.history.add(process=self.process, kind=kind, key=key, status=status, outcome=outcome, invoked=invoked,
                         completed=self.history.now(), latency=took,
                         id=parsed.get("id") if isinstance(parsed, dict) else None)
        return outcome, parsed

    def create(self, kind, path, body, auth="user"):
        """A create with an Idempotency-Key: an `info` outcome is retried with the same key."""
        key = str(uuid.uuid4())
        for attempt in range(CREATE_RETRIES):
            outcome, parsed = self.op(kind, "POST", path, body, auth=auth, key=key)
            if outcome != "info":
                return outcome, parsed, key
            time.sleep(min(0.2 * 2 ** attempt, 2))
        return "info", None, key


def worker(client, rng, stop, demo, created):
    location = demo["location_id"]
    own_incidents = []
    while not stop.is_set():
        choice = rng.random()
        marker = str(uuid.uuid4())
        if choice < 0.35:
            outcome, body, key = client.create("incident", "/api/incidents", {
                "locationId": location, "type": "Maintenance", "severity": "low", "notes": f"soak {marker}"})
            created.append(("incident", marker, outcome, key))
            if outcome == "ok":
                own_incidents.append(body["id"])
        elif choice < 0.5 and own_incidents:
            incident = rng.choice(own_incidents)
            outcome, _, key = client.create("comment", f"/api/incidents/{incident}/comments", {"content": f"soak {marker}"})
            created.append(("comment", marker, outcome, key))
        elif choice < 0.6 and own_incidents:
            status = rng.choice(["investigating", "deferred", "resolved", "reported"])
            client.op("status", "PATCH", f"/api/incidents/{rng.choice(own_incidents)}", {"status": status})
        elif choice < 0.72:
            outcome, body, key = client.create("contact", "/api/contacts", {"name": f"soak {marker}", "phone": "+15555550100"})
            created.append(("contact", marker, outcome, key))
            if outcome == "ok" and rng.random() < 0.3:
                client.op("contact-delete", "DELETE", f"/api/contacts/{body['id']}")
        elif choice < 0.8:
            rows = [{"locationId": location, "date": demo["week_of"], "block": "Lunch", "food": round(rng.uniform(1, 500), 2),
                     "beverage": 0, "other": 0, "guests": 1}]
            client.op("sales", "POST", "/api/analytics/sales", {"teamId": demo["team_id"], "rows": rows}, auth="key")
        else:
            client.op("report", "GET", f"/api/analytics/optimization?teamId={demo['team_id']}&weekOf={demo['week_of']}",
                      auth="key")
        time.sleep(rng.uniform(0.01, 0.05))


def cron(client, stop):
    """The scheduler, its periods compressed: every job every few seconds, on any instance."""
    while not stop.is_set():
        for job in JOBS:
            client.op("cron", "GET", job, auth="cron")
        stop.wait(3)


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


# A short guest-event lease, so a paused instance outlives it.
SOAK_ENV = {"GUEST_EVENT_LEASE_SECONDS": "5"}


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


# --- the checker -----------------------------------------------------------------------------------


def check(state, history, created):
    net = Net(state)
    cluster.wait_for("a leader after the run", lambda: cluster.leader(net) is not None, 90)
    sql = lambda q: cluster.psql(net, cluster.leader(net), q, database="opsd")
    tables = {"incident": ("incidents", "notes"), "comment": ("incident_comments", "content"), "contact": ("contacts", "name")}
    counts = {}
    for kind, (table, column) in tables.items():
        rows = sql(f"SELECT substring({column} from 'soak (.*)$'), count(*) FROM {table} WHERE {column} LIKE 'soak %' GROUP BY 1")
        counts[kind] = {line.split("|")[0]: int(line.split("|")[1]) for line in rows.splitlines() if "|" in line}
    lost, twice = [], []
    for kind, marker, outcome, key in created:
        present = counts[kind].get(marker, 0)
        if outcome == "ok" and present == 0:
            lost.append((kind, marker, key))
        if present > 1:
            twice.append((kind, marker, key, present))
    # Settle: runs still going when the load stopped finish, then nothing may be left running.
    time.sleep(5)
    stuck_runs = int(sql("SELECT count(*) FROM job_runs WHERE status = 'running' AND started_at < now() - interval '60 seconds'"))
    stuck_events = int(sql("SELECT count(*) FROM guest_events WHERE state = 'processing' AND available_at < now() - interval '60 seconds'"))
    ops = [op for op in history.ops if op["process"] != "nemesis"]
    five_hundreds = [op for op in ops if op["status"] == 500]
    windows = fault_windows(history)
    calm = sorted(op["latency"] for op in ops if not any(a - 1 <= op["invoked"] <= b + 10 for a, b in windows)
                  and op["status"] is not None)
    p99 = calm[int(0.99 * (len(calm) - 1))] if calm else 0.0
    return {"lost": lost, "twice": twice, "stuck_runs": stuck_runs, "stuck_events": stuck_events,
            "five_hundreds": five_hundreds, "p99_calm": p99, "calm_ops": len(calm)}


def fault_windows(history):
    starts, windows = {}, []
    for op in history.ops:
        if op["process"] == "nemesis":
            if op["phase"] == "start":
                starts[op["fault"]] = op["invoked"]
            else:
                windows.append((starts.pop(op["fault"]), op["invoked"]))
    return windows


def summary(history, result, seed, seconds):
    ops = [op for op in history.ops if op["process"] != "nemesis"]
    table = {}
    for op in ops:
        row = table.setdefault(op["kind"], {"ok": 0, "fail": 0, "info": 0})
        row[op["outcome"]] += 1
    lines = [f"soak: {seconds} s, seed {seed}, {len(ops)} operations, {len(fault_windows(history))} faults", "",
             f"{'operation':<16}{'ok':>8}{'fail':>8}{'info':>8}"]
    lines += [f"{kind:<16}{row['ok']:>8}{row['fail']:>8}{row['info']:>8}" for kind, row in sorted(table.items())]
    lines += ["", "faults:"]
    lines += [f"  {op['invoked']:6.1f} s  {op['description']}" for op in history.ops
              if op["process"] == "nemesis" and op["phase"] == "start"]
    checks = [
        ("lost (acknowledged creates absent)", len(result["lost"]), "0"),
        ("twice (creates that exist more than once)", len(result["twice"]), "0"),
        ("stuck job runs", result["stuck_runs"], "0"),
        ("stuck guest events", result["stuck_events"], "0"),
        ("answers 500", len(result["five_hundreds"]), "0"),
        (f"p99 outside the fault windows ({result['calm_ops']} operations)", f"{result['p99_calm'] * 1000:.0f} ms", "< 1000 ms"),
    ]
    lines += ["", f"{'check':<52}{'observed':>12}   goal"]
    lines += [f"{name:<52}{str(value):>12}   {goal}" for name, value, goal in checks]
    for name, items in (("lost", result["lost"]), ("twice", result["twice"]), ("500", result["five_hundreds"])):
        for item in items[:10]:
            lines.append(f"  {name}: {item}")
    return "\n".join(lines)


def held(result):
    return (not result["lost"] and not result["twice"] and result["stuck_runs"] == 0 and result["stuck_events"] == 0
            and not result["five_hundreds"] and result["p99_calm"] < 1.0)


def timeline(history, path):
    """Throughput, p99 latency and errors per second, fault windows shaded: an SVG."""
    ops = [op for op in history.ops if op["process"] != "nemesis"]
    end = int(max((op["completed"] for op in ops), default=1)) + 1
    per_second = [[] for _ in range(end)]
    for op in ops:
        per_second[int(op["completed"])].append(op)
    ok = [sum(1 for op in s if op["outcome"] == "ok") for s in per_second]
    errors = [sum(1 for op in s if op["outcome"] != "ok") for s in per_second]
    p99 = []
    for s in per_second:
        latencies = sorted(op["latency"] for op in s)
        p99.append(latencies[int(0.99 * (len(latencies) - 1))] * 1000 if latencies else 0)
    width, height, left, band = 1000, 420, 60, 110
    x = lambda t: left + (width - left - 20) * t / max(end, 1)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    for a, b in fault_windows(history):
        svg.append(f'<rect x="{x(a):.1f}" y="20" width="{max(x(b) - x(a), 1):.1f}" height="{3 * band}" fill="#f4c7c3" opacity="0.6"/>')
    for row, (name, series, colour) in enumerate((("ok / s", ok, "#1a7f37"), ("p99 ms", p99, "#0550ae"), ("errors / s", errors, "#cf222e"))):
        top, peak = 20 + row * band, max(series + [1])
        svg.append(f'<text x="4" y="{top + 14}">{name}</text><text x="4" y="{top + 28}" fill="#666">max {peak:.0f}</text>')
        svg.append(f'<line x1="{left}" y1="{top + band - 10}" x2="{width - 20}" y2="{top + band - 10}" stroke="#ccc"/>')
        points = " ".join(f"{x(t + 0.5):.1f},{top + band - 10 - (band - 20) * v / peak:.1f}" for t, v in enumerate(series))
        svg.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
    for t in range(0, end, max(end // 10, 1)):
        svg.append(f'<text x="{x(t):.1f}" y="{height - 40}" text-anchor="middle" fill="#666">{t} s</text>')
    svg.append(f'<text x="{left}" y="{height - 15}">shaded: fault windows (see summary.txt)</text></svg>')
    path.write_text("\n".join(svg))


def main():
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 180
    seed = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else random.randrange(1 << 31)
    binary = sys.argv[3] if len(sys.argv) > 3 else str(cluster.ROOT / "target" / "release" / "opsd")
    print(f"soak: {seconds} s, seed {seed} (rerun: just soak {seconds} {seed})", flush=True)
    cluster.signal.signal(cluster.signal.SIGTERM, lambda *_: sys.exit(143))
    OUT.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    schedule = fault_schedule(rng, seconds)
    ok = False
    try:
        state = cluster.up(binary, extra_env=SOAK_ENV)
        history, created, stop = History(), [], threading.Event()
        clients = [Client(state, history, n) for n in range(6)]
        threads = [threading.Thread(target=worker, args=(c, random.Random(seed + n), stop, state["demo"], created), daemon=True)
                   for n, c in enumerate(clients)]
        threads.append(threading.Thread(target=cron, args=(Client(state, history, "cron"), stop), daemon=True))
        chaos = threading.Thread(target=nemesis, args=(state, history, schedule, stop), daemon=True)
        for thread in threads + [chaos]:
            thread.start()
        time.sleep(seconds)
        stop.set()
        chaos.join(60)
        for thread in threads:
            thread.join(60)
        result = check(state, history, created)
        text = summary(history, result, seed, seconds)
        (OUT / "history.jsonl").write_text("\n".join(json.dumps(op) for op in history.ops))
        (OUT / "summary.txt").write_text(text + "\n")
        timeline(history, OUT / "timeline.svg")
        print(text, flush=True)
        ok = held(result)
        print(f"soak {'held' if ok else 'FAILED'} (seed {seed}); history, summary and timeline in {OUT}", flush=True)
    finally:
        cluster.down()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
