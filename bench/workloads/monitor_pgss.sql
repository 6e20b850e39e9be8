SELECT * FROM pg_stat_statements;
