-- Refuse while events wait to be chained: dropping them would lose them.
-- A running oml-server chains them within a sweep interval. The lock keeps
-- a commit from slipping in between the check and the drop.
LOCK TABLE platform.journal_pending IN ACCESS EXCLUSIVE MODE;
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM platform.journal_pending) THEN
        RAISE EXCEPTION 'platform.journal_pending holds events not yet chained: run oml-server until its journal sweep has chained them, then migrate down';
    END IF;
END $$;
DROP TABLE platform.journal_pending;
