CREATE OR REPLACE FUNCTION {erasure_fence}(p_subject TEXT, p_known BIGINT) RETURNS void LANGUAGE plpgsql AS $fence$
BEGIN
	PERFORM pg_advisory_xact_lock_shared(hashtextextended('memvault_erasure/' || p_subject, 0));
	PERFORM 1 FROM {meta} WHERE name = 'erased_subject:' || p_subject AND value::bigint > p_known;
	IF FOUND THEN
		RAISE EXCEPTION 'memvault: the data database records an erasure of subject % that the key table (% erasures) does not count: a copy or a backup of the key table', p_subject, p_known
			USING ERRCODE = '{fence_sqlstate}';
	END IF;
END
$fence$;
