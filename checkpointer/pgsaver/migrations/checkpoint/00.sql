CREATE TABLE IF NOT EXISTS {checkpoint_migrations} (
    v INTEGER PRIMARY KEY
);
