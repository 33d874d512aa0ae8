DROP TABLE schedule_proposal_coverage;
DROP TABLE schedule_proposal_shifts;
DROP TABLE schedule_proposals;
DROP TABLE planning_availability;
