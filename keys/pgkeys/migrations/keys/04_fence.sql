CREATE OR REPLACE FUNCTION {fence}(p_subject TEXT, p_key_id TEXT) RETURNS void LANGUAGE plpgsql AS $fence$
BEGIN
	PERFORM 1 FROM {data_keys} WHERE key_id = p_key_id FOR SHARE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'memvault: data key % of subject % was destroyed (the subject was erased)', p_key_id, p_subject
			USING ERRCODE = '{fence_sqlstate}';
	END IF;
END
$fence$;
