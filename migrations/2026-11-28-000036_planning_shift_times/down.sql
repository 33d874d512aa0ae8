DROP TABLE planning_shift_times;
