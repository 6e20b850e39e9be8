-- scaling (bench/scaling.sh): one of :nstmt statements differing only by
-- their alias (PostgreSQL 18 jumbles a relation by its alias, so each has a
-- query id of its own).  :i counts this client's transactions (pgbench keeps
-- a client's variables from one transaction to the next): the first :warm run
-- the statements in turn, the others pick one at random.  At transaction :m1,
-- then after each phase of :lo and of :hi transactions up to :mend (the
-- phases alternate), "SELECT pg_sleep(0)" marks a phase for callgrind's
-- --dump-before=pg_sleep.  Before it, pg_stat_force_next_flush() has the
-- backend flush its statistics when it next goes idle: pg_stat_queries then
-- merges every count still pending, so a phase holds the merges of its own
-- statements (else how many a phase holds depends on where the once-a-second
-- flushes fall, about 200 instructions per statement either way at 50,000).
-- :m1 = 0 marks nothing.
\set i :i + 1
\if :i <= :warm
\set k (:i - 1) % :nstmt + 1
\else
\set k random(1, :nstmt)
\endif
\set aid random(1, 100000)
\set into (:i - :m1) % (:lo + :hi)
\if :m1 > 0 and :i >= :m1 and :i <= :mend and (:into = 0 or :into = :lo)
SELECT pg_stat_force_next_flush();
SELECT pg_sleep(0);
\endif
SELECT abalance FROM pgbench_accounts a:k WHERE aid = :aid;
