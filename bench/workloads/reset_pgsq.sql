SELECT pg_stat_queries_reset();
