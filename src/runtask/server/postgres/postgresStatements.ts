/**
 * The statements of the PostgreSQL job store on its own table `provider_runtask.jobs` (postgresSchema.ts). A job is
 * one row, keyed by its queue and its id (the task result id), in one of four states:
 *
 *   - `queued`: put in the queue by a front, held by nobody, waiting for a worker's claim (oldest first, `seq`);
 *   - `held`: held by the instance `holder` until `lease_until`, which that instance's heartbeat moves on. Once the
 *     lease is past, the job is another instance's to take over, which raises its `fence`;
 *   - `completed`: its final callback delivered, its access token removed from the record; kept a while (so that a
 *     late copy of its request is a duplicate), then pruned;
 *   - `abandoned`: the tombstone of requests refused with 503 (`ABANDON`), held by nobody, pruned as completed jobs.
 *
 * Beside the state, `refused` lists the attempts of the job's request refused with 503 (whatever state the row is
 * in later), and `retried_at` says that a retry was answered as a duplicate of the row.
 *
 * Every write of a held job names the fence it was taken with: an instance that lost its lease (a long pause)
 * and wakes up matches no row, so it can never write the job again. A takeover is two steps some time apart
 * (`LAPSE_SEEN`, then `TAKE_OVER`), and never of the taker's own jobs. Claims and takeovers lock the rows they take
 * with `FOR UPDATE SKIP LOCKED`, so that each job goes to one caller however many ask at once. Times are the
 * database's clock (`now()`), the same for every instance.
 */
import { SCHEMA } from './postgresSchema.js';

const JOBS = `${SCHEMA}.jobs`;

/** A lease from now, `$n` seconds long. */
const leaseFrom = (n: number): string => `now() + make_interval(secs => $${n})`;

/** One attempt of a request, as the list `refused` names it: its record's `acceptedAt` and its holder. */
const attempt = (acceptedAt: string, holder: string): string =>
  `jsonb_build_array(jsonb_build_object('acceptedAt', ${acceptedAt}, 'holder', ${holder}))`;

/**
 * What an insert does to the row it meets. Over a tombstone of refused attempts (`ABANDON`), the new attempt
 * takes the row (`columns`). Over a live or completed job, it is a retry answered as a duplicate: noted in
 * `retried_at`, so that the row is never abandoned (the platform holds a 200 for it). The insert of a refused
 * attempt landing late (one that `refused` names) changes nothing. `holder`: the new attempt's holder.
 */
function revivingOrRetried(columns: Record<string, string>, holder: string): string {
  const set = Object.entries(columns).map(
    ([column, value]) => `${column} = CASE WHEN j.state = 'abandoned' THEN ${value} ELSE j.${column} END`,
  );
  return `DO UPDATE SET ${set.join(',\n    ')},
    retried_at = CASE WHEN j.state = 'abandoned' THEN NULL ELSE now() END
  WHERE NOT j.refused @> ${attempt("EXCLUDED.record->>'acceptedAt'", holder)}`;
}

/**
 * A new job held by its accepting instance (over a tombstone of refused attempts, `ABANDON`). $1 queue, $2 id,
 * $3 record, $4 holder, $5 lease (s). `fresh` false, or no row back: the job exists already (a retried request,
 * noted), whoever holds it, or this is a refused attempt's insert landing late.
 */
export const ACCEPT = `INSERT INTO ${JOBS} AS j (queue, id, state, record, holder, lease_until)
  VALUES ($1, $2, 'held', $3::jsonb, $4, ${leaseFrom(5)})
  ON CONFLICT (queue, id) ${revivingOrRetried(
    {
      state: `'held'`,
      record: 'EXCLUDED.record',
      holder: 'EXCLUDED.holder',
      lease_until: 'EXCLUDED.lease_until',
      created_at: 'now()',
      finished_at: 'NULL',
    },
    'EXCLUDED.holder',
  )}
  RETURNING j.fence, j.retried_at IS NULL AS fresh`;

/**
 * A new job in the queue, held by nobody (over a tombstone, as `ACCEPT`). $1 queue, $2 id, $3 record. `fresh`
 * false, or no row back: it exists already (noted), or this is a refused attempt's insert landing late.
 */
export const ENQUEUE = `INSERT INTO ${JOBS} AS j (queue, id, state, record)
  VALUES ($1, $2, 'queued', $3::jsonb)
  ON CONFLICT (queue, id) ${revivingOrRetried(
    {
      state: `'queued'`,
      record: 'EXCLUDED.record',
      holder: 'NULL',
      lease_until: 'NULL',
      created_at: 'now()',
      finished_at: 'NULL',
      progress_at: 'NULL',
    },
    'NULL::text',
  )}
  RETURNING j.id, j.retried_at IS NULL AS fresh`;

/**
 * A held job's record replaced (its start, its result), its lease renewed with it (never shortened): the write of
 * the result is the holder's claim of the right to send the final callback. $1 queue, $2 id, $3 record,
 * $4 holder, $5 fence, $6 lease (s).
 */
export const WRITE = `UPDATE ${JOBS} SET record = $3::jsonb, lease_until = GREATEST(lease_until, ${leaseFrom(6)})
  WHERE queue = $1 AND id = $2 AND state = 'held' AND holder = $4 AND fence = $5
  RETURNING id`;

/** The row of the refused attempt $3 (its `acceptedAt`) by $4 (its holder): landed, never taken over or started. */
const OWN = `(j.state IN ('held', 'queued') AND j.fence = 0 AND j.holder IS NOT DISTINCT FROM $4
    AND j.record->>'acceptedAt' = $3 AND j.record->>'checkStartedAt' IS NULL)`;
/** That row, no retry of which was answered as a duplicate: it becomes the tombstone. */
const REMOVED = `(${OWN} AND j.retried_at IS NULL)`;

/**
 * The tombstone of a request refused with 503 although its insert was sent (no answer in time): the platform
 * sends the request again, and that attempt's row must never run on its own, even when its insert is still on
 * its way (a backend that stalls) and lands after this. The attempt ($3 its record's `acceptedAt`, $4 its holder,
 * NULL for a front's queued job) joins the row's `refused` list (a row made for it when there is none yet, in
 * state `abandoned`): a late insert then finds it and does nothing (`ACCEPT`, `ENQUEUE`), whatever the order,
 * and a new attempt takes a tombstone over. The attempt's own row, if it landed, becomes the tombstone (`removed`,
 * its access token gone); but if a retry was answered as a duplicate of it meanwhile (`retried_at`: an instance
 * that the platform's retry reached while this one could not reach the database), the platform holds a 200 for
 * it, and it is kept (`kept`): given back (held by nobody, its lease ended) for an instance to take over and run,
 * or left in the queue for a worker. A row of another attempt, or taken over or started, is left alone (`none`).
 * Pruned as completed jobs are. $1 queue, $2 id.
 */
export const ABANDON = `INSERT INTO ${JOBS} AS j (queue, id, state, record, refused, finished_at)
  VALUES ($1, $2, 'abandoned', '{}'::jsonb, ${attempt('$3::text', '$4::text')}, now())
  ON CONFLICT (queue, id) DO UPDATE SET
    refused = CASE WHEN j.refused @> EXCLUDED.refused THEN j.refused ELSE j.refused || EXCLUDED.refused END,
    state = CASE WHEN ${REMOVED} THEN 'abandoned' ELSE j.state END,
    record = CASE WHEN ${REMOVED} THEN j.record #- '{request,access_token}' ELSE j.record END,
    holder = CASE WHEN ${OWN} THEN NULL ELSE j.holder END,
    lease_until = CASE WHEN ${REMOVED} THEN NULL WHEN ${OWN} AND j.state = 'held' THEN now() ELSE j.lease_until END,
    finished_at = CASE WHEN ${REMOVED} THEN now() ELSE j.finished_at END
  RETURNING CASE
    WHEN j.record->>'acceptedAt' IS DISTINCT FROM $3 THEN 'none'
    WHEN j.state = 'abandoned' THEN 'removed'
    WHEN j.fence = 0 AND j.holder IS NULL AND j.retried_at IS NOT NULL AND j.record->>'checkStartedAt' IS NULL
      THEN 'kept'
    ELSE 'none' END AS fate`;

/**
 * A held job's end: completed, its access token removed, held by nobody. $1 queue, $2 id, $3 holder, $4 fence.
 */
export const FINISH = `UPDATE ${JOBS} SET
    state = 'completed',
    record = record #- '{request,access_token}',
    holder = NULL,
    lease_until = NULL,
    finished_at = now()
  WHERE queue = $1 AND id = $2 AND state = 'held' AND holder = $3 AND fence = $4
  RETURNING id`;

/**
 * Whether a job was completed under fence $3 (by the instance that held it with that fence): a finish whose
 * answer was lost may have been carried out. $1 queue, $2 id, $3 fence.
 */
export const FINISHED_WITH = `SELECT count(*)::int AS n FROM ${JOBS}
  WHERE queue = $1 AND id = $2 AND state = 'completed' AND fence = $3`;

/**
 * The leases of the jobs held here moved on (never shortened: a renewal that waited must not undo a later write's
 * lease, which this process counts on); a job taken over meanwhile (another fence) is not among the rows
 * back. $1 queue, $2 holder, $3 lease (s), $4 ids, $5 their fences.
 */
export const RENEW = `UPDATE ${JOBS} j SET lease_until = GREATEST(j.lease_until, ${leaseFrom(3)})
  FROM unnest($4::text[], $5::int[]) AS h(id, fence)
  WHERE j.queue = $1 AND j.id = h.id AND j.fence = h.fence AND j.state = 'held' AND j.holder = $2
  RETURNING j.id`;

/**
 * The jobs of a graceful release given back: their lease ends now, for another instance to take over at once.
 * $1 queue, $2 holder, $3 ids, $4 their fences.
 */
export const GIVE_BACK = `UPDATE ${JOBS} j SET holder = NULL, lease_until = now()
  FROM unnest($3::text[], $4::int[]) AS h(id, fence)
  WHERE j.queue = $1 AND j.id = h.id AND j.fence = h.fence AND j.state = 'held' AND j.holder = $2`;

/**
 * Notes when a held job's lease was first seen past (`lapse_seen_at`), by an instance that does not hold it: the
 * first step of a takeover. A renewal moves the lease past the note, which then no longer counts. $1 queue,
 * $2 this instance (its own jobs are never noted).
 */
export const LAPSE_SEEN = `UPDATE ${JOBS} SET lapse_seen_at = now()
  WHERE queue = $1 AND state = 'held' AND lease_until < now() AND holder IS DISTINCT FROM $2
    AND (lapse_seen_at IS NULL OR lapse_seen_at <= lease_until)`;

/**
 * Up to $2 held jobs of other instances whose lease was seen past at least $5 seconds ago and not renewed since
 * (or given back), oldest first, each to one caller, now held here under a fence one higher. The wait after the
 * lease lets a holder that is alive renew once the database answers again after a hang: every instance's
 * statements wait during one, and run together when it ends. $1 queue, $2 how many, $3 holder, $4 lease (s),
 * $5 the wait (s).
 */
export const TAKE_OVER = `WITH next AS (
    SELECT queue, id FROM ${JOBS}
     WHERE queue = $1 AND state = 'held' AND lease_until < now() AND holder IS DISTINCT FROM $3
       AND (holder IS NULL
            OR (lapse_seen_at > lease_until AND lapse_seen_at <= now() - make_interval(secs => $5)))
     ORDER BY seq
     LIMIT $2
     FOR UPDATE SKIP LOCKED
  )
  UPDATE ${JOBS} j SET holder = $3, lease_until = ${leaseFrom(4)}, fence = j.fence + 1, lapse_seen_at = NULL
  FROM next
  WHERE j.queue = next.queue AND j.id = next.id
  RETURNING j.id, j.record, j.fence`;

/**
 * Up to $2 queued jobs, oldest first, each to one caller, now held here in phase `accepted` (so that a claimed
 * job is never claimed again: if its worker dies, it is taken over). $1 queue, $2 how many, $3 holder, $4 lease.
 */
export const CLAIM = `WITH next AS (
    SELECT queue, id FROM ${JOBS}
     WHERE queue = $1 AND state = 'queued'
     ORDER BY seq
     LIMIT $2
     FOR UPDATE SKIP LOCKED
  )
  UPDATE ${JOBS} j SET
    state = 'held',
    holder = $3,
    lease_until = ${leaseFrom(4)},
    record = jsonb_set(j.record, '{phase}', '"accepted"')
  FROM next
  WHERE j.queue = next.queue AND j.id = next.id
  RETURNING j.id, j.record, j.fence, j.seq`;

/**
 * The queued jobs whose last progress callback (or queueing) is older than $2 seconds, marked as reported now:
 * the UPDATE that wins a row hands it to its caller alone. $1 queue, $2 interval (s).
 */
export const DUE_FOR_PROGRESS = `UPDATE ${JOBS} SET progress_at = now()
  WHERE queue = $1 AND state = 'queued'
    AND COALESCE(progress_at, created_at) <= now() - make_interval(secs => $2)
  RETURNING record`;

/** How many jobs wait in the queue. $1 queue. */
export const DEPTH = `SELECT count(*)::int AS n FROM ${JOBS} WHERE queue = $1 AND state = 'queued'`;

/** Completed jobs and tombstones (`ABANDON`) more than $2 seconds old, deleted. $1 queue. */
export const PRUNE = `DELETE FROM ${JOBS}
  WHERE queue = $1 AND state IN ('completed', 'abandoned') AND finished_at < now() - make_interval(secs => $2)`;
