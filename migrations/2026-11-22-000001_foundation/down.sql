DROP TABLE job_runs;
DROP TABLE locations;
DROP TABLE memberships;
DROP TABLE users;
DROP TABLE teams;
