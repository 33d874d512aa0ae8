DROP TABLE planning_rules;
