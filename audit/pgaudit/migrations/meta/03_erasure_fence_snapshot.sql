CREATE OR REPLACE FUNCTION {erasure_fence}(p_subject TEXT, p_known BIGINT) RETURNS void LANGUAGE plpgsql AS $fence$
DECLARE
	v_mark TEXT;
BEGIN
	PERFORM pg_advisory_xact_lock_shared(hashtextextended('memvault_erasure/' || p_subject, 0));
	-- A REPEATABLE READ or SERIALIZABLE transaction reads in a snapshot
	-- taken when it began, which cannot see an erasure recorded since.
	-- Every erasure rewrites its subject's epoch row (one of 64, by a hash
	-- of the subject, so that a long transaction holds off the erasures of
	-- a 64th of the subjects, not all) after recording its mark: locking
	-- that row fails (serialization failure, SQLSTATE 40001) when it
	-- changed after the snapshot, and makes an erasure arriving later wait
	-- for this transaction. READ COMMITTED reads each statement in a fresh
	-- snapshot, after the lock above.
	IF current_setting('transaction_isolation') <> 'read committed' THEN
		PERFORM 1 FROM {meta} WHERE name = 'erasure_epoch:' || ((hashtextextended(p_subject, 64) % 64 + 64) % 64) FOR SHARE;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'memvault: the data database holds no erasure epoch row for subject %: a transaction that is not READ COMMITTED cannot tell whether it missed an erasure (memvault restores the rows as it opens)', p_subject
				USING ERRCODE = '{epoch_sqlstate}';
		END IF;
	END IF;
	SELECT value INTO v_mark FROM {meta} WHERE name = 'erased_subject:' || p_subject;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	-- Two statements, not one expression: a cast of a value that is not a
	-- count must never run (and a mark that is not one refuses).
	IF v_mark !~ '^(0|[1-9][0-9]{0,17})$' THEN
		RAISE EXCEPTION 'memvault: the data database''s erasure record of subject % is not a count: its writes are refused', p_subject
			USING ERRCODE = '{fence_sqlstate}';
	END IF;
	IF v_mark::bigint > p_known THEN
		RAISE EXCEPTION 'memvault: the data database records an erasure of subject % that the key table (% erasures) does not count: a copy or a backup of the key table', p_subject, p_known
			USING ERRCODE = '{fence_sqlstate}';
	END IF;
END
$fence$;
