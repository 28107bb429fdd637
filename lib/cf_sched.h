/* The batch job a profile comes from: the scheduler's job id, step, array
 * index, partition, node list and time limit, from the variables Slurm, PBS
 * and LSF set in a job.  Kept in the profile's job section as "scheduler";
 * a profile without it (an older one, a job outside a batch system) reads
 * as before. */
#ifndef CF_SCHED_H
#define CF_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define CF_SCHED_KEY "scheduler"

/* The job this process runs in, from its environment (Slurm's time limit
 * from squeue); NULL outside a batch job. */
json_t *cf_sched_collect(void);
/* The job's name for file names: Slurm's job id, or array job id _ index;
 * PBS's or LSF's likewise.  0 when written, -1 outside a batch job. */
int cf_sched_job_tag(char *buf, size_t len);

/* The job as rank 0 saw it, kept in the spool (dir/scheduler.NONCE) for a
 * profile merged from the parts after the job, outside it: save returns 0
 * or -1 (written whole or not at all); load gives NULL when there is none
 * of that job or it is not a file of ours. */
int cf_sched_save(const char *dir, uint64_t nonce, const json_t *sched);
json_t *cf_sched_load(const char *dir, uint64_t nonce);
void cf_sched_unlink(const char *dir, uint64_t nonce);

/* The profile's JSON: extra[CF_SCHED_KEY] into job, and back (only a well
 * formed object of strings and numbers is taken). */
void cf_sched_to_json(json_t *job, const json_t *extra);
void cf_sched_from_json(const json_t *job, json_t *extra);
/* One line of it for a report ("Slurm job 12 step 0, partition debug, ...");
 * 0 when there is none. */
size_t cf_sched_line(const json_t *extra, char *buf, size_t len);

#endif
