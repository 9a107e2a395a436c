-- A runbook run's trace is the packets it appended (run_id = the run): read them in order.
CREATE INDEX packets_run ON packets (run_id);
