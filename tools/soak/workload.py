"""The soak's clients: what this service's clients do, through the balancer, every operation in the
history with its outcome (ok, fail: a definite refusal, info: it may or may not have happened).

Besides the users' API calls, the producers' deliveries: the coupon producer's signed guest events
and the identity provider's signed webhooks, some of them redelivered. What each create made is
kept in `Expected`, for the checker.
"""

import base64
import hashlib
import hmac
import itertools
import json
import threading
import time
import uuid
from datetime import date, datetime, timedelta, timezone

import cluster
from cluster import API_KEY, CRON_SECRET, Net

CREATE_RETRIES = 6
JOBS = ["/cron/check-compliance", "/cron/report-reminder", "/cron/publish-scheduled-announcements",
        "/cron/aggregate-heroes", "/cron/prune-soft-deleted-contacts", "/cron/prune-idempotency-keys",
        "/cron/expire-coupons", "/cron/keep-alive", "/cron/sync-schedule-from-7shifts", "/cron/sync-7shifts-roles",
        "/cron/sync-7shifts-punches"]
FAKES_PORT = 9100
IDENTITY_SECRET = "whsec_" + base64.b64encode(b"soak-identity-webhook-secret-32b").decode()
COUPON_SECRET = "whsec_" + base64.b64encode(b"soak-coupon-producer-secret-32by").decode()
ADMIN, MEMBER = "user_soak_admin", "user_soak_member"
# The provider's updated_at of each user.updated: from the run's start, one millisecond apart.
STAMPS = itertools.count(int(time.time() * 1000))


# Answers that leave a create's outcome open: still running under its key, or stopped unanswered.
UNKNOWN_OUTCOMES = ("idempotency_in_progress", "idempotency_outcome_unknown")


def environment(fake_keys):
    """What the instances need to deliver to the fakes and to accept the producers' deliveries."""
    return {"GUEST_EVENT_LEASE_SECONDS": "5",  # short, so a paused instance outlives it
            "OUTBOUND_ALLOW_LOOPBACK": "true",  # the fakes listen on each instance host's loopback
            "NEXT_PUBLIC_VAPID_PUBLIC_KEY": fake_keys["vapid"]["public"],
            "VAPID_PRIVATE_KEY": fake_keys["vapid"]["private"], "VAPID_SUBJECT": "mailto:soak@example.com",
            "IDENTITY_WEBHOOK_SECRET": IDENTITY_SECRET, "COUPON_WEBHOOK_SECRET": COUPON_SECRET,
            "SCHEDULER_API_BASE_URL": f"http://127.0.0.1:{FAKES_PORT + 1}",
            "SCHEDULER_API_TOKEN": fake_keys["scheduler"]["token"], "SCHEDULER_COMPANY_ID": fake_keys["scheduler"]["company"]}


def sign(secret, delivery_id, timestamp, body):
    """A Standard Webhooks signature, as the identity provider and the coupon producer send it."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{delivery_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def rfc3339(at):
    return at.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


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


class Expected:
    """What the clients asked to create, with the outcome each was told: the checker's input."""

    def __init__(self):
        self.lock = threading.Lock()
        self.items = []

    def add(self, kind, outcome, key=None, **what):
        with self.lock:
            self.items.append({"kind": kind, "outcome": outcome, "key": key, **what})

    def of(self, kind):
        return [item for item in self.items if item["kind"] == kind]


class Client:
    def __init__(self, state, history, process, user=None, role="admin"):
        self.state, self.history, self.process = state, history, process
        self.net = Net(state)
        self.user = user or f"user_soak_{process}"
        self.token = cluster.token(state, user=self.user, role=role)
        self.base = f"http://{self.net.address('lb')}:8080"

    def http(self, method, path, body=None, auth="user", headers=None, timeout=10):
        sent = {"content-type": "application/json", **(headers or {})}
        if auth == "session":  # the web app: a session cookie, from its own origin
            sent |= {"Cookie": f"__session={self.token}", "Origin": self.base}
        elif auth:
            sent["Authorization"] = "Bearer " + {"user": self.token, "key": API_KEY, "cron": CRON_SECRET}[auth]
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        started = time.monotonic()
        try:
            status, raw = cluster.request(method, self.base + path, data, sent, timeout)
        except Exception:
            status, raw = None, b""
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        return status, parsed, time.monotonic() - started

    def op(self, kind, method, path, body=None, auth="user", key=None, headers=None, ok=(200, 201, 202, 204)):
        """One operation, with its invoke and its completion in the history."""
        invoked = self.history.now()
        headers = {**(headers or {}), **({"Idempotency-Key": key} if key else {})}
        status, parsed, took = self.http(method, path, body, auth, headers)
        code = parsed.get("code") if isinstance(parsed, dict) else None
        if status in ok:
            outcome = "ok"
        elif status is None or status >= 500 or code in UNKNOWN_OUTCOMES:
            outcome = "info"  # no answer, a failure, still in progress, or stopped: it may have happened
        else:
            outcome = "fail"  # refused: invalid, a conflict, over a rate limit
        self.history.add(process=self.process, kind=kind, key=key, status=status, outcome=outcome, invoked=invoked,
                         completed=self.history.now(), latency=took,
                         id=parsed.get("id") if isinstance(parsed, dict) else None)
        return outcome, parsed

    def create(self, kind, path, body, auth="user"):
        """A create with an Idempotency-Key: an `info` outcome is retried with the same key."""
        key = str(uuid.uuid4())
        return (*self.retried(lambda: self.op(kind, "POST", path, body, auth=auth, key=key)), key)

    def deliver(self, kind, path, secret, prefix, delivery_id, body):
        """A producer's signed delivery; `info` is redelivered under the same id, as a producer does."""
        raw = json.dumps(body).encode()

        def attempt():
            timestamp = int(time.time())
            headers = {f"{prefix}id": delivery_id, f"{prefix}timestamp": str(timestamp),
                       f"{prefix}signature": sign(secret, delivery_id, timestamp, raw)}
            return self.op(kind, "POST", path, raw, auth=None, headers=headers)

        return self.retried(attempt)

    @staticmethod
    def retried(attempt):
        for tried in range(CREATE_RETRIES):
            outcome, parsed = attempt()
            stopped = isinstance(parsed, dict) and parsed.get("code") == "idempotency_outcome_unknown"
            if outcome != "info" or stopped:  # a stopped key never runs again: retrying cannot help
                return outcome, parsed
            time.sleep(min(0.2 * 2 ** tried, 2))
        return "info", None


# --- the producers ---------------------------------------------------------------------------------


def identity_event(kind, data, updated_at):
    return {"data": data, "object": "event", "type": kind, "timestamp": updated_at, "instance_id": "ins_soak",
            "event_attributes": {"http_request": {"client_ip": "", "user_agent": "soak"}}}


def user_data(user, first_name, updated_at):
    return {"id": user, "object": "user", "first_name": first_name, "last_name": "Soak",
            "email_addresses": [{"id": "idn_1", "email_address": f"{user}@example.com", "object": "email_address"}],
            "primary_email_address_id": "idn_1", "image_url": "", "created_at": 1_700_000_000_000,
            "updated_at": updated_at, "public_metadata": {}}


def membership_data(user, team, role, updated_at):
    return {"id": f"orgmem_{user}", "object": "organization_membership", "role": role, "created_at": 1,
            "updated_at": updated_at, "public_metadata": {}, "private_metadata": {},
            "organization": {"id": team, "name": "Demo", "object": "organization", "slug": "demo", "created_at": 1,
                             "updated_at": 1, "public_metadata": {}},
            "public_user_data": {"user_id": user, "identifier": f"{user}@example.com", "first_name": None,
                                 "last_name": None, "image_url": ""}}


def identity(client, kind, data, updated_at, delivery_id=None):
    body = identity_event(kind, data, updated_at)
    delivery_id = delivery_id or f"msg_{uuid.uuid4().hex}"
    outcome, _ = client.deliver("identity-webhook", "/api/webhooks/identity", IDENTITY_SECRET, "svix-", delivery_id, body)
    return outcome, delivery_id, body


def guest_event(client, demo, kind, data):
    event_id = f"evt_{uuid.uuid4().hex}"
    body = {"type": kind, "eventId": event_id, "occurredAt": rfc3339(datetime.now(timezone.utc)),
            "teamId": demo["team_id"], "locationId": demo["location_id"], "data": data}
    outcome, _ = client.deliver(kind, "/api/automation/coupons", COUPON_SECRET, "webhook-", f"msg_{uuid.uuid4().hex}", body)
    return outcome, event_id


# --- setup -----------------------------------------------------------------------------------------


def start_fakes(state, fakes_binary, keys_file):
    """A chat and push fake on each instance host's loopback, logging what they were sent."""
    net = Net(state)
    for node in cluster.APP_NODES:
        cluster.spawn(state, f"fakes-{node}", net.ns(node),
                      [fakes_binary, "serve", str(FAKES_PORT), str(keys_file), str(fakes_log(node))])
    cluster.wait_for("the chat and push fakes", lambda: all(fakes_log(n).exists() for n in cluster.APP_NODES), 20)


def fakes_log(node):
    return cluster.HOME / f"fakes-{node}.jsonl"


def setup(state, history, fake_keys):
    """The team as the run finds it: its chat, an admin and a member (by the identity provider's
    webhooks) with a device each, and a coupon offer. Any step failing stops the run."""
    demo = state["demo"]
    admin = Client(state, history, "setup", user=ADMIN)
    member = Client(state, history, "setup", user=MEMBER, role="member")
    stamp = next(STAMPS)
    steps = [
        ("chat", lambda: admin.op("setup", "PUT", "/api/team/settings",
                                  {"chatWebhookUrl": f"http://127.0.0.1:{FAKES_PORT}/chat/team"})),
    ]
    for user, role in ((ADMIN, "org:admin"), (MEMBER, "org:member")):
        steps.append((f"{user} created", lambda u=user: identity(admin, "user.created", user_data(u, "v0", stamp), stamp)[:1]))
        steps.append((f"{user} joined", lambda u=user, r=role: identity(
            admin, "organizationMembership.created", membership_data(u, demo["team_id"], r, stamp), stamp)[:1]))
    for client, device in ((admin, fake_keys["devices"][0]), (member, fake_keys["devices"][1])):
        subscription = {"endpoint": f"http://127.0.0.1:{FAKES_PORT}/push/{device['name']}",
                        "keys": {"p256dh": device["p256dh"], "auth": device["auth"]}}
        steps.append((f"{client.user}'s device", lambda c=client, s=subscription: c.op("setup", "POST", "/api/push/subscribe", s, auth="session")))
    offer = {}
    steps.append(("coupon offer", lambda: offer.update(admin.op("setup", "POST", "/api/coupons/offers", {
        "locationId": demo["location_id"], "name": "Soak fries", "capacity": 40})[1] or {}) or ("ok",)))
    for name, step in steps:
        outcome = step()[0]
        if outcome != "ok" or (name == "coupon offer" and "id" not in offer):
            raise RuntimeError(f"setup: {name} was {outcome}")
    return {"offer": offer["id"], "devices": {ADMIN: fake_keys["devices"][0]["name"], MEMBER: fake_keys["devices"][1]["name"]}}


# --- the workload ----------------------------------------------------------------------------------


class Worker:
    """One client's loop of operations, chosen by weight from the seeded generator."""

    def __init__(self, client, rng, demo, team, expected):
        self.client, self.rng, self.demo, self.team, self.expected = client, rng, demo, team, expected
        self.incidents, self.reservations, self.feedback, self.names = [], [], [], {}
        self.operations = [(18, self.incident), (8, self.comment), (5, self.status), (8, self.contact), (5, self.sales),
                           (2, self.goals), (5, self.shift_report), (2, self.manager_report), (8, self.read),
                           (6, self.reserve), (3, self.redeem), (2, self.rate), (3, self.rename), (1, self.push),
                           (1, self.announce)]
        self.total = sum(weight for weight, _ in self.operations)

    def run(self, stop):
        while not stop.is_set():
            pick = self.rng.uniform(0, self.total)
            for weight, operation in self.operations:
                pick -= weight
                if pick <= 0:
                    operation()
                    break
            time.sleep(self.rng.uniform(0.01, 0.05))

    def marker(self):
        return str(uuid.uuid4())

    def incident(self):
        marker = self.marker()
        outcome, body, key = self.client.create("incident", "/api/incidents", {
            "locationId": self.demo["location_id"], "type": "Maintenance", "severity": "low", "notes": f"soak {marker}"})
        self.expected.add("incident", outcome, key, marker=marker)
        if outcome == "ok":
            self.incidents.append(body["id"])

    def comment(self):
        if self.incidents:
            marker = self.marker()
            outcome, _, key = self.client.create("comment", f"/api/incidents/{self.rng.choice(self.incidents)}/comments",
                                                 {"content": f"soak {marker}"})
            self.expected.add("comment", outcome, key, marker=marker)

    def status(self):
        if self.incidents:
            status = self.rng.choice(["investigating", "deferred", "resolved", "reported"])
            self.client.op("status", "PATCH", f"/api/incidents/{self.rng.choice(self.incidents)}", {"status": status})

    def contact(self):
        marker = self.marker()
        outcome, body, key = self.client.create("contact", "/api/contacts", {"name": f"soak {marker}", "phone": "+15555550100"})
        self.expected.add("contact", outcome, key, marker=marker)
        if outcome == "ok" and self.rng.random() < 0.3:
            self.client.op("contact-delete", "DELETE", f"/api/contacts/{body['id']}")

    def sales(self):
        rows = [{"locationId": self.demo["location_id"], "date": self.demo["week_of"], "block": "Lunch",
                 "food": round(self.rng.uniform(1, 500), 2), "beverage": 0, "other": 0, "guests": 1}]
        self.client.op("sales", "POST", "/api/analytics/sales", {"teamId": self.demo["team_id"], "rows": rows}, auth="key")

    def goals(self):
        goals = [{"dayOfWeek": day, "salesGoal": self.rng.randint(1000, 3000), "laborPctTarget": 25, "splhTarget": 60}
                 for day in range(7)]
        self.client.op("goals", "PUT", "/api/analytics/goals", {"teamId": self.demo["team_id"], "goals": goals}, auth="key")

    def report_date(self):
        # Slots are one per location, date and shift: a long span of dates keeps conflicts rare.
        return (date.today() - timedelta(days=self.rng.randint(1, 3000))).isoformat()

    def shift_report(self):
        body = {"locationId": self.demo["location_id"], "date": self.report_date(),
                "shift": self.rng.choice(["morning", "afternoon", "evening"]), "actualSales": 2450.5,
                "goalSales": 2300, "hero": "Maria"}
        outcome, answer, key = self.client.create("shift-report", "/api/reports/shift", body)
        self.expected.add("shift-report", outcome, key, id=(answer or {}).get("id"))

    def manager_report(self):
        body = {"locationId": self.demo["location_id"], "date": self.report_date(), "totalSales": 8120.75,
                "employeeReviews": [{"employeeName": "Maria", "employeeKey": "7s-1", "rating": 5, "notes": "soak"}]}
        outcome, answer, key = self.client.create("manager-report", "/api/reports/manager", body)
        self.expected.add("manager-report", outcome, key, id=(answer or {}).get("id"))

    def read(self):
        team, week = self.demo["team_id"], self.demo["week_of"]
        path = self.rng.choice([f"/api/analytics/optimization?teamId={team}&weekOf={week}",
                                f"/api/analytics/variance?teamId={team}&weekOf={week}",
                                f"/api/analytics/forecast?teamId={team}&weekOf={self.demo['this_week_of']}",
                                f"/api/schedule/{self.demo['location_slug']}"])
        self.client.op("report", "GET", path, auth="key")

    def reserve(self):
        reservation = str(uuid.uuid4())
        expires = datetime.now(timezone.utc) + timedelta(seconds=self.rng.choice([20, 600]))
        outcome, event = guest_event(self.client, self.demo, "reservation.created", {
            "reservationId": reservation, "offerId": self.team["offer"], "guestId": f"guest-{self.client.process}",
            "expiresAt": rfc3339(expires)})
        self.expected.add("reservation", outcome, event=event, id=reservation)
        if outcome == "ok":
            self.reservations.append(reservation)

    def redeem(self):
        if self.reservations:
            reservation = self.reservations.pop(self.rng.randrange(len(self.reservations)))
            outcome, event = guest_event(self.client, self.demo, "reservation.redeemed", {"reservationId": reservation})
            self.expected.add("redemption", outcome, event=event, id=reservation)

    def rate(self):
        """Guest feedback; now and then the producer sends the same feedback again under a new event."""
        if self.feedback and self.rng.random() < 0.3:
            feedback, rating = self.rng.choice(self.feedback)
        else:
            feedback, rating = f"fb_{uuid.uuid4().hex}", self.rng.choice([1, 2, 5])
        outcome, event = guest_event(self.client, self.demo, "feedback.submitted", {
            "feedbackId": feedback, "guestId": "guest-soak", "rating": rating, "comment": "soak"})
        self.expected.add("feedback", outcome, event=event, id=feedback, rating=rating)
        if outcome == "ok":
            self.feedback.append((feedback, rating))

    def rename(self):
        """The identity provider's user.updated; now and then the same delivery again (same webhook-id)."""
        user = self.rng.choice([ADMIN, MEMBER])
        again = self.names.get(user)
        if again and self.rng.random() < 0.3:
            outcome, _ = self.client.deliver("identity-webhook", "/api/webhooks/identity", IDENTITY_SECRET, "svix-",
                                             again[0], again[1])
            self.expected.add("rename-again", outcome, id=again[0])
            return
        stamp = next(STAMPS)  # milliseconds, increasing, as the provider's updated_at is
        name = f"n{stamp}"
        outcome, delivery, body = identity(self.client, "user.updated", user_data(user, name, stamp), stamp)
        self.expected.add("rename", outcome, id=delivery, user=user, name=name, stamp=stamp)
        self.names[user] = (delivery, body)

    def push(self):
        marker = self.marker()
        outcome, _, key = self.client.create("push", "/api/push/send",
                                             {"title": f"soak {marker}", "body": "soak", "targetUserId": MEMBER})
        self.expected.add("push", outcome, key, marker=marker)

    def announce(self):
        marker = self.marker()
        outcome, _, key = self.client.create("announcement", "/api/announcements", {
            "title": f"soak {marker}", "body": "soak", "publishAt": rfc3339(datetime.now(timezone.utc))})
        self.expected.add("announcement", outcome, key, marker=marker)


def cron(client, stop):
    """The scheduler, its periods compressed: every job every few seconds, on any instance."""
    while not stop.is_set():
        for job in JOBS:
            client.op("cron", "GET", job, auth="cron")
        stop.wait(3)
