DROP TABLE announcements;
DROP TABLE mvp_awards;
DROP TABLE compliance_weeks;
DROP TABLE nudges;
