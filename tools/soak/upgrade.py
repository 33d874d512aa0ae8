#!/usr/bin/env python3
"""`just upgrade-test`: a rolling upgrade from the previous release to this one under the soak's
whole workload (workload.py), checked by the soak's checker (checker.py) and recorded in its history.

The cluster starts on the previous release (its migrations, its demo, three instances). While the
clients run, this release's pre-deploy migrations run (`opsd migrate`); each instance in turn is
drained (SIGTERM: `/health/ready` turns 503 for SHUTDOWN_DRAIN_SECONDS, then it exits) and replaced
by this release; a cron job is called on the three instances of both releases at once; the
post-deploy migrations run (`opsd migrate --post-deploy`); then one instance is rolled back to the
previous release and serves. Held when the checker holds (nothing acknowledged lost or applied twice,
no 500, nothing stuck), the job ran once at a time across the versions, no request waited on a
migration longer than its lock timeout, and every step did what it says.

Usage: upgrade.py SECONDS PREVIOUS_OPSD [THIS_OPSD]
"""

import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cluster"))
import cluster  # noqa: E402
from cluster import APP_NODES, Net  # noqa: E402

import soak  # noqa: E402

LOCK_TIMEOUT_S = 2.0
SEED = 20261128


def version(binary):
    return cluster.run(binary, "--version", capture=True).stdout.strip()


def exited(pid):
    """Whether the process is gone: reaped when it is this run's child (else it stays a zombie)."""
    try:
        return cluster.os.waitpid(pid, cluster.os.WNOHANG)[0] == pid
    except ChildProcessError:
        try:
            cluster.os.kill(pid, 0)
            return False
        except ProcessLookupError:
            return True


class RollingUpgrade:
    """The nemesis of this run: the upgrade's steps, each a window in the history."""

    def __init__(self, previous, new):
        self.previous, self.new, self.failed, self.notes = previous, new, False, []

    def __call__(self, state, history, stop):
        self.state, self.history, self.net = state, history, Net(state)
        steps = [("this release's pre-deploy migrations: opsd migrate", lambda: self.migrate([]))]
        for node in APP_NODES:
            steps.append((f"{node} drained and replaced by this release", lambda n=node: self.replace(n, self.new)))
            if node == "app1":
                steps.append(("a cron job on the three instances, of both releases, at once", self.jobs_once))
        steps += [("post-deploy migrations: opsd migrate --post-deploy", lambda: self.migrate(["--post-deploy"])),
                  ("app1 rolled back to the previous release", lambda: self.replace("app1", self.previous))]
        for description, action in steps:
            if stop.wait(8):
                self.fail(f"the run ended before: {description}")
                return
            self.step(description, action)

    def step(self, description, action):
        started = self.history.now()
        self.history.add(process="nemesis", kind="fault", outcome="info", invoked=started, completed=started,
                         fault="upgrade", description=description, phase="start")
        try:
            held, detail = action()
        except Exception as error:  # a step that could not run has not held
            held, detail = False, f"{type(error).__name__}: {error}"
        ended = self.history.now()
        self.history.add(process="nemesis", kind="fault", outcome="info", invoked=ended, completed=ended,
                         fault="upgrade", description=description, phase="end")
        print(f"  {started:6.1f} s  {'ok  ' if held else 'FAIL'} {description}: {detail} ({ended - started:.1f} s)", flush=True)
        if not held:
            self.fail(description)

    def fail(self, what):
        self.failed = True
        self.notes.append(what)

    def migrate(self, args):
        urls = cluster.database_urls(self.state, self.net)
        started = self.history.now()
        env = {**cluster.os.environ, "DATABASE_URL": urls["session"], "LOG_FORMAT": "json"}
        done = cluster.run(self.new, "migrate", *args, env=env,
                           capture=True, cwd=cluster.HOME, check=False)
        ended = self.history.now()
        log = done.stdout + done.stderr
        tries = [int(ms) for ms in re.findall(r'\bms\W{1,2}(\d+)', log)]
        retried = log.count("waited past its lock timeout")
        slowest = self.slowest_answer(started, ended)
        held = done.returncode == 0 and retried == 0 and slowest < LOCK_TIMEOUT_S + 1
        last = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
        return held, (f"{len(tries)} applied, the longest in {max(tries, default=0)} ms, {retried} lock timeouts; "
                      f"the slowest answer meanwhile {slowest:.2f} s (bound: the {LOCK_TIMEOUT_S:.0f} s lock timeout + 1 s); {last}")

    def slowest_answer(self, started, ended):
        answered = [op["completed"] - op["invoked"] for op in self.history.ops
                    if op["process"] != "nemesis" and op["outcome"] != "info"
                    and op["invoked"] < ended and op["completed"] > started]
        return max(answered, default=0.0)

    def replace(self, node, binary):
        key = f"opsd-{node}"
        pid = self.state["pids"].get(key)
        began = time.monotonic()
        cluster.stop(self.state, key, cluster.signal.SIGTERM)
        while pid and not exited(pid) and time.monotonic() - began < 30:
            time.sleep(0.1)
        drained = time.monotonic() - began
        self.state["opsd"] = binary
        cluster.start_opsd(self.state, self.net, node)
        cluster.wait_for(f"{node} ready", lambda: cluster.opsd_ready(self.net, node), 60)
        ready = time.monotonic() - began - drained
        release = "the previous release" if binary == self.previous else "this release"
        return drained < 30, f"drained and exited {drained:.1f} s after SIGTERM; {release} ready {ready:.1f} s later"

    def jobs_once(self):
        import cluster_test

        injected, observed, held = cluster_test.jobs_once(cluster_test.Client(self.state))
        return held, observed


def main():
    seconds = int(sys.argv[1])
    previous = str(Path(sys.argv[2]).resolve())
    new = str(Path(sys.argv[3] if len(sys.argv) > 3 else cluster.ROOT / "target" / "release" / "opsd").resolve())
    print(f"upgrade: from {previous} ({version(previous)}) to {new} ({version(new)}) under the soak's workload "
          f"for {seconds} s", flush=True)
    upgrade = RollingUpgrade(previous, new)
    ok = soak.run(seconds, SEED, Path(new).parent, previous, upgrade, "upgrade")
    ok = answers_held(soak.OUT / "history.jsonl") and ok
    for note in upgrade.notes:
        print(f"  did not hold: {note}", flush=True)
    print(f"upgrade {'held' if ok else 'FAILED'}", flush=True)
    sys.exit(0 if ok else 1)


def answers_held(history_file):
    """No answer of 500 or above, and none missing but a drained instance's last in flight."""
    ops = [json.loads(line) for line in history_file.read_text().splitlines()]
    steps = {}
    for op in ops:
        description = op.get("description", "")
        if op["process"] == "nemesis" and ("drained" in description or "rolled back" in description):
            steps.setdefault(op["description"], []).append(op["invoked"])
    drains = [(min(times), max(times)) for times in steps.values()]
    calls = [op for op in ops if op["process"] != "nemesis"]
    failed = [op for op in calls if (op.get("status") or 0) >= 500]
    unanswered = [op for op in calls if op.get("status") is None]
    outside = [op for op in unanswered if not any(start <= op["completed"] and op["invoked"] <= end for start, end in drains)]
    held = not failed and not outside and len(unanswered) <= len(drains)
    print(f"  answers: {len(calls)} calls, {len(failed)} of 500 or above, {len(unanswered)} unanswered "
          f"({len(outside)} outside the {len(drains)} drains; at most one in flight each)", flush=True)
    return held


if __name__ == "__main__":
    main()
