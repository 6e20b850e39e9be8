-- mixed, cold part: a 2-way join of u:a with one of the :ncold_per tables
-- that follow it: ntables * ncold_per distinct statements (100,000 by default)
\set a random(1, :ntables)
\set b (:a + random(1, :ncold_per) - 1) % :ntables + 1
SELECT count(*) FROM u:a, u:b WHERE u:a.id = u:b.id;
