-- Fair workweek: a proposal for a week inside the notice period lists each change to the published
-- schedule with the premium it owes: [{"employeeKey", "date", "kind", "from": [dept, block] | null,
-- "to": ..., "premium"}].
ALTER TABLE schedule_proposals ADD COLUMN changes JSONB;
