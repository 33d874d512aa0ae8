DROP TABLE scheduler_roles;
