-- Whether a location ever scheduled an employee key (the availability check, staff from history)
-- probed schedule_shifts by location and read every shift of the location's history; this index
-- answers it from the index alone. Built CONCURRENTLY, outside a transaction (metadata.toml), so
-- writes to the table go on while it builds. A build that fails leaves the index invalid; the
-- migration runner rebuilds such an index before the next try, which IF NOT EXISTS then keeps.
-- One statement: a query string of several runs as one transaction, which CONCURRENTLY refuses; the
-- runner's session sets the lock (2 s) and statement (5 min) timeouts instead.
-- squawk-ignore require-lock-timeout, require-statement-timeout
CREATE INDEX CONCURRENTLY IF NOT EXISTS schedule_shifts_location_employee_idx
    ON schedule_shifts (location_id, employee_key);
