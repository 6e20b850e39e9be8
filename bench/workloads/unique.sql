-- unique: a random 3-way join over one-row tables u1..u:ntables, written
-- without table aliases so that every choice of tables has its own query id
-- (PostgreSQL 18 jumbles aliased relations by alias name).  Three different
-- tables, in order: about ntables * (ntables/2 - 1)^2 distinct statements.
\set a random(1, :ntables)
\set b (:a + random(1, :ntables / 2 - 1) - 1) % :ntables + 1
\set c (:b + random(1, :ntables / 2 - 1) - 1) % :ntables + 1
SELECT count(*) FROM u:a, u:b, u:c WHERE u:a.id = u:b.id AND u:b.id = u:c.id;
