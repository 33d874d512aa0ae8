"""The soak's checker: reads the history, the clients' expectations, the final database and the
fakes' logs, and names every anomaly with the operations that show it.

  lost    an acknowledged create absent at the end, an acknowledged producer event not stored,
          an announcement published but not pushed to a member's device, a user's name not the
          newest acknowledged webhook's                                                   must be 0
  twice   a create that exists twice, a push or chat message delivered twice, more low-rating
          alerts delivered than feedback alerted, an offer whose held count is not its active
          reservations (a reservation released twice or never)                           must be 0
  stuck   a job run still `running`, a guest event not processed, at the end             must be 0
  500     answers with status 500                                                         must be 0
  p99     latency outside the fault windows                                               under 1 s
"""

import json
import time
from collections import Counter

import cluster
from cluster import Net

# Creates checked by a marker in one column, and the table that holds them.
MARKED = {"incident": ("incidents", "notes"), "comment": ("incident_comments", "content"),
          "contact": ("contacts", "name"), "announcement": ("announcements", "title")}
BY_ID = {"shift-report": "shift_reports", "manager-report": "manager_reports"}


class Database:
    def __init__(self, state):
        self.net = Net(state)
        cluster.wait_for("a leader after the run", lambda: cluster.leader(self.net) is not None, 90)

    def sql(self, query):
        return cluster.psql(self.net, cluster.leader(self.net), query, database="opsd")

    def rows(self, query):
        return [line.split("|") for line in self.sql(query).splitlines() if line]

    def number(self, query):
        return int(self.sql(query) or 0)


def settle(db, client):
    """The load has stopped: let the queue drain, due announcements publish and their pushes leave
    the outbox, then look. A push claimed by an instance that lost the database during a fault is
    sent again only after its lease (60 s), so the wait covers one lease and more."""
    for _ in range(90):
        client.op("settle", "GET", "/cron/publish-scheduled-announcements", auth="cron")
        waiting = db.number("SELECT count(*) FROM guest_events WHERE state IN ('queued', 'processing')")
        unpublished = db.number("SELECT count(*) FROM announcements WHERE published_at IS NULL AND publish_at < now()")
        unsent = db.number("SELECT count(*) FROM announcement_pushes WHERE state = 'pending'")
        if waiting == 0 and unpublished == 0 and unsent == 0:
            break
        time.sleep(1)
    time.sleep(3)  # the last run's pushes reach the fakes' logs


def deliveries(nodes):
    log = []
    for node in nodes:
        path = cluster.HOME / f"fakes-{node}.jsonl"
        if path.exists():
            log += [json.loads(line) for line in path.read_text().splitlines() if line]
    return log


def marked(db, kind):
    table, column = MARKED[kind]
    rows = db.rows(f"SELECT substring({column} from 'soak (.*)$'), count(*) FROM {table} WHERE {column} LIKE 'soak %' GROUP BY 1")
    return {marker: int(count) for marker, count in rows}


def check(state, history, expected, team, client):
    db = Database(state)
    settle(db, client)
    lost, twice = [], []
    # Creates with a marker: present when acknowledged, never twice.
    for kind in MARKED:
        present = marked(db, kind)
        for item in expected.of(kind):
            count = present.get(item["marker"], 0)
            if item["outcome"] == "ok" and count == 0:
                lost.append((kind, item["marker"], item["key"]))
            if count > 1:
                twice.append((kind, item["marker"], item["key"], count))
    for kind, table in BY_ID.items():
        ids = {row[0] for row in db.rows(f"SELECT id FROM {table}")}
        lost += [(kind, item["id"], item["key"]) for item in expected.of(kind) if item["outcome"] == "ok" and item["id"] not in ids]
    # The producers' acknowledged events are stored, and processed.
    events = dict(db.rows("SELECT identity, state FROM guest_events"))
    for kind in ("reservation", "redemption", "feedback"):
        lost += [(kind, item["event"]) for item in expected.of(kind) if item["outcome"] == "ok" and item["event"] not in events]
    stuck_events = [(identity, s) for identity, s in events.items() if s in ("queued", "processing")]
    # Each user's name is the newest acknowledged rename's, or a newer one that may have happened.
    names = dict(db.rows("SELECT id, first_name FROM users WHERE id LIKE 'user_soak_%'"))
    for user in {item["user"] for item in expected.of("rename")}:
        renames = sorted((i for i in expected.of("rename") if i["user"] == user), key=lambda i: i["stamp"])
        acknowledged = [i for i in renames if i["outcome"] == "ok"]
        newest = acknowledged[-1]["stamp"] if acknowledged else 0
        allowed = {i["name"] for i in renames if i["stamp"] >= newest and i["outcome"] != "fail"}
        if allowed and names.get(user) not in allowed:
            lost.append(("rename", user, names.get(user), sorted(allowed)[:3]))
    # What the fakes were sent.
    log = deliveries(cluster.APP_NODES)
    pushes = [d for d in log if d["service"] == "push"]
    refused = [d for d in log if d["service"] == "refused"]
    titles = Counter((d["endpoint"], d["payload"].get("title", "")) for d in pushes)
    twice += [("push", endpoint, title, count) for (endpoint, title), count in titles.items()
              if title.startswith("soak ") and count > 1]
    member, admin = team["devices"]["user_soak_member"], team["devices"]["user_soak_admin"]
    for item in expected.of("push"):
        if item["outcome"] == "ok" and titles[(member, f"soak {item['marker']}")] == 0:
            lost.append(("push", item["marker"], item["key"]))
    published = [row[0] for row in db.rows("SELECT substring(title from 'soak (.*)$') FROM announcements "
                                           "WHERE title LIKE 'soak %' AND published_at IS NOT NULL")]
    for marker in published:
        for device in (member, admin):
            if titles[(device, f"soak {marker}")] == 0:
                lost.append(("announcement push", marker, device))
    alerts = sum(1 for d in pushes if d["endpoint"] == admin and d["payload"].get("title") == "Low guest rating")
    alerted = db.number("SELECT count(*) FROM guest_alerts")
    if alerts > alerted:
        twice.append(("low-rating alert", f"{alerts} delivered", f"{alerted} feedbacks alerted"))
    chats = Counter(json.dumps(d["payload"], sort_keys=True) for d in log if d["service"] == "chat")
    twice += [("chat", text[:120], count) for text, count in chats.items() if count > 1]
    for offer, held, active in db.rows(
            "SELECT o.id, o.held, (SELECT count(*) FROM coupon_reservations r WHERE r.offer_id = o.id AND r.state = 'active') "
            "FROM coupon_offers o"):
        if int(held) != int(active):
            twice.append(("coupon capacity", offer, f"held {held}", f"active {active}"))
    subscribed = {row[0] for row in db.rows("SELECT user_id FROM push_subscriptions")}
    lost += [("subscription", user) for user in team["devices"] if user not in subscribed]
    stuck_runs = db.number("SELECT count(*) FROM job_runs WHERE status = 'running' AND started_at < now() - interval '60 seconds'")
    ops = [op for op in history.ops if op["process"] not in ("nemesis", "settle")]
    windows = fault_windows(history)
    calm = sorted(op["latency"] for op in ops if not any(a - 1 <= op["invoked"] <= b + 10 for a, b in windows)
                  and op["status"] is not None)
    return {"lost": lost, "twice": twice, "stuck_runs": stuck_runs, "stuck_events": stuck_events,
            "five_hundreds": [op for op in ops if op["status"] == 500], "refused": refused,
            "p99_calm": calm[int(0.99 * (len(calm) - 1))] if calm else 0.0, "calm_ops": len(calm),
            "delivered": {"push": len(pushes), "chat": sum(chats.values()), "alerts": alerts}}


def fault_windows(history):
    starts, windows = {}, []
    for op in history.ops:
        if op["process"] == "nemesis":
            if op["phase"] == "start":
                starts[op["fault"]] = op["invoked"]
            else:
                windows.append((starts.pop(op["fault"]), op["invoked"]))
    return windows


def held(result):
    return (not result["lost"] and not result["twice"] and result["stuck_runs"] == 0 and not result["stuck_events"]
            and not result["five_hundreds"] and not result["refused"] and result["p99_calm"] < 1.0)


def summary(history, result, seed, seconds):
    ops = [op for op in history.ops if op["process"] != "nemesis"]
    table = {}
    for op in ops:
        row = table.setdefault(op["kind"], {"ok": 0, "fail": 0, "info": 0})
        row[op["outcome"]] += 1
    delivered = result["delivered"]
    lines = [f"soak: {seconds} s, seed {seed}, {len(ops)} operations, {len(fault_windows(history))} faults", "",
             f"{'operation':<20}{'ok':>8}{'fail':>8}{'info':>8}"]
    lines += [f"{kind:<20}{row['ok']:>8}{row['fail']:>8}{row['info']:>8}" for kind, row in sorted(table.items())]
    lines += ["", f"at the fakes: {delivered['push']} pushes (of which {delivered['alerts']} low-rating alerts), "
                  f"{delivered['chat']} chat messages"]
    lines += ["", "faults:"]
    lines += [f"  {op['invoked']:6.1f} s  {op['description']}" for op in history.ops
              if op["process"] == "nemesis" and op["phase"] == "start"]
    checks = [
        ("lost (acknowledged, absent at the end)", len(result["lost"]), "0"),
        ("twice (an effect more than once)", len(result["twice"]), "0"),
        ("stuck job runs", result["stuck_runs"], "0"),
        ("stuck guest events", len(result["stuck_events"]), "0"),
        ("answers 500", len(result["five_hundreds"]), "0"),
        ("pushes the push service refused", len(result["refused"]), "0"),
        (f"p99 outside the fault windows ({result['calm_ops']} operations)", f"{result['p99_calm'] * 1000:.0f} ms", "< 1000 ms"),
    ]
    lines += ["", f"{'check':<56}{'observed':>12}   goal"]
    lines += [f"{name:<56}{str(value):>12}   {goal}" for name, value, goal in checks]
    for name in ("lost", "twice", "stuck_events", "five_hundreds", "refused"):
        for item in result[name][:10]:
            lines.append(f"  {name}: {item}")
    return "\n".join(lines)


def timeline(history, path):
    """Throughput, p99 latency and unanswered operations (`info`) per second, fault windows shaded:
    an SVG."""
    ops = [op for op in history.ops if op["process"] not in ("nemesis", "settle")]
    end = int(max((op["completed"] for op in ops), default=1)) + 1
    per_second = [[] for _ in range(end)]
    for op in ops:
        per_second[int(op["completed"])].append(op)
    ok = [sum(1 for op in s if op["outcome"] == "ok") for s in per_second]
    # Not the definite refusals (a taken report slot, a rate limit): the answers that were none.
    errors = [sum(1 for op in s if op["outcome"] == "info") for s in per_second]
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
    for row, (name, series, colour) in enumerate((("ok / s", ok, "#1a7f37"), ("p99 ms", p99, "#0550ae"), ("no answer / 5xx", errors, "#cf222e"))):
        top, peak = 20 + row * band, max(series + [1])
        svg.append(f'<text x="4" y="{top + 14}">{name}</text><text x="4" y="{top + 28}" fill="#666">max {peak:.0f}</text>')
        svg.append(f'<line x1="{left}" y1="{top + band - 10}" x2="{width - 20}" y2="{top + band - 10}" stroke="#ccc"/>')
        points = " ".join(f"{x(t + 0.5):.1f},{top + band - 10 - (band - 20) * v / peak:.1f}" for t, v in enumerate(series))
        svg.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
    for t in range(0, end, max(end // 10, 1)):
        svg.append(f'<text x="{x(t):.1f}" y="{height - 40}" text-anchor="middle" fill="#666">{t} s</text>')
    svg.append(f'<text x="{left}" y="{height - 15}">shaded: fault windows (see summary.txt)</text></svg>')
    path.write_text("\n".join(svg))
