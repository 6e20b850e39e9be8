-- mixed, hot part: one of :nhot statements (one per table u1..u:nhot)
\set k random(1, :nhot)
SELECT count(*) FROM u:k;
