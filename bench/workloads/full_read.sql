-- full_read (bench/full_read.sh): the reader beside the writers, the whole
-- view with query texts, again and again without pause (pgbench -c 1)
SELECT * FROM :view;
