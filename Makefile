# Top-level Makefile: builds, installs and tests every extension in this
# repository against the PostgreSQL found by PG_CONFIG.
#
#   make PG_CONFIG=/path/to/pg_config            build
#   make PG_CONFIG=/path/to/pg_config install    install
#   make PG_CONFIG=/path/to/pg_config installcheck
#
# scripts/test wraps all of this for the assert build and prints a summary.

PG_CONFIG ?= pg_config
EXTENSIONS ?= pg_stat_queries pg_index_stats

.PHONY: all install installcheck regresscheck isolationcheck tapcheck clean

all install installcheck regresscheck isolationcheck tapcheck clean:
	@set -e; for ext in $(EXTENSIONS); do \
		$(MAKE) -C $$ext PG_CONFIG=$(PG_CONFIG) $@; \
	done
