/* Spilled records of a job that did not reach MPI_Finalize.
 *
 * When a rank is killed (a signal), calls MPI_Abort or exits without
 * MPI_Finalize, it writes what it recorded so far to one file of its own,
 * without MPI and with write(2) only: a fixed header, the names of its
 * operations, its communicators and regions, then each thread's records as
 * they are in memory.  The files of one job sit in a spool directory, in
 * subdirectories of COMMFIT_SPOOL_FANOUT ranks each; cf_spool_merge turns
 * them into a profile (marked partial) after the job, with no MPI. */
#ifndef CF_SPOOL_H
#define CF_SPOOL_H

#include <stdint.h>
#include <sys/stat.h>
#include "cf_assemble.h"
#include "cf_bins.h"
#include "cf_profile.h"

#define CF_SPILL_MAGIC "CFSPILL1"
#define CF_SPILL_VERSION 4
#define CF_SPILL_SUFFIX ".spill"

/* How a rank ended. */
enum { CF_END_SIGNAL = 1, CF_END_ABORT = 2, CF_END_EXIT = 3, CF_END_REFRESH = 4 /* the job went on */ };

typedef struct {
    char magic[8];
    uint32_t version, hdr_size, stat_size, hist_n;
    int32_t rank, size, node, nnodes, node_ranks, node_cpus;
    int32_t end, code;         /* CF_END_*; the signal, MPI_Abort's errorcode or the exit status (-1 unknown) */
    uint32_t nthreads, ncomm, nregion, nops, nops_ucx, spawned;
    /* COMMFIT_TABLE_SIZE and COMMFIT_MAX_THREADS the rank ran with, which the
     * merge's sentences of the tables' losses name (0: not known, a part of
     * a plugin before them, whose field here was unused) */
    uint32_t table_size, max_threads;
    uint64_t threads_refused, req_dropped;
    double init_wall;          /* seconds since the epoch at MPI_Init */
    double wall_s;             /* from MPI_Init to the end, on this rank's clock */
    double clock_hz;
    double offset_ns, offset_err_ns; /* rank 0's clock minus this rank's, measured at MPI_Init */
    char host[64];
    char mpi_library[128];
    uint64_t nonce;            /* the job's: a random number rank 0 drew (or was given) at MPI_Init */
    char jobid[64];            /* the batch system's job id, else "pid P on HOST" of rank 0 */
    uint64_t regions_full;     /* MPI_Pcontrol opens refused: the region table was full */
    uint64_t regions_deep;     /* and nested deeper than the limit */
    /* the executable's file name (cf_profile_t's program), read at MPI_Init.
     * Not the frameworks: what a process maps at MPI_Init is not what it
     * loads later (a script may start mpi4py before it imports torch) */
    char program[64];
} cf_spill_hdr_t;

typedef struct {
    char name[40], kind[16];
} cf_spill_op_t;

typedef struct {
    uint32_t id;
    int32_t size, nodes, pad;
    uint64_t instances; /* communicators that held this id over the run */
    char name[48];
    char desc[CF_COMM_DESC_LEN];
    char user_name[CF_COMM_USER_LEN]; /* MPI_Comm_set_name */
} cf_spill_comm_t;

typedef struct {
    uint32_t id, pad;
    uint64_t entries;
    char path[128];
} cf_spill_region_t;

/* Before each thread's nstats records (cf_stat_t, in memory order), which
 * its nfail failed-call kinds follow. */
typedef struct {
    uint64_t nstats, dropped, mpi_ns, failed, missed, nfail;
    uint64_t unfinished; /* requests freed while active (cf_thread_t's) */
} cf_spill_thread_t;

/* The calls of one operation that returned one error class, as the
 * profile's failed_calls section names them ("other": beyond the kinds a
 * thread keeps, or an unknown class). */
#define CF_SPILL_FAILS 16
typedef struct {
    char op[40], cls[32];
    uint64_t calls;
} cf_spill_fail_t;

/* The file of rank under dir: dir/ranks-A-B/rank-R.spill with fanout ranks
 * a subdirectory (dir/rank-R.spill when fanout is 0).  sub gets the
 * subdirectory (or dir).  Returns the length of path, or -1 when it does not
 * fit.  Async-signal-safe (no formatting library). */
int cf_spool_paths(const char *dir, int rank, uint32_t fanout, char *sub, char *path, size_t len);

/* Whether dir may hold a job's parts: 0 when it is a directory (not a
 * symbolic link) of the effective user that nobody else can write, 1 when it
 * does not exist, -1 when it is refused (why says why). */
int cf_spool_check(const char *dir, char *why, size_t whylen);
/* The same for what fstat or lstat said of it. */
int cf_spool_check_stat(const struct stat *st, char *why, size_t whylen);
/* A private spool (0700, a random suffix) in $TMPDIR, else /tmp, named after
 * dir; out gets its path.  Returns 0, or -1 (errno). */
int cf_spool_private(const char *dir, char *out, size_t outlen);

/* ---- a spool belongs to one job ----
 * Rank 0 (or `commfit run` before it) writes the job's nonce and id into the
 * spool's "job" file at MPI_Init; every part carries them too, and merge
 * takes the parts of one job only. */
#define CF_SPOOL_JOB_FILE "job"
#define CF_SPOOL_MAX_RANKS (1 << 24)

/* A random nonce, never 0. */
uint64_t cf_spool_nonce(void);
/* The nonce in 16 hex digits (out: 17 bytes at least); parsed back, 0 when s is not that. */
void cf_spool_nonce_str(uint64_t nonce, char *out);
uint64_t cf_spool_nonce_parse(const char *s);
/* The batch system's job id (Slurm, PBS, LSF, SGE, Flux), else "pid P on HOST". */
void cf_spool_jobid(char *out, size_t len);
/* The spool's job file: 0 with its nonce, job id and start, -1 when there is
 * none or it is not a file of ours (errno). */
int cf_spool_job_read(const char *dir, uint64_t *nonce, char *jobid, size_t jobidlen, double *started);
/* Claims dir for the job nonce: 0 when it is this job's now (its job file
 * names nonce, or it held no part of another job and the job file is
 * written), 1 when it holds parts of another job (other gets that job's id),
 * -1 when the job file cannot be written (why says why). */
int cf_spool_claim(const char *dir, uint64_t nonce, const char *jobid, double started, char *other, size_t otherlen,
                   char *why, size_t whylen);
/* A new spool beside dir: dir.XXXXXX, 0700.  0, or -1 (errno). */
int cf_spool_beside(const char *dir, char *out, size_t outlen);
/* Removes the job file when it names nonce. */
void cf_spool_job_unlink(const char *dir, uint64_t nonce);

/* Reads the parts of one job under dir into one profile, marked partial
 * with how each rank ended and which sent nothing: the job nonce, or when
 * nonce is 0 the one the spool's job file names, else the newest job among
 * the parts.  Parts of other jobs are left out (and said); a part that is
 * not a regular file of ours, or whose sizes and values do not hold, is
 * refused, with the reason among the profile's.  *nonce_p (may be NULL)
 * gets the job's nonce.  Returns CF_OK, CF_ERR_NODATA when no part of the
 * job is there, or another error; err says why. */
int cf_spool_merge(const char *dir, uint64_t nonce, cf_profile_t *p, uint64_t *nonce_p, char *note, size_t notelen,
                   char *err, size_t errlen);

/* Removes the parts of job nonce (0: every part) and its job file, then the
 * subdirectories and the spool left empty. */
void cf_spool_remove(const char *dir, uint64_t nonce);


#endif
