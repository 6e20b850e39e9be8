SELECT * FROM pg_stat_queries;
