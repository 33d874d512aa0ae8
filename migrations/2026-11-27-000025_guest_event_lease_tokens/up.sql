-- Each claim of a guest event gets its own token: only the worker that holds the current claim
-- may complete the event or put it back (a paused worker whose lease ran out may not).
ALTER TABLE guest_events ADD COLUMN lease_token uuid;
