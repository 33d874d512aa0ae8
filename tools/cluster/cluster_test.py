#!/usr/bin/env python3
"""`just cluster-test`: starts the cluster (cluster.py), drives it through the balancer, injects the
faults a real deployment meets, one named scenario at a time, and prints for each what it injected
and what it observed. Exits non-zero when a scenario does not hold. The cluster is stopped and its
namespaces removed at the end, also when a scenario fails or the run is interrupted.
"""

import json
import signal
import sys
import threading
import time
import uuid

import cluster
from cluster import API_KEY, APP_NODES, CRON_SECRET, DB_NODES, Net

FAILOVER_BOUND_S = 5.0


class Client:
    """HTTP through the balancer or to one instance; every answer's status is counted."""

    def __init__(self, state):
        self.state = state
        self.net = Net(state)
        self.token = cluster.token(state)
        self.statuses = {}
        self.lock = threading.Lock()

    def base(self, host="lb"):
        return f"http://{self.net.address(host)}:8080"

    def call(self, method, path, body=None, auth="user", host="lb", timeout=10):
        headers = {"content-type": "application/json"}
        if auth == "session":  # the console: the web app's session cookie
            headers["Cookie"] = f"__session={self.token}"
        else:
            headers["Authorization"] = "Bearer " + {"user": self.token, "key": API_KEY, "cron": CRON_SECRET}[auth]
        data = json.dumps(body).encode() if body is not None else None
        try:
            status, raw = cluster.request(method, self.base(host) + path, data, headers, timeout)
        except Exception:
            status, raw = None, b""  # no answer: it may or may not have happened
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode(errors="replace")

    def create_incident(self, note, host="lb"):
        body = {"locationId": self.state["demo"]["location_id"], "type": "Maintenance", "severity": "low", "notes": note}
        return self.call("POST", "/api/incidents", body, host=host, timeout=15)

    def report(self, host="lb"):
        demo = self.state["demo"]
        return self.call("GET", f"/api/analytics/optimization?teamId={demo['team_id']}&weekOf={demo['week_of']}",
                         auth="key", host=host)

    def add_sale(self, amount, host="lb"):
        demo = self.state["demo"]
        rows = [{"locationId": demo["location_id"], "date": demo["week_of"], "block": "Lunch", "food": amount,
                 "beverage": 0, "other": 0, "guests": 1}]
        return self.call("POST", "/api/analytics/sales", {"teamId": demo["team_id"], "rows": rows}, auth="key", host=host)


class Writers:
    """Clients creating incidents through the balancer while a fault runs: which were acknowledged,
    every status, and when writes succeeded."""

    def __init__(self, client, threads=4):
        self.client, self.stop, self.acked, self.successes = client, threading.Event(), [], []
        self.statuses, self.lock = {}, threading.Lock()
        self.workers = [threading.Thread(target=self.work, args=(n,), daemon=True) for n in range(threads)]

    def work(self, n):
        while not self.stop.is_set():
            status, body = self.client.create_incident(f"cluster-test writer {n} {uuid.uuid4()}")
            with self.lock:
                self.statuses[status] = self.statuses.get(status, 0) + 1
                if status == 201:
                    self.acked.append(body["id"])
                    self.successes.append(time.monotonic())
            if status != 201:
                time.sleep(0.2)

    def __enter__(self):
        for worker in self.workers:
            worker.start()
        return self

    def __exit__(self, *_):
        self.stop.set()
        for worker in self.workers:
            worker.join(20)


def scenario(name):
    def register(function):
        SCENARIOS.append((name, function))
        return function

    return register


SCENARIOS = []


def primary_sql(net, sql):
    return cluster.psql(net, cluster.leader(net), sql, database="opsd")


@scenario("every capability answers through the balancer")
def capabilities(c):
    checks = {
        "GET /health/ready": c.call("GET", "/health/ready")[0],
        "POST /api/incidents (user token)": c.create_incident("cluster-test capability")[0],
        "GET /api/locations (user token)": c.call("GET", "/api/locations")[0],
        "GET optimization report (API key)": c.report()[0],
        "GET /cron/prune-soft-deleted-contacts (cron secret)": c.call("GET", "/cron/prune-soft-deleted-contacts", auth="cron")[0],
        "GET /api/incidents without a token": c.call("GET", "/api/incidents", auth="key")[0],
    }
    expected = {"POST /api/incidents (user token)": 201, "GET /api/incidents without a token": 401}
    held = all(status == expected.get(name, 200) for name, status in checks.items())
    return "requests through HAProxy's opsd port", ", ".join(f"{k} {v}" for k, v in checks.items()), held


@scenario("a cron job called on all three instances at once runs once at a time, and again afterwards")
def jobs_once(c):
    job = "/cron/check-compliance"
    answers = []
    calls = [threading.Thread(target=lambda n=n: answers.append(c.call("GET", job, auth="cron", host=n))) for n in APP_NODES]
    for call in calls:
        call.start()
    for call in calls:
        call.join()
    again = c.call("GET", job, auth="cron")
    overlaps = primary_sql(c.net, """
        SELECT count(*) FROM job_runs a JOIN job_runs b ON a.job = b.job AND a.id < b.id
        WHERE a.job = 'check-compliance'
          AND tstzrange(a.started_at, coalesce(a.finished_at, 'infinity')) && tstzrange(b.started_at, coalesce(b.finished_at, 'infinity'))""")
    texts = [str(body)[:40] for _, body in answers]
    ran = sum(1 for status, body in answers if status == 200 and "skipped" not in str(body))
    held = all(status == 200 for status, _ in answers) and ran >= 1 and overlaps == "0" and again[0] == 200 and "skipped" not in str(again[1])
    return (f"GET {job} on app1, app2, app3 at the same moment, then once more",
            f"answers {texts}; {ran} ran; overlapping runs in job_runs: {overlaps}; the later call: {str(again[1])[:40]}", held)


@scenario("a write on one instance is seen by a read on another within a second")
def write_read_elsewhere(c):
    status, incident = c.create_incident("cluster-test visibility", host="app1")
    seen = {n: c.call("GET", f"/api/incidents/{incident['id']}", host=n)[0] for n in ("app2", "app3")}
    # An ingested row replaces the day's Lunch block: set it to 5.00 first, then to 7.00.
    c.add_sale(5.0, host="app1")
    time.sleep(1.0)
    before = {n: c.report(host=n)[1]["summary"]["totalSales"] for n in APP_NODES}
    sale = c.add_sale(7.0, host="app1")[0]
    time.sleep(1.0)
    after = {n: c.report(host=n)[1]["summary"]["totalSales"] for n in APP_NODES}
    held = status == 201 and all(s == 200 for s in seen.values()) and sale in (200, 201) and all(
        round(after[n] - before[n], 2) == 2.0 for n in APP_NODES)
    return ("an incident created on app1; the day's Lunch sales set from 5.00 to 7.00 on app1",
            f"the incident read on app2/app3: {seen}; the week's sales before {before}, one second after {after} (+2.00 expected)", held)


def replica_scans(net, table="schedule_shifts"):
    total = 0
    for node in cluster.streaming_replicas(net):
        total += int(cluster.psql(net, node, "SELECT coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0) FROM "
                                  f"pg_stat_user_tables WHERE relname = '{table}'", database="opsd") or 0)
    return total


@scenario("report reads are served by the replicas, and reflect writes with replay paused")
def replicas(c):
    slug = c.state["demo"]["location_slug"]
    before = replica_scans(c.net)
    primary_before = primary_sql(c.net, "SELECT seq_scan + coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE relname = 'schedule_shifts'")
    console_before = replica_scans(c.net, "manager_reports")
    statuses = [c.call("GET", f"/api/schedule/{slug}", auth="key")[0] for _ in range(30)]
    pages = [c.call("GET", "/console/compliance", auth="session")[0] for _ in range(10)]
    # A backend flushes its statistics at the end of a transaction at most once a second; what it
    # holds back then goes out when it has been idle for 10 s (PostgreSQL 15): wait up to 12 s.
    for _ in range(24):
        time.sleep(0.5)
        after = replica_scans(c.net)
        console_after = replica_scans(c.net, "manager_reports")
        if after - before >= 30 and console_after - console_before >= 10:
            break
    primary_after = primary_sql(c.net, "SELECT seq_scan + coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE relname = 'schedule_shifts'")
    replicas = cluster.streaming_replicas(c.net)
    for node in replicas:
        cluster.stall_replay(c.net, node)
    try:
        time.sleep(1.5)  # the replicas' freshness known to opsd now lags
        reports_before = {n: c.report(host=n)[1]["summary"]["totalSales"] for n in APP_NODES}
        sale = c.add_sale(3.0, host="app2")[0]
        time.sleep(1.0)
        reports_after = {n: c.report(host=n)[1]["summary"]["totalSales"] for n in APP_NODES}
        schedule = [c.call("GET", f"/api/schedule/{slug}", auth="key", host=n)[0] for n in APP_NODES]
        metrics = cluster.http_get(f"{c.base('app1')}/metrics")[1].decode()
        stale = {n: cluster.psql(c.net, n, "SELECT pg_last_wal_replay_lsn() < pg_last_wal_receive_lsn()") for n in replicas}
    finally:
        for node in replicas:
            cluster.resume_replay(c.net, node)
    # The Lunch block was 7.00 (the scenario before): now 3.00.
    reflected = all(round(reports_after[n] - reports_before[n], 2) == -4.0 for n in APP_NODES)
    opsd_says = [line for line in metrics.splitlines() if line.startswith("opsd_db_replica_")]
    fell_back = any('served_by="primary"' in line and not line.endswith(" 0") for line in opsd_says)
    held = (all(s == 200 for s in statuses) and after - before >= 30 and sale in (200, 201) and reflected
            and all(s == 200 for s in pages) and console_after - console_before >= 10
            and all(s == 200 for s in schedule) and fell_back and all(v == "t" for v in stale.values()))
    return ("30 schedule reads and 10 console compliance pages through the balancer; then WAL replay stalled on both replicas (their startup process "
            "SIGSTOPped: WAL still arrives, nothing is applied) and the day's Lunch sales set from 7.00 to 3.00",
            f"schedule_shifts scans on the replicas +{after - before}, on the primary +{int(primary_after) - int(primary_before)}; "
            f"compliance pages {set(pages)}, manager_reports scans on the replicas +{console_after - console_before}; "
            f"replicas behind their received WAL: {stale}; sales before {reports_before}, after {reports_after}; "
            f"schedule reads {schedule}; "
            f"app1's /metrics: {'; '.join(opsd_says)}", held)


def failover(c, inject, restore, what):
    net = c.net
    old = cluster.leader(net)
    with Writers(c) as writers:
        time.sleep(2)
        injected_at = time.monotonic()
        inject(net, old)
        new, new_at = None, None
        while time.monotonic() - injected_at < 60:
            current = cluster.leader(net)
            if current and current != old:
                new, new_at = current, time.monotonic()
                break
            time.sleep(0.2)
        time.sleep(8)
    restore(net, old)
    first_write = next((t for t in writers.successes if new_at and t >= new_at), None)
    back_after = None if first_write is None else first_write - new_at
    acked = writers.acked
    present = int(primary_sql(net, "SELECT count(*) FROM incidents WHERE id = ANY('{%s}'::uuid[])" % ",".join(acked))) if acked else 0
    wait_for_replicas(net)
    held = (new is not None and back_after is not None and back_after <= FAILOVER_BOUND_S and present == len(acked)
            and 500 not in writers.statuses)
    return (f"{what} ({old}) while 4 clients create incidents through the balancer",
            f"new leader {new} after {0 if new_at is None else new_at - injected_at:.1f} s; first acknowledged write "
            f"{'none' if back_after is None else f'{back_after:.1f} s'} after it took writes; answers {writers.statuses}; "
            f"acknowledged {len(acked)}, present {present}", held)


def wait_for_replicas(net):
    cluster.wait_for("the old leader rejoining as a replica", lambda: len(cluster.streaming_replicas(net)) == 2, 120)


@scenario("the leader's host is killed (kill -9 of its processes)")
def leader_killed(c):
    state = c.state

    def restore(net, node):
        cluster.start_patroni(state, net, node)

    return failover(c, cluster.kill_host, restore, "every process on the leader's host killed")


@scenario("the leader's host is cut off (nftables drop, silent)")
def leader_cut_off(c):
    return failover(c, cluster.cut_off, cluster.reconnect, "the leader's host cut off by nftables")


@scenario("an opsd instance is killed: HAProxy takes it out")
def instance_killed(c):
    state, net = c.state, c.net
    with Writers(c, threads=6) as writers:
        time.sleep(1)
        cluster.stop(state, "opsd-app2", cluster.signal.SIGKILL)
        time.sleep(5)
    failed = sum(count for status, count in writers.statuses.items() if status != 201)
    cluster.start_opsd(state, net, "app2")
    cluster.wait_for("app2 again", lambda: cluster.opsd_ready(net, "app2"), 60)
    held = failed <= 6 and 500 not in writers.statuses
    return ("kill -9 of app2's opsd while 6 clients create incidents", f"answers {writers.statuses}; failed {failed} (at most the 6 in flight)", held)


@scenario("PgBouncer is restarted: the instances recover without a restart")
def pgbouncer_restarted(c):
    state, net = c.state, c.net
    with Writers(c) as writers:
        time.sleep(1)
        cluster.stop(state, "pgbouncer", cluster.signal.SIGKILL)
        time.sleep(2)
        cluster.start_pgbouncer(state, net)
        restarted = time.monotonic()
        time.sleep(6)
    first = next((t for t in writers.successes if t >= restarted), None)
    held = first is not None and 500 not in writers.statuses
    return ("PgBouncer killed and started again (2 s down) under 4 writing clients",
            f"answers {writers.statuses}; first write {'none' if first is None else f'{first - restarted:.1f} s'} after it was back", held)


@scenario("an opsd host cut off from the database answers 503 within a bound, then serves again")
def instance_cut_from_database(c):
    net = c.net
    c.call("GET", "/api/incidents", host="app1")  # its pooled connections are open
    cluster.cut_from(net, "app1", "lb")
    try:
        started = time.monotonic()
        status, body = c.call("GET", "/api/locations", host="app1", timeout=30)
        took = time.monotonic() - started
        code = body.get("code") if isinstance(body, dict) else None
    finally:
        cluster.reconnect(net, "app1")
    back = None
    reconnected = time.monotonic()
    while time.monotonic() - reconnected < 20:
        if c.call("GET", "/api/locations", host="app1")[0] == 200:
            back = time.monotonic() - reconnected
            break
        time.sleep(0.5)
    held = status == 503 and code == "unavailable" and took <= 8 and back is not None
    return ("app1's packets to the database host (PgBouncer, HAProxy) silently dropped by nftables",
            f"a request during the cut: {status} {code} after {took:.1f} s (bound 8 s: TCP_USER_TIMEOUT and the acquire "
            f"timeout, 3 s each); after the link came back: 200 again after {'never' if back is None else f'{back:.1f} s'}", held)


@scenario("statement_timeout applies through the pooler")
def statement_timeout(c):
    try:
        cluster.psql_via_bouncer(c.net, "SELECT pg_sleep(12)")
        observed, held = "the 12 s statement ran to its end", False
    except cluster.subprocess.CalledProcessError as error:
        observed = error.stderr.strip().splitlines()[0] if error.stderr else "refused"
        held = "statement timeout" in observed
    return ("SELECT pg_sleep(12) as the opsd role through PgBouncer", observed, held)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else str(cluster.ROOT / "target" / "release" / "opsd")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    failed = 0
    try:
        state = cluster.up(binary)
        client = Client(state)
        for name, run in SCENARIOS:
            started = time.monotonic()
            try:
                injected, observed, held = run(client)
            except Exception as error:  # a scenario that could not run has not held
                injected, observed, held = "(did not complete)", f"{type(error).__name__}: {error}", False
            failed += not held
            print(f"{'PASS' if held else 'FAIL'} {name} ({time.monotonic() - started:.1f} s)\n  injected: {injected}\n  observed: {observed}", flush=True)
        print(f"{len(SCENARIOS) - failed} passed, {failed} failed")
    finally:
        cluster.down()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
