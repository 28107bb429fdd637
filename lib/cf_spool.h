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
#include "cf_bins.h"
#include "cf_profile.h"

#define CF_SPILL_MAGIC "CFSPILL1"
#define CF_SPILL_VERSION 1
#define CF_SPILL_SUFFIX ".spill"

/* How a rank ended. */
enum { CF_END_SIGNAL = 1, CF_END_ABORT = 2, CF_END_EXIT = 3, CF_END_REFRESH = 4 /* the job went on */ };

typedef struct {
    char magic[8];
    uint32_t version, hdr_size, stat_size, hist_n;
    int32_t rank, size, node, nnodes, node_ranks, node_cpus;
    int32_t end, code;         /* CF_END_*; the signal, MPI_Abort's errorcode or the exit status (-1 unknown) */
    uint32_t nthreads, ncomm, nregion, nops, nops_ucx, spawned;
    uint64_t job_token;        /* the same on every rank of one job (rank 0's pid and start) */
    uint64_t threads_refused, req_dropped;
    double init_wall;          /* seconds since the epoch at MPI_Init */
    double wall_s;             /* from MPI_Init to the end, on this rank's clock */
    double clock_hz;
    double offset_ns, offset_err_ns; /* rank 0's clock minus this rank's, measured at MPI_Init */
    char host[64];
    char mpi_library[128];
    char output[4096];         /* the profile path the job would have written ("" = default name) */
} cf_spill_hdr_t;

typedef struct {
    char name[40], kind[16];
} cf_spill_op_t;

typedef struct {
    uint32_t id;
    int32_t size, nodes, pad;
    uint64_t instances; /* communicators that held this id over the run */
    char name[48];
} cf_spill_comm_t;

typedef struct {
    uint32_t id, pad;
    uint64_t entries;
    char path[128];
} cf_spill_region_t;

/* Before each thread's nstats records (cf_stat_t, in memory order). */
typedef struct {
    uint64_t nstats, dropped, mpi_ns, failed, missed, pad;
} cf_spill_thread_t;

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

/* Reads every part under dir into one profile, marked partial with how each
 * rank ended and which sent nothing; parts of jobs started before since
 * (seconds since the epoch; 0: any) are left alone.  *output_p (may be NULL)
 * gets the path the job meant to write (malloc'ed, NULL when it used the
 * default name).  Returns CF_OK, CF_ERR_NODATA when no part is there, or
 * another error; err says why. */
int cf_spool_merge(const char *dir, double since, cf_profile_t *p, char **output_p, char *note, size_t notelen,
                   char *err, size_t errlen);

/* Removes the parts and subdirectories of a spool (and the spool when it is
 * left empty). */
void cf_spool_remove(const char *dir);

/* A record of the profile from merged stats (ns), with its names. */
void cf_record_from_stat(cf_record_t *r, const cf_stat_t *s, const char *op, const char *kind, const char *parent_op);

#endif
