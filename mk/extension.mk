# mk/extension.mk -- shared PGXS glue for this repository's extensions.
#
# Each extension's Makefile sets EXTENSION, MODULE_big, OBJS, DATA and the test
# lists (REGRESS, ISOLATION, TAP_TESTS), then includes this file.  Tests live
# under test/ (sql, expected, specs, t) as in pgvector.  The targets below run
# one kind of test each against a temporary instance, so scripts/test can keep
# going after a failure and count every result.

PG_CONFIG ?= pg_config
PG_CPPFLAGS += -I$(srcdir)/src
# Warnings are shown, never fatal, in a user's build: a newer compiler may
# warn where ours does not.  scripts/test fails on any warning (-Werror).
PG_CFLAGS += -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	-Wno-sign-compare -Wno-clobbered -Wno-cast-function-type

TEST_CONF ?= $(srcdir)/test/$(EXTENSION).conf
ISOLATION_CONF ?= $(TEST_CONF)
REGRESS_OPTS += --inputdir=$(srcdir)/test --temp-instance=$(CURDIR)/tmp_regress \
	$(if $(wildcard $(TEST_CONF)),--temp-config=$(TEST_CONF))
ISOLATION_OPTS += --inputdir=$(srcdir)/test --temp-instance=$(CURDIR)/tmp_isolation \
	$(if $(wildcard $(ISOLATION_CONF)),--temp-config=$(ISOLATION_CONF))
PROVE_TESTS ?= $(wildcard test/t/*.pl)
PROVE_FLAGS += -I $(srcdir)/test/perl

EXTRA_CLEAN += tmp_regress tmp_isolation results output_iso regression.diffs regression.out

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS does not track header dependencies: rebuild everything when one changes
$(OBJS): $(wildcard $(srcdir)/src/*.h)

# Objects compiled against another PostgreSQL installation (the same tree is
# built for 18 and 19, assert and release builds), or one configured anew
# (with injection points, say), are rebuilt: .built-for-pg names the major
# version, installation and configure options they are for, and is rewritten,
# so newer than every object, when that changes.  (A stamp named after them
# would not do: PGXS declares every target .SECONDARY, and a missing
# secondary prerequisite does not force a rebuild.)
BUILT_FOR = $(MAJORVERSION) $(bindir) $(shell $(PG_CONFIG) --configure | cksum)
$(OBJS): .built-for-pg
.built-for-pg: force-version-check
	@[ "$$(cat $@ 2>/dev/null)" = "$(BUILT_FOR)" ] || echo "$(BUILT_FOR)" >$@
.PHONY: force-version-check
EXTRA_CLEAN += .built-for-pg

.PHONY: regresscheck isolationcheck tapcheck

regresscheck:
ifdef REGRESS
	$(pg_regress_installcheck) $(REGRESS_OPTS) $(REGRESS)
endif

isolationcheck:
ifdef ISOLATION
	$(pg_isolation_regress_installcheck) $(ISOLATION_OPTS) $(ISOLATION)
endif

tapcheck:
ifneq ($(PROVE_TESTS),)
	$(prove_installcheck)
endif
