-- PostgreSQL only (migrate.go): the check that ends a batch's commit
-- statement (outbox.go, groupStatement). A batch's summed balance and volume
-- updates must each change the row they were decided on; the statement
-- counts the rows they returned and this function fails the statement,
-- and with it the transaction, when they are fewer. The check runs inside
-- SQL because the statement goes out with the batch's COMMIT in one
-- pipeline (batch_tx.go): an error there keeps the COMMIT from running,
-- where a count compared in Go would come after it. SQLSTATE PD001 is
-- read back as errQueuedDeltaMissed.
CREATE OR REPLACE FUNCTION paymentsd_expect_rows(got BIGINT, want BIGINT) RETURNS BIGINT LANGUAGE plpgsql AS $$
BEGIN IF got IS DISTINCT FROM want THEN RAISE EXCEPTION '% of % rows changed', got, want USING ERRCODE = 'PD001'; END IF; RETURN got; END
$$;
