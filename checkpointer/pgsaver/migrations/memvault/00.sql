CREATE TABLE IF NOT EXISTS {memvault_checkpoint_migrations} (
    v INTEGER PRIMARY KEY
);
