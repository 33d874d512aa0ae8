DROP TABLE schedule_shifts;
DROP TABLE labor_goals;
DROP TABLE sales_facts;
