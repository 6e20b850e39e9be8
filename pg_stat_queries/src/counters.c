/*-------------------------------------------------------------------------
 *
 * counters.c
 *		Counter arithmetic: adding one execution, merging two summaries.
 *
 * Timing summaries are kept as count, total, min, max, mean and sum of
 * squared deviations: one observation is added with Welford's method, and
 * two summaries are merged with Chan et al.'s parallel formula, so pending
 * counters can be merged into shared ones in any grouping with the same
 * mean and variance as one pass over every observation.
 *
 * Execution times also go to the latency histogram (histogram.c); rare
 * counters go to their own chunk beside the entry (textarea.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/timestamp.h"

#include "pg_stat_queries.h"

/* Add the I/O times of one execution to local counters */
static void
add_io_times(PgsqRareCounters *c, const BufferUsage *bufusage)
{
	c->shared_blk_read_time += INSTR_TIME_GET_MILLISEC(bufusage->shared_blk_read_time);
	c->shared_blk_write_time += INSTR_TIME_GET_MILLISEC(bufusage->shared_blk_write_time);
	c->local_blk_read_time += INSTR_TIME_GET_MILLISEC(bufusage->local_blk_read_time);
	c->local_blk_write_time += INSTR_TIME_GET_MILLISEC(bufusage->local_blk_write_time);
	c->temp_blk_read_time += INSTR_TIME_GET_MILLISEC(bufusage->temp_blk_read_time);
	c->temp_blk_write_time += INSTR_TIME_GET_MILLISEC(bufusage->temp_blk_write_time);
}

/* Add the local and temporary block counts of one execution */
static void
add_local_temp_blocks(PgsqRareCounters *c, const BufferUsage *bufusage)
{
	c->local_blks_hit += bufusage->local_blks_hit;
	c->local_blks_read += bufusage->local_blks_read;
	c->local_blks_dirtied += bufusage->local_blks_dirtied;
	c->local_blks_written += bufusage->local_blks_written;
	c->temp_blks_read += bufusage->temp_blks_read;
	c->temp_blks_written += bufusage->temp_blks_written;
}

/*
 * Empty counters of a statement: all but the rare ones, which are zeroed
 * when an execution first has some (rare_for_add), and the histogram's
 * counts, zeroed by a second execution (pgsq_add_execution).  Pending
 * counters are emptied for nearly every execution of a statement among
 * many, and those two parts are more than 70% of their bytes: each line of
 * them zeroed would cost a cache line written that most such statements
 * never use.
 */
void
pgsq_counters_clear(PgsqCounters *counters)
{
	memset(counters, 0, offsetof(PgsqCounters, main.exec_hist.counts));
	memset(&counters->main.plan, 0,
		   offsetof(PgsqCounters, rare) - offsetof(PgsqCounters, main.plan));
}

/* The rare counters of counters, zeroed first if they held none yet */
static inline PgsqRareCounters *
rare_for_add(PgsqCounters *counters)
{
	if (!counters->has_rare)
	{
		memset(&counters->rare, 0, sizeof(counters->rare));
		counters->has_rare = true;
	}
	return &counters->rare;
}

/*
 * Add the block and WAL counts of one execution (either may be NULL) but
 * shared hits.  Counters that most executions leave at zero are written
 * only when not: the pending data of a statement among many is often out of
 * the CPU's cache, and each line written costs a miss.
 */
void
pgsq_add_rare_usage(PgsqCounters *counters, const BufferUsage *bufusage,
					const WalUsage *walusage)
{
	PgsqRareCounters *r;

	if (bufusage)
	{
		if (bufusage->shared_blks_read | bufusage->shared_blks_dirtied |
			bufusage->shared_blks_written)
		{
			r = rare_for_add(counters);
			r->shared_blks_read += bufusage->shared_blks_read;
			r->shared_blks_dirtied += bufusage->shared_blks_dirtied;
			r->shared_blks_written += bufusage->shared_blks_written;
		}
		if (bufusage->local_blks_hit | bufusage->local_blks_read |
			bufusage->local_blks_dirtied | bufusage->local_blks_written |
			bufusage->temp_blks_read | bufusage->temp_blks_written)
			add_local_temp_blocks(rare_for_add(counters), bufusage);
		/* I/O times are zero unless track_io_timing is on and I/O was done */
		if (unlikely(!INSTR_TIME_IS_ZERO(bufusage->shared_blk_read_time) ||
					 !INSTR_TIME_IS_ZERO(bufusage->shared_blk_write_time) ||
					 !INSTR_TIME_IS_ZERO(bufusage->local_blk_read_time) ||
					 !INSTR_TIME_IS_ZERO(bufusage->local_blk_write_time) ||
					 !INSTR_TIME_IS_ZERO(bufusage->temp_blk_read_time) ||
					 !INSTR_TIME_IS_ZERO(bufusage->temp_blk_write_time)))
			add_io_times(rare_for_add(counters), bufusage);
	}
	if (walusage && (walusage->wal_records | walusage->wal_fpi |
					 walusage->wal_bytes | walusage->wal_buffers_full))
	{
		r = rare_for_add(counters);
		r->wal_records += walusage->wal_records;
		r->wal_fpi += walusage->wal_fpi;
		r->wal_bytes += walusage->wal_bytes;
		r->wal_buffers_full += walusage->wal_buffers_full;
	}
}

/* Count an execution of a cached plan, generic or custom */
void
pgsq_add_plan_cache(PgsqCounters *counters, PgsqPlanCache plan_cache)
{
	PgsqRareCounters *r = rare_for_add(counters);

	if (plan_cache == PGSQ_PLAN_GENERIC)
		r->generic_plan_calls++;
	else
		r->custom_plan_calls++;
}

/* Add one planning or execution of a statement to local counters */
void
pgsq_add_execution(PgsqCounters *counters, const PgsqExecution *exec)
{
	PgsqMainCounters *c = &counters->main;
	PgsqRareCounters *r;
	PgsqPhase	phase = exec->phase;
	double		ms = exec->ms;
	const BufferUsage *bufusage = exec->bufusage;
	const JitInstrumentation *jitusage = exec->jitusage;

	if (phase == PGSQ_EXEC)
	{
		pgsq_add_exec_time(c, ms);
		c->rows += exec->rows;
		c->last_executed = GetCurrentStatementStartTimestamp();
	}
	pgsq_add_timing(PGSQ_TIMING(c, phase), ms);
	if (bufusage)
		c->shared_blks_hit += bufusage->shared_blks_hit;
	pgsq_add_rare_usage(counters, bufusage, exec->walusage);
	if (jitusage)
	{
		r = rare_for_add(counters);
		r->jit_functions += jitusage->created_functions;
		r->jit_generation_time += INSTR_TIME_GET_MILLISEC(jitusage->generation_counter);
		if (INSTR_TIME_GET_MILLISEC(jitusage->inlining_counter))
			r->jit_inlining_count++;
		r->jit_inlining_time += INSTR_TIME_GET_MILLISEC(jitusage->inlining_counter);
		if (INSTR_TIME_GET_MILLISEC(jitusage->optimization_counter))
			r->jit_optimization_count++;
		r->jit_optimization_time += INSTR_TIME_GET_MILLISEC(jitusage->optimization_counter);
		if (INSTR_TIME_GET_MILLISEC(jitusage->emission_counter))
			r->jit_emission_count++;
		r->jit_emission_time += INSTR_TIME_GET_MILLISEC(jitusage->emission_counter);
		if (INSTR_TIME_GET_MILLISEC(jitusage->deform_counter))
			r->jit_deform_count++;
		r->jit_deform_time += INSTR_TIME_GET_MILLISEC(jitusage->deform_counter);
	}
	if (exec->parallel_to_launch | exec->parallel_launched)
	{
		r = rare_for_add(counters);
		r->parallel_workers_to_launch += exec->parallel_to_launch;
		r->parallel_workers_launched += exec->parallel_launched;
	}
	if (unlikely(exec->plan_cache != PGSQ_PLAN_NOT_CACHED))
		pgsq_add_plan_cache(counters, exec->plan_cache);
}

/*
 * Set a plan's counters to the executions counted in its statement's, all
 * of which ran that plan (pending.c: a mirrored plan): what a plan counts
 * of an execution (pgsq_record for the plan's key gets its time, rows and
 * buffer usage), and nothing of its planning, WAL, JIT or plan cache.
 */
void
pgsq_counters_copy_plan(PgsqCounters *plan, const PgsqCounters *stmt)
{
	const PgsqRareCounters *sr = &stmt->rare;

	pgsq_counters_clear(plan);
	plan->main.exec = stmt->main.exec;
	plan->main.rows = stmt->main.rows;
	plan->main.shared_blks_hit = stmt->main.shared_blks_hit;
	plan->main.last_executed = stmt->main.last_executed;
	if (stmt->main.exec_hist.used)
		plan->main.exec_hist = stmt->main.exec_hist;
	if (stmt->has_rare)
	{
		PgsqRareCounters *r = rare_for_add(plan);

		r->shared_blks_read = sr->shared_blks_read;
		r->shared_blks_dirtied = sr->shared_blks_dirtied;
		r->shared_blks_written = sr->shared_blks_written;
		r->local_blks_hit = sr->local_blks_hit;
		r->local_blks_read = sr->local_blks_read;
		r->local_blks_dirtied = sr->local_blks_dirtied;
		r->local_blks_written = sr->local_blks_written;
		r->temp_blks_read = sr->temp_blks_read;
		r->temp_blks_written = sr->temp_blks_written;
		r->shared_blk_read_time = sr->shared_blk_read_time;
		r->shared_blk_write_time = sr->shared_blk_write_time;
		r->local_blk_read_time = sr->local_blk_read_time;
		r->local_blk_write_time = sr->local_blk_write_time;
		r->temp_blk_read_time = sr->temp_blk_read_time;
		r->temp_blk_write_time = sr->temp_blk_write_time;
	}
}

/* Merge one phase's timing summary with Chan et al.'s parallel algorithm */
static void
merge_phase(PgsqEntryData *dst, const PgsqMainCounters *src, PgsqPhase phase)
{
	PgsqTiming *d = PGSQ_TIMING(&dst->counters, phase);
	const PgsqTiming *s = PGSQ_TIMING(src, phase);
	int64		n_a = d->calls;
	int64		n_b = s->calls;
	double		n = (double) (n_a + n_b);

	if (n_b == 0)
		return;

	if (n_a == 0)
	{
		d->mean_time = s->mean_time;
		d->sum_var_time = s->sum_var_time;
	}
	else
	{
		double		delta = s->mean_time - d->mean_time;

		d->mean_time += delta * n_b / n;
		d->sum_var_time += s->sum_var_time +
			delta * delta * ((double) n_a * n_b / n);
	}

	if (!dst->minmax_valid[phase])
	{
		d->min_time = s->min_time;
		d->max_time = s->max_time;
		dst->minmax_valid[phase] = true;
	}
	else
	{
		d->min_time = Min(d->min_time, s->min_time);
		d->max_time = Max(d->max_time, s->max_time);
	}

	d->calls += n_b;
	d->total_time += s->total_time;
}

/* Add pending counters to an entry's data; caller holds the entry lock */
static void
merge_main(PgsqEntryData *dst, const PgsqMainCounters *src)
{
	PgsqMainCounters *d = &dst->counters;

	/*
	 * A source that counted one time has it in min_time only (see
	 * PgsqCounters).  Else the histogram is empty exactly while min/max are
	 * unset (both start empty and are reset together): then it is a copy, as
	 * for every new entry.
	 */
	if (src->exec.calls > 0)
	{
		if (!src->exec_hist.used)
			pgsq_hist_add(&d->exec_hist, src->exec.min_time);
		else if (!dst->minmax_valid[PGSQ_EXEC])
			d->exec_hist = src->exec_hist;
		else
			pgsq_hist_merge(&d->exec_hist, &src->exec_hist,
							src->exec.min_time, src->exec.max_time);
	}

	merge_phase(dst, src, PGSQ_EXEC);
	merge_phase(dst, src, PGSQ_PLAN);

	d->rows += src->rows;
	d->shared_blks_hit += src->shared_blks_hit;
	d->last_executed = Max(d->last_executed, src->last_executed);
}

/*
 * Add rare counters to an entry's.  The groups most merges leave at zero
 * are not written then: with many statements the chunk is out of the CPU's
 * caches, and each of its cache lines touched costs a miss.
 */
static void
add_rare(PgsqRareCounters *d, const PgsqRareCounters *src)
{
	if (src->wal_records | src->wal_fpi | (int64) src->wal_bytes |
		src->wal_buffers_full | src->shared_blks_read |
		src->shared_blks_dirtied | src->shared_blks_written)
	{
		d->wal_records += src->wal_records;
		d->wal_fpi += src->wal_fpi;
		d->wal_bytes += src->wal_bytes;
		d->wal_buffers_full += src->wal_buffers_full;
		d->shared_blks_read += src->shared_blks_read;
		d->shared_blks_dirtied += src->shared_blks_dirtied;
		d->shared_blks_written += src->shared_blks_written;
	}
	if (src->local_blks_hit | src->local_blks_read |
		src->local_blks_dirtied | src->local_blks_written |
		src->temp_blks_read | src->temp_blks_written)
	{
		d->local_blks_hit += src->local_blks_hit;
		d->local_blks_read += src->local_blks_read;
		d->local_blks_dirtied += src->local_blks_dirtied;
		d->local_blks_written += src->local_blks_written;
		d->temp_blks_read += src->temp_blks_read;
		d->temp_blks_written += src->temp_blks_written;
	}
	if (src->shared_blk_read_time != 0 || src->shared_blk_write_time != 0 ||
		src->local_blk_read_time != 0 || src->local_blk_write_time != 0 ||
		src->temp_blk_read_time != 0 || src->temp_blk_write_time != 0)
	{
		d->shared_blk_read_time += src->shared_blk_read_time;
		d->shared_blk_write_time += src->shared_blk_write_time;
		d->local_blk_read_time += src->local_blk_read_time;
		d->local_blk_write_time += src->local_blk_write_time;
		d->temp_blk_read_time += src->temp_blk_read_time;
		d->temp_blk_write_time += src->temp_blk_write_time;
	}
	if (src->jit_functions | src->jit_inlining_count |
		src->jit_optimization_count | src->jit_emission_count |
		src->jit_deform_count || src->jit_generation_time != 0 ||
		src->jit_inlining_time != 0 || src->jit_optimization_time != 0 ||
		src->jit_emission_time != 0 || src->jit_deform_time != 0)
	{
		d->jit_functions += src->jit_functions;
		d->jit_generation_time += src->jit_generation_time;
		d->jit_inlining_count += src->jit_inlining_count;
		d->jit_inlining_time += src->jit_inlining_time;
		d->jit_optimization_count += src->jit_optimization_count;
		d->jit_optimization_time += src->jit_optimization_time;
		d->jit_emission_count += src->jit_emission_count;
		d->jit_emission_time += src->jit_emission_time;
		d->jit_deform_count += src->jit_deform_count;
		d->jit_deform_time += src->jit_deform_time;
	}
	if (src->parallel_workers_to_launch | src->parallel_workers_launched)
	{
		d->parallel_workers_to_launch += src->parallel_workers_to_launch;
		d->parallel_workers_launched += src->parallel_workers_launched;
	}
	if (src->generic_plan_calls | src->custom_plan_calls)
	{
		d->generic_plan_calls += src->generic_plan_calls;
		d->custom_plan_calls += src->custom_plan_calls;
	}
	if (src->failed_calls)
	{
		d->failed_calls += src->failed_calls;
		d->failed_exec_time += src->failed_exec_time;
		if (src->last_failed_at >= d->last_failed_at)
		{
			d->last_failed_at = src->last_failed_at;
			d->last_failed_sqlstate = src->last_failed_sqlstate;
		}
	}
}

/*
 * Add count executions that ended in an error to local counters: the time
 * they ran until then (ms, in all), the latest's SQLSTATE and when it was
 * noted.  Nothing else changes: the other counters count completed
 * executions.
 */
void
pgsq_add_failures(PgsqCounters *counters, int64 count, double ms,
				  int sqlstate, TimestampTz at)
{
	PgsqRareCounters *r = rare_for_add(counters);

	r->failed_calls += count;
	r->failed_exec_time += ms;
	if (at >= r->last_failed_at)
	{
		r->last_failed_at = at;
		r->last_failed_sqlstate = sqlstate;
	}
}

/*
 * Merge counters of a statement into its entry, whose lock the caller holds
 * exclusively.  Returns the calls the entry had before (0 if it is closed,
 * and nothing is merged).  Its first rare counts take *spare_rare, a chunk
 * the caller prepared before locking (pgsq_rare_spare_for): nothing is
 * allocated under the lock.
 */
int64
pgsq_merge_locked(PgsqSharedEntry *entry, const PgsqKey *key,
				  const PgsqCounters *counters, dsa_pointer *spare_rare)
{
	PgsqEntryData *data = &entry->data;
	int64		calls_before = 0;
	TimestampTz now;

	Assert(LWLockHeldByMeInMode(&entry->lock, LW_EXCLUSIVE));

	/*
	 * A closed entry is about to be dropped, and counts merged into it would
	 * go with it; a rare chunk given to it now would be lost instead of
	 * freed.
	 */
	if (pgsq_text_closed(entry))
		return 0;

	/*
	 * The clock is read under the lock: a reader of changes that did not see
	 * this merge read the entry before it, so its own start time is earlier
	 * (pg_stat_queries_changed() relies on it).
	 */
	now = GetCurrentTimestamp();
	if (data->stats_since == 0)
		pgsq_start_data(data, key, now);

	/* a 64-bit objid collision between two statements: keep the first */
	if (pgsq_key_equals(&data->key, key))
	{
		if (counters->has_rare)
		{
			PgsqRareCounters *rare = pgsq_rare_for_merge(entry, spare_rare);

			if (rare != NULL)
				add_rare(rare, &counters->rare);
		}
		calls_before = data->counters.exec.calls;
		merge_main(data, &counters->main);
#ifdef PGSQ_TEST_EXTRA_COUNTER
		data->test_extra += counters->main.exec.calls;
#endif
		if (counters->main.plan.calls + counters->main.exec.calls > 0 ||
			(counters->has_rare && counters->rare.failed_calls > 0))
		{
			/*
			 * An entry made without counts (for counts its dropped entry had
			 * pending, or at parse analysis) has no row until now: its text
			 * is stamped with the row's first change, so that a reader of
			 * changes gets it with the row.
			 */
			if (data->changed_at == 0 &&
				pg_atomic_read_u32(&entry->text_state) == PGSQ_TEXT_STORED)
				pgsq_text_set_stored_at(entry->text, now);
			data->changed_at = now;
		}
	}
	return calls_before;
}

/*
 * Start an entry's data: its key and start time.  The
 * caller holds the entry lock, or nobody else can see the entry yet.
 */
void
pgsq_start_data(PgsqEntryData *data, const PgsqKey *key, TimestampTz now)
{
	data->key = *key;
	data->stats_since = now;
	data->minmax_stats_since = now;
}

/*
 * Give an entry nobody can see yet the counts of its first executions: the
 * same result as pgsq_merge_locked into an empty entry, by a copy, with the
 * clock read once by the caller (the entry's start time).  Rare counts are
 * the caller's: a chunk prepared before (pgsq_rare_prepare).
 */
void
pgsq_fill_new_entry(PgsqEntryData *data, const PgsqCounters *first,
					TimestampTz now)
{
	Assert(data->counters.plan.calls == 0 &&
		   data->counters.exec.calls == 0);
	if (first->main.exec_hist.used)
		data->counters = first->main;
	else
	{
		/*
		 * Only the counts' one time, if any, goes to the histogram, still
		 * empty like the rest of a new entry (see PgsqCounters).
		 */
		Assert(!data->counters.exec_hist.used);
		memcpy(&data->counters, &first->main,
			   offsetof(PgsqMainCounters, exec_hist));
		data->counters.plan = first->main.plan;
		if (first->main.exec.calls > 0)
			pgsq_hist_add(&data->counters.exec_hist,
						  first->main.exec.min_time);
	}
	for (int phase = 0; phase < PGSQ_NUM_PHASES; phase++)
		data->minmax_valid[phase] = PGSQ_TIMING(&first->main, phase)->calls > 0;
#ifdef PGSQ_TEST_EXTRA_COUNTER
	data->test_extra = first->main.exec.calls;
#endif
	if (first->main.plan.calls + first->main.exec.calls > 0 ||
		(first->has_rare && first->rare.failed_calls > 0))
		data->changed_at = now;
}
