/*
 * index_checks.c
 *		Opening an index for pg_index_stats and refusing, with a specific
 *		error code and message, every relation that cannot be examined.
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "commands/defrem.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "pg_index_stats.h"

/*
 * Open the relation with the given OID under AccessShareLock and make sure it
 * is a valid, readable index of access method "amoid" ("amlabel" names that
 * method in messages).  Returns the open relation; errors out otherwise.
 *
 * A regclass argument may hold any OID (a number is taken as it is), so a
 * missing relation is a user's error, reported as such rather than as the
 * internal error relation_open raises.  Its existence is checked once the
 * lock is held, so that a concurrent drop is reported the same way.
 */
Relation
pis_open_index(Oid indexoid, Oid amoid, const char *amlabel)
{
	Relation	rel;
	char		relkind;
	const char *relname;

	rel = try_relation_open(indexoid, AccessShareLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("relation with OID %u does not exist", indexoid)));
	relkind = rel->rd_rel->relkind;
	relname = RelationGetRelationName(rel);

	if (relkind == RELKIND_PARTITIONED_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot report statistics of partitioned index \"%s\"",
						relname),
				 errdetail("A partitioned index has no storage of its own."),
				 errhint("Call the function on the index of each partition instead.")));

	if (relkind != RELKIND_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("relation \"%s\" is not an index", relname),
				 errdetail_relkind_not_supported(relkind)));

	if (rel->rd_rel->relam != amoid)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("index \"%s\" is not a %s index", relname, amlabel),
				 errdetail("Index \"%s\" uses access method \"%s\".",
						   relname, get_am_name(rel->rd_rel->relam))));

	/*
	 * The pages of a temporary index belonging to another backend sit in that
	 * backend's local buffers, out of our reach.
	 */
	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot read temporary index \"%s\" of another session",
						relname)));

	/*
	 * An index left behind by a failed concurrent build may be incomplete or
	 * not even initialized; its figures would be misleading at best.
	 */
	if (!rel->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" is not valid", relname),
				 errhint("Drop the index, or rebuild it with REINDEX.")));

	return rel;
}

/* Close an index opened by pis_open_index, releasing its lock. */
void
pis_close_index(Relation rel)
{
	relation_close(rel, AccessShareLock);
}
