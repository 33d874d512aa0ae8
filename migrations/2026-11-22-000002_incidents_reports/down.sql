DROP TABLE manager_reports;
DROP TABLE shift_reports;
DROP TABLE incident_status_changes;
DROP TABLE incident_comments;
DROP TABLE incidents;
DROP TABLE contacts;
