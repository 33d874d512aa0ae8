#!/usr/bin/env python3
"""A local cluster of hosts, each a network namespace with its own address on one bridge:

    lb          etcd, HAProxy (leader port 5000, replicas port 5001, opsd on 8080), PgBouncer (6432)
    db1..db3    PostgreSQL 15 under Patroni 3 (synchronous mode)
    app1..app3  opsd (DATABASE_POOL_MODE=transaction through PgBouncer)

`cluster.py up` starts it and prints what runs where; `cluster.py down` stops every process and
removes every namespace. Configuration comes from deploy/ (the same files an operator deploys).
Needs root (namespaces) and Debian's patroni, etcd-server, haproxy, pgbouncer and postgresql-15,
installed when missing. Traffic stays on this machine: the bridge has no route anywhere else.
"""

import hashlib
import json
import os
import secrets
import shutil
import signal
import string
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
PG_BIN = Path("/usr/lib/postgresql/15/bin")
PACKAGES = {
    "patroni": "patroni",
    "etcd": "etcd-server",
    "haproxy": "haproxy",
    "pgbouncer": "pgbouncer",
    "nft": "nftables",
    "psql": "postgresql-client",
    "faketime": "faketime",
}
DB_NODES = ["db1", "db2", "db3"]
APP_NODES = ["app1", "app2", "app3"]
API_KEY = "cluster-api-key"
CRON_SECRET = "cluster-cron-secret"


def checkout_id():
    return hashlib.sha256(str(ROOT).encode()).hexdigest()[:6]


HOME = Path(os.environ.get("OPSD_CLUSTER_HOME", f"/var/lib/opsd/cluster-{checkout_id()}"))
STATE = HOME / "state.json"


def log(what, detail=""):
    print(f"{what:<12} {detail}", flush=True)


def run(*args, check=True, capture=False, **kwargs):
    # A working directory every user can enter: commands run as postgres must not start in a 0700 clone.
    kwargs.setdefault("cwd", "/")
    done = subprocess.run(args, check=False, text=True, capture_output=capture, **kwargs)
    if check and done.returncode != 0:
        if capture:  # what the command said is the only clue to why it failed
            sys.stderr.write(done.stdout + done.stderr)
        done.check_returncode()
    return done


def ns_run(ns, *args, **kwargs):
    return run("ip", "netns", "exec", ns, *args, **kwargs)


# --- the network ---------------------------------------------------------------------------------


def free_subnet():
    """A /24 in 10.213.0.0/16 that no interface of this machine uses."""
    used = run("ip", "-o", "-4", "addr", "show", capture=True).stdout
    for third in range(7, 250):
        if f"10.213.{third}." not in used:
            return f"10.213.{third}"
    sys.exit("no free 10.213.x.0/24 subnet")


class Net:
    def __init__(self, state):
        self.prefix = state["prefix"]  # namespace and link names
        self.subnet = state["subnet"]

    def ns(self, host):
        return f"{self.prefix}-{host}"

    def address(self, host):
        index = {"lb": 2, **{n: 11 + i for i, n in enumerate(DB_NODES)}, **{n: 21 + i for i, n in enumerate(APP_NODES)}}
        return f"{self.subnet}.{index[host]}"

    @property
    def bridge(self):
        return f"{self.prefix}-br"

    def hosts(self):
        return ["lb", *DB_NODES, *APP_NODES]


def make_network(net):
    run("ip", "link", "add", net.bridge, "type", "bridge")
    run("ip", "addr", "add", f"{net.subnet}.1/24", "dev", net.bridge)
    run("ip", "link", "set", net.bridge, "up")
    for i, host in enumerate(net.hosts()):
        ns, outer, inner = net.ns(host), f"{net.prefix}v{i}", f"{net.prefix}p{i}"
        # A link of a cluster stopped a moment ago can outlive its namespace while its processes exit.
        run("ip", "link", "del", outer, check=False, capture=True)
        run("ip", "netns", "add", ns)
        run("ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
        run("ip", "link", "set", outer, "master", net.bridge, "up")
        run("ip", "link", "set", inner, "netns", ns)
        ns_run(ns, "ip", "addr", "add", f"{net.address(host)}/24", "dev", inner)
        ns_run(ns, "ip", "link", "set", inner, "up")
        ns_run(ns, "ip", "link", "set", "lo", "up")


def remove_network(net):
    for i, host in enumerate(net.hosts()):
        ns = net.ns(host)
        pids = run("ip", "netns", "pids", ns, check=False, capture=True).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        # Deleting the outer end removes the pair at once; a namespace itself goes only when its
        # last process has exited, and its links with it.
        run("ip", "link", "del", f"{net.prefix}v{i}", check=False, capture=True)
        run("ip", "netns", "del", ns, check=False, capture=True)
    run("ip", "link", "del", net.bridge, check=False, capture=True)


# --- faults a real deployment meets --------------------------------------------------------------


def cut_off(net, host):
    """The host's packets are silently dropped, both ways (a partition, not a refusal)."""
    rules = """table inet opsd_cut {
    chain in { type filter hook input priority 0; policy drop; iif lo accept; }
    chain out { type filter hook output priority 0; policy drop; oif lo accept; }
}
"""
    ns_run(net.ns(host), "nft", "-f", "-", input=rules)


def cut_from(net, host, other):
    """The host's packets to `other` are silently dropped (a broken link between two hosts)."""
    rules = f"""table inet opsd_cut {{
    chain out {{ type filter hook output priority 0; policy accept; ip daddr {net.address(other)} drop; }}
}}
"""
    ns_run(net.ns(host), "nft", "-f", "-", input=rules)


def reconnect(net, host):
    ns_run(net.ns(host), "nft", "delete", "table", "inet", "opsd_cut", check=False, capture=True)


def replay_process(net, node):
    """The replica's startup process, which replays the WAL it receives."""
    for pid in run("ip", "netns", "pids", net.ns(node), capture=True).stdout.split():
        try:
            if "startup" in Path(f"/proc/{pid}/cmdline").read_text():
                return int(pid)
        except OSError:
            pass
    raise RuntimeError(f"no startup process on {node}")


def stall_replay(net, node):
    """Replay stops while the WAL still arrives and is flushed (so synchronous commits go on): as when
    replay waits behind a conflicting query. (pg_wal_replay_pause() would do, but Patroni resumes it.)"""
    os.kill(replay_process(net, node), signal.SIGSTOP)


def resume_replay(net, node):
    os.kill(replay_process(net, node), signal.SIGCONT)


def kill_host(net, host):
    """Every process of the host, kill -9: the machine lost its power."""
    for pid in run("ip", "netns", "pids", net.ns(host), capture=True).stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass


# --- processes -----------------------------------------------------------------------------------


def spawn(state, key, ns, argv, user=None, env=None, log_name=None):
    """Starts a process in a namespace, detached; its output goes to HOME/<log_name>.log.

    Its working directory is HOME (0755): a process started as another user (Patroni and PgBouncer run
    as postgres) must be able to enter it, and the checkout may be a private 0700 clone (Patroni's
    bootstrap child changes into its working directory and dies where it cannot)."""
    out = open(HOME / f"{log_name or key}.log", "ab")
    prefix = ["ip", "netns", "exec", ns]
    if user:
        prefix += ["runuser", "-u", user, "--"]
    process = subprocess.Popen(
        prefix + argv,
        stdout=out,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=HOME,
        start_new_session=True,
    )
    state["pids"][key] = process.pid
    save(state)
    return process.pid


def stop(state, key, sig=signal.SIGTERM):
    pid = state["pids"].pop(key, None)
    if pid:
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            pass
    save(state)


def save(state):
    STATE.write_text(json.dumps(state, indent=2))


def load():
    return json.loads(STATE.read_text()) if STATE.exists() else None


def template(path, **fields):
    return string.Template(path.read_text()).substitute(fields)


def wait_for(what, probe, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if probe():
                return
        except Exception:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{what}: not ready within {seconds} s (logs in {HOME})")


def request(method, url, data=None, headers=None, timeout=10):
    """One HTTP request's (status, raw body); raises when no answer came."""
    prepared = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(prepared, timeout=timeout) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def http_get(url, timeout=2, headers=None):
    return request("GET", url, timeout=timeout, headers=headers)


# --- the services --------------------------------------------------------------------------------


def start_etcd(state, net):
    lb = net.address("lb")
    spawn(state, "etcd", net.ns("lb"), [
        "etcd", "--name", "etcd1", "--data-dir", str(HOME / "etcd"),
        "--listen-client-urls", f"http://{lb}:2379", "--advertise-client-urls", f"http://{lb}:2379",
        "--listen-peer-urls", f"http://{lb}:2380", "--initial-advertise-peer-urls", f"http://{lb}:2380",
        "--initial-cluster", f"etcd1=http://{lb}:2380", "--initial-cluster-state", "new",
    ])
    wait_for("etcd", lambda: http_get(f"http://{lb}:2379/health")[0] == 200, 20)


def start_patroni(state, net, node):
    home = HOME / node
    config = home / "patroni.yml"
    if not config.exists():
        home.mkdir(parents=True, exist_ok=True)
        shutil.chown(home, "postgres", "postgres")
        home.chmod(0o700)
        config.write_text(template(
            DEPLOY / "patroni" / "patroni.yml",
            name=node, address=net.address(node), etcd=f"{net.address('lb')}:2379",
            network=f"{net.subnet}.0/24", data_dir=home / "data", bin_dir=PG_BIN, home=home,
            superuser_password=state["passwords"]["postgres"], replication_password=state["passwords"]["replicator"],
        ))
        shutil.chown(config, "postgres", "postgres")
    spawn(state, f"patroni-{node}", net.ns(node), ["patroni", str(config)], user="postgres", log_name=f"patroni-{node}")


def patroni_role(net, node):
    status, body = http_get(f"http://{net.address(node)}:8008/patroni", timeout=1)
    return json.loads(body).get("role") if status in (200, 503) else None


def leader(net):
    for node in DB_NODES:
        try:
            if http_get(f"http://{net.address(node)}:8008/primary", timeout=1)[0] == 200:
                return node
        except Exception:
            pass
    return None


def streaming_replicas(net):
    found = []
    for node in DB_NODES:
        try:
            if http_get(f"http://{net.address(node)}:8008/replica", timeout=1)[0] == 200:
                found.append(node)
        except Exception:
            pass
    return found


def psql(net, node, sql, database="postgres", user="postgres"):
    password = load()["passwords"]["postgres" if user == "postgres" else "opsd"]
    env = {**os.environ, "PGPASSWORD": password, "PGCONNECT_TIMEOUT": "3"}
    # On standard input: a statement naming every acknowledged id outgrows one argument's limit.
    return run("psql", "-h", net.address(node), "-U", user, "-d", database, "-tAXq", "-v", "ON_ERROR_STOP=1",
               input=sql, capture=True, env=env).stdout.strip()


def start_haproxy(state, net):
    lb = net.address("lb")
    servers = lambda port, check_port: "\n".join(
        f"    server {n} {net.address(n)}:{port} check port {check_port}" for n in DB_NODES)
    config = HOME / "haproxy.cfg"
    config.write_text(template(
        DEPLOY / "haproxy" / "haproxy.cfg", lb_address=lb,
        primary_servers=servers(5432, 8008), replica_servers=servers(5432, 8008),
        app_servers="\n".join(f"    server {n} {net.address(n)}:8080 check" for n in APP_NODES),
    ))
    spawn(state, "haproxy", net.ns("lb"), ["haproxy", "-db", "-f", str(config)])


def leader_port_settled(net, leader_node):
    env = {**os.environ, "PGPASSWORD": load()["passwords"]["opsd"], "PGCONNECT_TIMEOUT": "3"}
    # Refused until HAProxy listens: that is what is being waited for, not an error to print.
    ask = lambda: run("psql", "-h", net.address("lb"), "-p", "5000", "-U", "opsd", "-d", "opsd", "-tAXq", "-c",
                      "SELECT inet_server_addr()", capture=True, check=False, env=env).stdout.strip()
    return all(ask() == net.address(leader_node) for _ in range(2 * len(DB_NODES)))


def start_pgbouncer(state, net):
    home = HOME / "pgbouncer"
    home.mkdir(exist_ok=True)
    shutil.chown(home, "postgres", "postgres")
    config = home / "pgbouncer.ini"
    config.write_text(template(DEPLOY / "pgbouncer" / "pgbouncer.ini", lb_address=net.address("lb"), home=home))
    users = home / "userlist.txt"
    users.write_text(f'"opsd" "{state["passwords"]["opsd"]}"\n')
    for path in (config, users):
        shutil.chown(path, "postgres", "postgres")
        path.chmod(0o600)
    spawn(state, "pgbouncer", net.ns("lb"), ["pgbouncer", str(config)], user="postgres")
    wait_for("pgbouncer", lambda: psql_via_bouncer(net, "SELECT 1") == "1", 20)


def psql_via_bouncer(net, sql):
    env = {**os.environ, "PGPASSWORD": load()["passwords"]["opsd"], "PGCONNECT_TIMEOUT": "3"}
    return run("psql", "-h", net.address("lb"), "-p", "6432", "-U", "opsd", "-d", "opsd", "-tAXq", "-c", sql,
               capture=True, env=env).stdout.strip()


def database_urls(state, net):
    lb, password = net.address("lb"), state["passwords"]["opsd"]
    url = lambda port: f"postgres://opsd:{password}@{lb}:{port}/opsd?sslmode=disable"
    return {"pooled": url(6432), "session": url(5000), "replicas": url(5001)}


def opsd_env(state, net, node, extra=None):
    urls = database_urls(state, net)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "BIND_ADDR": f"{net.address(node)}:8080",
        "DATABASE_URL": urls["pooled"],
        "DATABASE_POOL_MODE": "transaction",
        "DATABASE_SESSION_URL": urls["session"],
        "DATABASE_REPLICA_URLS": urls["replicas"],
        "DATABASE_POOL_SIZE": "8",
        "SHUTDOWN_DRAIN_SECONDS": "3",
        "TRUSTED_PROXIES": net.address("lb"),
        "API_KEY": API_KEY,
        "CRON_SECRET": CRON_SECRET,
        "IDENTITY_JWT_PUBLIC_KEY": (HOME / "identity" / "public.pem").read_text(),
        "APP_ORIGIN": f"http://{net.address('lb')}:8080",
        "LOG_FORMAT": "json",
        "RUST_LOG": "info",
    }
    return {**env, **state.get("extra_env", {}), **(extra or {})}


def start_opsd(state, net, node, extra_env=None, wrapper=()):
    spawn(state, f"opsd-{node}", net.ns(node), [*wrapper, state["opsd"], "serve"], env=opsd_env(state, net, node, extra_env),
          log_name=f"opsd-{node}")


def opsd_ready(net, node):
    return http_get(f"http://{net.address(node)}:8080/health/ready", timeout=2)[0] == 200


def install_missing():
    missing = [package for tool, package in PACKAGES.items() if shutil.which(tool) is None]
    if not PG_BIN.exists():
        missing.append("postgresql-15")
    if missing:
        log("installing", " ".join(missing))
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        run("apt-get", "update", "-qq", env=env)
        run("apt-get", "install", "-y", "-qq", *missing, env=env, capture=True)
    # Debian starts a pgbouncer of its own where it can; the cluster runs its own.


def up(opsd_binary, extra_env=None):
    if os.geteuid() != 0:
        sys.exit("the cluster needs root: each host is a network namespace")
    if load():
        log("stopping", "the cluster left running before")
        down()
    install_missing()
    if HOME.exists():
        shutil.rmtree(HOME)
    HOME.mkdir(parents=True)
    HOME.chmod(0o755)
    state = {
        "prefix": f"oc{checkout_id()[:4]}",
        "subnet": free_subnet(),
        "pids": {},
        "opsd": str(Path(opsd_binary).resolve()),
        "passwords": {user: secrets.token_hex(12) for user in ("postgres", "replicator", "opsd")},
        "extra_env": extra_env or {},
    }
    save(state)
    net = Net(state)
    make_network(net)
    log("network", f"bridge {net.bridge} {net.subnet}.0/24; hosts " + ", ".join(f"{h} {net.address(h)}" for h in net.hosts()))
    start_etcd(state, net)
    log("etcd", f"{net.address('lb')}:2379")
    for node in DB_NODES:
        start_patroni(state, net, node)
    wait_for("a Patroni leader", lambda: leader(net) is not None, 90)
    wait_for("two streaming replicas", lambda: len(streaming_replicas(net)) == 2, 120)
    first = leader(net)
    log("patroni", f"leader {first}, replicas {', '.join(streaming_replicas(net))} (synchronous mode)")
    opsd_password = state["passwords"]["opsd"]
    psql(net, first, f"CREATE ROLE opsd LOGIN PASSWORD '{opsd_password}'")
    # The pooled connections cannot SET statement_timeout for their session: it is the role's.
    psql(net, first, "ALTER ROLE opsd SET statement_timeout = '10s'")
    psql(net, first, "CREATE DATABASE opsd OWNER opsd")
    start_haproxy(state, net)
    lb = net.address("lb")
    log("haproxy", f"leader {lb}:5000, replicas {lb}:5001, opsd http://{lb}:8080")
    # HAProxy takes every server for up until its first check fails, so for a moment its leader
    # port also reaches the replicas: nothing may write through it before that moment is over.
    wait_for("HAProxy's leader port to reach only the leader", lambda: leader_port_settled(net, first), 20)
    start_pgbouncer(state, net)
    log("pgbouncer", f"{lb}:6432 (transaction mode, in front of the leader port)")
    run(state["opsd"], "dev-keys", str(HOME / "identity"), capture=True)
    urls = database_urls(state, net)
    seed_env = {**os.environ, "DATABASE_URL": urls["session"]}
    run(state["opsd"], "migrate", env=seed_env, capture=True, cwd=HOME)
    seeded = run(state["opsd"], "seed-demo", env=seed_env, capture=True, cwd=HOME).stdout
    state["demo"] = dict(line.split("=", 1) for line in seeded.split() if "=" in line)
    save(state)
    log("demo data", f"team {state['demo'].get('team_id')}, location {state['demo'].get('location_slug')}")
    for node in APP_NODES:
        start_opsd(state, net, node)
    wait_for("the opsd instances", lambda: all(opsd_ready(net, n) for n in APP_NODES), 60)
    wait_for("HAProxy's view of the instances", lambda: http_get(f"http://{lb}:8080/health/ready")[0] == 200, 20)
    log("opsd", ", ".join(f"{n} http://{net.address(n)}:8080" for n in APP_NODES))
    return state


def token(state, user="user_cluster", role="admin"):
    env = {**os.environ, "OPSD_DEV_SIGNING_KEY": str(HOME / "identity" / "private.pem")}
    return run(state["opsd"], "dev-token", "--user", user, "--team", state["demo"]["team_id"], "--role", role,
               capture=True, env=env).stdout.strip()


def print_ready(state):
    net = Net(state)
    lb = net.address("lb")
    print(f"""
The cluster runs (state and logs in {HOME}):
  which process is which: {', '.join(f'{k} pid {v}' for k, v in state['pids'].items())}
Try it through the balancer:
  export OPSD_TOKEN={token(state)}
  curl -s http://{lb}:8080/health/ready
  curl -s -H 'Authorization: Bearer {API_KEY}' 'http://{lb}:8080/api/analytics/optimization?teamId={state['demo']['team_id']}'
  curl -s -H "Authorization: Bearer $OPSD_TOKEN" http://{lb}:8080/api/locations
  curl -s -H 'Authorization: Bearer {CRON_SECRET}' http://{lb}:8080/cron/prune-soft-deleted-contacts
  curl -s http://{net.address(leader(net) or 'db1')}:8008/cluster     (Patroni's view)
Stop it: just cluster-down""")


def down():
    state = load()
    if not state:
        log("cluster", "nothing to stop")
        return
    for key in list(state["pids"]):
        stop(state, key, signal.SIGKILL)
    remove_network(Net(state))
    STATE.unlink(missing_ok=True)
    log("cluster", "stopped: every process killed, every namespace removed")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "up"
    if command == "up":
        binary = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "target" / "release" / "opsd")
        try:
            print_ready(up(binary))
        except BaseException:
            down()
            raise
    elif command == "down":
        down()
    else:
        sys.exit("usage: cluster.py up [OPSD_BINARY] | down")
