DROP TABLE punch_sync_state;
DROP TABLE time_punches;
