/* A job that does not reach MPI_Finalize still leaves its records: a rank
 * that is sent a terminating signal, calls MPI_Abort or exits writes what
 * it recorded to its own part file in the spool (lib/cf_spool.h), and
 * `commfit run` or `commfit merge` makes the profile from the parts.
 *
 * Everything a part needs that does not change (paths, names, the header)
 * is prepared at MPI_Init, so that writing it takes only write(2), open,
 * mkdir and rename, which are async-signal-safe: a signal handler may do
 * it.  The normal end costs nothing: MPI_Finalize does not look here. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* on_exit */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "cf_output.h"
#include "cf_refresh.h"
#include "cf_region.h"
#include "cf_runtime.h"
#include "cf_sched.h"
#include "cf_spill.h"
#include "cf_spool.h"
#include "cf_sync.h"


/* 0 not armed, 1 armed, 2 being written, 3 written, 4 a refresh being written */
static _Atomic int cf_spill_state;
static cf_spill_hdr_t cf_hdr;
static cf_spill_op_t *cf_ops;
static char cf_dir[4096], cf_sub[4200], cf_file[4300];
/* The spool stays open (O_NOFOLLOW): the part is made relative to it, so that
 * a rename or a link in the path cannot send it elsewhere.  cf_rsub and
 * cf_rfile are the subdirectory and the part relative to the spool. */
static int cf_dirfd = -1;
static dev_t cf_dir_dev;
static ino_t cf_dir_ino;
static int cf_dir_made; /* rank 0 made the spool: an empty one goes at the end */
static const char *cf_rsub, *cf_rfile;
static uint64_t cf_seed;
static int cf_enabled_before; /* recording was on when the part was written */
static int cf_quiet; /* commfit run gathers the parts and says where the profile is */

/* the signals that end a job in a batch system or by hand, and crashes */
static const struct {
    int sig;
    const char *name;
} cf_sigs[] = {{SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"}, {SIGHUP, "SIGHUP"}, {SIGQUIT, "SIGQUIT"},
               {SIGXCPU, "SIGXCPU"}, {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"}, {SIGABRT, "SIGABRT"},
               {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"}, {SIGFPE, "SIGFPE"}, {SIGILL, "SIGILL"}};
#define CF_NSIGS (sizeof(cf_sigs) / sizeof(cf_sigs[0]))
static struct sigaction cf_old[CF_NSIGS];
static unsigned char cf_armed[CF_NSIGS];

/* ---- writing, async-signal-safe ---- */

static int cf_write_full(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static size_t cf_cpy(char *dst, const char *src, size_t len)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < len; i++)
        dst[i] = src[i];
    dst[i] = 0;
    return i;
}

static size_t cf_utoa(char *out, unsigned long v)
{
    char d[24];
    size_t n = 0, i = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        out[i++] = d[--n];
    out[i] = 0;
    return i;
}

/* This thread's records: the slots in use, a batch of them per writev. */
static int cf_write_thread(int fd, const cf_thread_t *t)
{
    cf_spill_thread_t th = {0};
    const cf_table_t *tb = &t->table;
    /* the records filled so far: the owner may add more meanwhile, which
     * the next refresh writes */
    th.nstats = cf_table_count(tb);
    th.dropped = tb->dropped;
    th.mpi_ns = t->mpi_ns;
    th.failed = t->failed;
    th.missed = t->missed;
    th.unfinished = t->unfinished;
    /* the failed calls by operation and class, named as the profile does */
    cf_spill_fail_t fail[CF_FAILS < CF_SPILL_FAILS ? CF_FAILS : CF_SPILL_FAILS];
    for (unsigned j = 0; j < CF_FAILS && th.nfail < CF_ARRAY_LEN(fail); j++) {
        const cf_fail_t *f = &t->fail[j];
        if (!f->calls)
            continue;
        cf_spill_fail_t *o = &fail[th.nfail++];
        memset(o, 0, sizeof(*o));
        cf_cpy(o->op, f->op && f->op < CF_OP_COUNT ? cf_op_names[f->op] : "other", sizeof(o->op));
        const char *cls = cf_error_class_name(f->cls);
        if (cls)
            cf_cpy(o->cls, cls, sizeof(o->cls));
        else if (f->op) {
            size_t n = cf_cpy(o->cls, "class ", sizeof(o->cls));
            cf_utoa(o->cls + n, f->cls);
        } else
            cf_cpy(o->cls, "other", sizeof(o->cls));
        o->calls = f->calls;
    }
    if (cf_write_full(fd, &th, sizeof(th)) != 0)
        return -1;
    struct iovec iov[64];
    int n = 0;
    uint64_t left = th.nstats;
    for (uint32_t s = 0; left; s++) {
        iov[n].iov_base = (void *)cf_table_nth(tb, s);
        iov[n].iov_len = sizeof(cf_stat_t);
        left--;
        if (++n == 64 || !left) {
            ssize_t w;
            do
                w = writev(fd, iov, n);
            while (w < 0 && errno == EINTR);
            if (w < 0)
                return -1;
            /* a short write: the rest one by one */
            for (int i = 0; i < n; i++) {
                size_t len = iov[i].iov_len, skip = (size_t)w < len ? (size_t)w : len;
                w -= (ssize_t)skip;
                if (skip < len && cf_write_full(fd, (char *)iov[i].iov_base + skip, len - skip) != 0)
                    return -1;
            }
            n = 0;
        }
    }
    return th.nfail ? cf_write_full(fd, fail, th.nfail * sizeof(fail[0])) : 0;
}

static size_t cf_hex(char *out, uint64_t v)
{
    static const char dig[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++)
        out[i] = dig[(v >> (60 - 4 * i)) & 15];
    out[16] = 0;
    return 16;
}

/* rank-R.spill.tmp.<pid>.<random>: from the seed taken at MPI_Init, the
 * clock and a counter (async-signal-safe) */
static void cf_spill_tmpname(char *out, size_t len)
{
    static uint64_t count;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t z = cf_seed ^ ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ (++count * 0x9e3779b97f4a7c15ull);
    z = cf_mix64(z);
    size_t n = cf_cpy(out, cf_rfile, len);
    n += cf_cpy(out + n, ".tmp.", len - n);
    char num[24];
    cf_utoa(num, (unsigned long)getpid());
    n += cf_cpy(out + n, num, len - n);
    n += cf_cpy(out + n, ".", len - n);
    char hex[17];
    cf_hex(hex, z);
    cf_cpy(out + n, hex, len - n);
}

/* The spool's descriptor, checked to be still the directory opened at
 * MPI_Init (the job may have closed it, and the number be another file's). */
static int cf_spill_dir(void)
{
    struct stat st;
    if (cf_dirfd >= 0 && fstat(cf_dirfd, &st) == 0 && st.st_dev == cf_dir_dev && st.st_ino == cf_dir_ino)
        return cf_dirfd;
    int fd = open(cf_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || st.st_dev != cf_dir_dev || st.st_ino != cf_dir_ino) {
        close(fd);
        return -1;
    }
    return cf_dirfd = fd;
}

static int cf_spill_write(int end, int code)
{
    cf_spill_hdr_t h = cf_hdr;
    h.end = end;
    h.code = code;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    h.wall_s = now > cf_g.init_mono_ns ? (double)(now - cf_g.init_mono_ns) * 1e-9 : 0;
    uint32_t nthreads = cf_thread_count();
    h.nthreads = nthreads;
    /* the count first: the array it is read from holds at least as many */
    size_t ncomm = atomic_load(&cf_comm_nall);
    cf_comm_t **comms = atomic_load(&cf_comm_all);
    h.ncomm = (uint32_t)ncomm;
    static cf_spill_region_t regions[CF_MAX_REGIONS];
    h.nregion = (uint32_t)cf_regions_copy(regions, CF_MAX_REGIONS, &h.regions_full, &h.regions_deep);
    h.threads_refused = cf_thread_refused();
    h.req_dropped = atomic_load(&cf_g.req_dropped);

    int dfd = cf_spill_dir();
    if (dfd < 0)
        return -1;
    int sfd = dfd;
    if (cf_rsub[0]) {
        if (mkdirat(dfd, cf_rsub, 0700) != 0 && errno != EEXIST)
            return -1;
        struct stat st;
        sfd = openat(dfd, cf_rsub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sfd < 0)
            return -1;
        if (fstat(sfd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
            close(sfd);
            return -1;
        }
    }
    /* a name nobody can guess, made only if nothing has it */
    char tmp[400];
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 16; tries++) {
        cf_spill_tmpname(tmp, sizeof(tmp));
        fd = openat(sfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        if (sfd != dfd)
            close(sfd);
        return -1;
    }
    int rc = cf_write_full(fd, &h, sizeof(h));
    if (rc == 0)
        rc = cf_write_full(fd, cf_ops, (h.nops + h.nops_ucx) * sizeof(*cf_ops));
    for (size_t i = 0; rc == 0 && i < ncomm; i++) {
        const cf_comm_t *c = comms[i];
        cf_spill_comm_t w = {.id = c->id, .size = c->size, .nodes = c->nodes, .instances = c->instances};
        cf_cpy(w.name, c->name, sizeof(w.name));
        cf_cpy(w.desc, c->desc, sizeof(w.desc));
        cf_cpy(w.user_name, c->user_name, sizeof(w.user_name));
        rc = cf_write_full(fd, &w, sizeof(w));
    }
    if (rc == 0)
        rc = cf_write_full(fd, regions, h.nregion * sizeof(*regions));
    for (uint32_t i = 0; rc == 0 && i < nthreads; i++)
        rc = cf_write_thread(fd, cf_thread_at(i));
    if (close(fd) != 0)
        rc = -1;
    /* the part appears whole or not at all (a SIGKILL may come any time) */
    if (rc == 0 && renameat(sfd, tmp, sfd, cf_rfile) != 0)
        rc = -1;
    if (rc != 0)
        unlinkat(sfd, tmp, 0);
    if (sfd != dfd)
        close(sfd);
    return rc;
}

/* One line on stderr from the pieces (NULL ends them), with write(2). */
static void cf_say(const char *const *parts)
{
    char line[9000];
    size_t n = cf_cpy(line, "commfit: ", sizeof(line));
    for (; *parts; parts++)
        n += cf_cpy(line + n, *parts, sizeof(line) - n);
    n += cf_cpy(line + n, "\n", sizeof(line) - n);
    (void)!write(2, line, n);
}

/* Writes this rank's part once.  A second caller (another thread, a signal
 * during an exit) waits up to 5 s for the first to finish. */
static void cf_spill(int end, int code, const char *why)
{
    int expect = 1, mine;
    for (int i = 0; !(mine = atomic_compare_exchange_strong(&cf_spill_state, &expect, 2)) && expect == 4 && i < 5000;
         i++) {
        struct timespec ms = {0, 1000000}; /* the refresh (cf_refresh.c) ends first */
        nanosleep(&ms, NULL);
        expect = 1;
    }
    if (!mine) {
        for (int i = 0; i < 5000 && atomic_load(&cf_spill_state) == 2; i++) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
        return;
    }
    if (atomic_load(&cf_g.state) != 1) {
        atomic_store(&cf_spill_state, 1);
        return;
    }
    /* recording stops here: what follows is the job's end */
    cf_enabled_before = cf_recording_pause();
    int rc = cf_spill_write(end, code);
    atomic_store(&cf_spill_state, 3);
    char rank[24];
    cf_utoa(rank, (unsigned long)cf_g.world_rank);
    if (rc != 0 && (cf_g.world_rank == 0 || end == CF_END_ABORT)) {
        const char *msg[] = {"rank ", rank, ": could not write its records to ", cf_file, NULL};
        cf_say(msg);
    } else if (!cf_quiet && (cf_g.world_rank == 0 || end == CF_END_ABORT)) {
        const char *msg[] = {"rank ", rank, ": ", why, " before MPI_Finalize: `commfit merge ", cf_dir,
                             "` makes the profile from what the ranks recorded", NULL};
        cf_say(msg);
    }
}

/* This rank's part goes, and the spool's directories if no other part is
 * left in them (async-signal-safe). */
static void cf_spool_unlink(void)
{
    unlink(cf_file);
    if (strcmp(cf_sub, cf_dir) != 0)
        rmdir(cf_sub);
    rmdir(cf_dir);
}

/* The job's own handler returned: the job goes on, and the part, stale,
 * goes; a later end writes a new one. */
static void cf_spill_undo(void)
{
    int expect = 3;
    if (!atomic_compare_exchange_strong(&cf_spill_state, &expect, 2))
        return;
    cf_spool_unlink();
    cf_recording_restore(cf_enabled_before);
    atomic_store(&cf_spill_state, 1);
}

/* ---- the three ways a job ends early ---- */

static void cf_on_signal(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    unsigned i = 0;
    while (i < CF_NSIGS && cf_sigs[i].sig != sig)
        i++;
    if (i == CF_NSIGS)
        return;
    cf_spill(CF_END_SIGNAL, sig, cf_sigs[i].name);
    /* then whatever would have happened without us */
    const struct sigaction *old = &cf_old[i];
    if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
        old->sa_sigaction(sig, si, uc);
    } else if (old->sa_handler == SIG_IGN) {
        /* ignored before us (set since): still ignored */
    } else if (old->sa_handler == SIG_DFL) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        raise(sig);
    } else {
        old->sa_handler(sig);
    }
    /* The job's handler returned.  If it reset the signal and raised it again
     * (Open MPI's crash handler does), or the signal is a fault that returning
     * repeats, the job is ending and the part stays; else the job goes on. */
    sigset_t pend;
    struct sigaction now;
    int ours = sigaction(sig, NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == cf_on_signal;
    int fault = si && si->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
    if (ours && !fault && sigpending(&pend) == 0 && !sigismember(&pend, sig))
        cf_spill_undo();
    errno = saved;
}

/* Outside a handler: a signal the runtime sends to end the job (it does
 * once a rank aborts or exits) waits until the part is written. */
static void cf_spill_blocked(int end, int code, const char *why)
{
    int state = atomic_load(&cf_spill_state);
    if (state != 1 && state != 4)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    cf_spill(end, code, why);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

#ifdef __GLIBC__
static void cf_on_exit(int status, void *arg)
{
    (void)arg;
    cf_spill_blocked(CF_END_EXIT, status, "exit");
}
#else
static void cf_on_exit(void) { cf_spill_blocked(CF_END_EXIT, -1, "exit"); }
#endif

void cf_spill_abort(int errorcode) { cf_spill_blocked(CF_END_ABORT, errorcode, "MPI_Abort"); }

/* The part as it stands, the job going on (cf_refresh.c's thread, which
 * takes no signal): an end's part, written meanwhile, is never replaced. */
static int cf_refreshed;
static int cf_spill_refresh(void)
{
    int expect = 1;
    if (atomic_load(&cf_g.state) != 1 || !atomic_compare_exchange_strong(&cf_spill_state, &expect, 4))
        return -1;
    int rc = cf_spill_write(CF_END_REFRESH, -1);
    cf_refreshed |= rc == 0;
    atomic_store(&cf_spill_state, 1);
    return rc;
}

/* ---- set up at MPI_Init ---- */

static void cf_op_entry(cf_spill_op_t *o, const char *name, const char *kind)
{
    cf_strlcpy(o->name, name, sizeof(o->name));
    cf_strlcpy(o->kind, kind, sizeof(o->kind));
}

/* Rank 0: the spool is ours alone, or it is not used.  One that exists is
 * kept when it is a directory of this user that nobody else can write;
 * anything else (a link, another user's, writable by others: a name anyone
 * can guess and make first) is refused and a private one is made. */
static void cf_spill_make_spool(char *dir, size_t len)
{
    char why[300];
    int r = cf_spool_check(dir, why, sizeof(why));
    if (r == 1) {
        if (mkdir(dir, 0700) == 0)
            cf_dir_made = 1;
        else
            snprintf(why, sizeof(why), "cannot make it: %s", strerror(errno));
        r = cf_dir_made ? cf_spool_check(dir, why, sizeof(why)) : -1;
    }
    if (r == 0)
        return;
    cf_dir_made = 0;

    char priv[4096];
    if (cf_spool_private(dir, priv, sizeof(priv)) == 0 && strlen(priv) + 64 < len) {
        cf_log("the spool %s is refused (%s): the parts go to %s", dir, why, priv);
        snprintf(dir, len, "%s", priv);
        cf_dir_made = 1;
    } else {
        cf_log("the spool %s is refused (%s) and no private one could be made: a job that does not finish "
               "leaves no records", dir, why);
        dir[0] = 0;
    }
}

/* Rank 0: the spool belongs to this job (its nonce goes into the job
 * file); one holding the parts of an earlier job is left for `commfit
 * merge`, and a new one beside it is used. */
static void cf_spill_claim(char *dir, size_t len, uint64_t nonce, const char *jobid)
{
    char other[64], why[300], beside[4096];
    int r = cf_spool_claim(dir, nonce, jobid, cf_g.init_wall, other, sizeof(other), why, sizeof(why));
    if (r == 1 && cf_spool_beside(dir, beside, sizeof(beside)) == 0 && strlen(beside) + 64 < len) {
        cf_log("the spool %s holds the parts of an earlier job (%s): `commfit merge %s` makes its profile; this "
               "job's parts go to %s", dir, other, dir, beside);
        snprintf(dir, len, "%s", beside);
        cf_dir_made = 1;
        r = cf_spool_claim(dir, nonce, jobid, cf_g.init_wall, other, sizeof(other), why, sizeof(why));
    }
    if (r != 0)
        cf_log("the spool %s: %s; its parts may be taken for another job's", dir,
               r == 1 ? "holds the parts of an earlier job, and no other could be made" : why);
}

static void cf_spill_arm(void)
{
    const cf_config_t *c = &cf_g.cfg;
    /* rank 0 names the spool and the job, for every rank: the nonce commfit
     * run gives (a spawned job draws its own), else a random one */
    struct {
        uint64_t nonce;
        char jobid[64];
        char dir[4096];
    } job;
    memset(&job, 0, sizeof(job));
    if (cf_g.world_rank == 0) {
        job.nonce = cf_g.spawned ? 0 : cf_spool_nonce_parse(getenv("COMMFIT_JOB_NONCE"));
        if (!job.nonce)
            job.nonce = cf_spool_nonce();
        cf_spool_jobid(job.jobid, sizeof(job.jobid));
        cf_spool_default(job.dir, sizeof(job.dir));
        if (c->spill && job.dir[0])
            cf_spill_make_spool(job.dir, sizeof(job.dir));
        if (c->spill && job.dir[0])
            cf_spill_claim(job.dir, sizeof(job.dir), job.nonce, job.jobid);
        if (c->spill && job.dir[0]) { /* the batch job, for a profile merged outside it */
            json_t *sched = cf_sched_collect();
            cf_sched_save(job.dir, job.nonce, sched);
            json_decref(sched);
        }
    }
    PMPI_Bcast(&job, (int)sizeof(job), MPI_BYTE, 0, cf_g.tool_comm);
    if (!c->spill || !job.dir[0])
        return;
    cf_quiet = c->gather;
    memcpy(cf_dir, job.dir, sizeof(job.dir));
    if (cf_spool_paths(cf_dir, cf_g.world_rank, c->spool_fanout, cf_sub, cf_file, sizeof(cf_file) - 8) < 0)
        return;
    cf_rsub = strcmp(cf_sub, cf_dir) != 0 ? cf_sub + strlen(cf_dir) + 1 : "";
    cf_rfile = cf_file + strlen(cf_sub) + 1;
    if (getrandom(&cf_seed, sizeof(cf_seed), GRND_NONBLOCK) != (ssize_t)sizeof(cf_seed))
        cf_seed = (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)&cf_seed ^ (uint64_t)(cf_g.init_wall * 1e6);
    /* a rank on a node that does not see rank 0's spool makes its own */
    if (cf_g.world_rank != 0)
        (void)mkdir(cf_dir, 0700);
    int dfd = open(cf_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    char why[200];
    if (dfd < 0 || fstat(dfd, &st) != 0 || cf_spool_check_stat(&st, why, sizeof(why)) != 0) {
        if (dfd >= 0)
            close(dfd);
        return; /* rank 0 has said why */
    }
    cf_dirfd = dfd;
    cf_dir_dev = st.st_dev;
    cf_dir_ino = st.st_ino;

    unsigned nucx = 0;
#ifdef CF_HAVE_UCX
    nucx = cf_ucx_op_count;
#endif
    cf_ops = calloc(CF_OP_COUNT + nucx + 1, sizeof(*cf_ops));
    if (!cf_ops)
        return;
    for (unsigned i = 0; i < CF_OP_COUNT; i++)
        cf_op_entry(&cf_ops[i], cf_layer_op_name(CF_LAYER_MPI, i), cf_layer_op_kind(CF_LAYER_MPI, i));
    for (unsigned i = 0; i < nucx; i++)
        cf_op_entry(&cf_ops[CF_OP_COUNT + i], cf_layer_op_name(CF_LAYER_UCX, i), cf_layer_op_kind(CF_LAYER_UCX, i));

    cf_spill_hdr_t *h = &cf_hdr;
    memcpy(h->magic, CF_SPILL_MAGIC, 8);
    h->version = CF_SPILL_VERSION;
    h->hdr_size = sizeof(*h);
    h->stat_size = sizeof(cf_stat_t);
    h->hist_n = CF_HIST_N;
    h->rank = cf_g.world_rank;
    h->size = cf_g.world_size;
    h->node = cf_g.node;
    h->nnodes = cf_g.nnodes;
    h->node_ranks = cf_g.node_ranks;
    h->node_cpus = cf_g.node_cpus;
    h->nops = CF_OP_COUNT;
    h->nops_ucx = nucx;
    h->spawned = (uint32_t)cf_g.spawned;
    h->table_size = cf_g.cfg.table_size;
    h->max_threads = cf_g.cfg.max_threads;
    h->nonce = job.nonce;
    memcpy(h->jobid, job.jobid, sizeof(h->jobid));
    h->init_wall = cf_g.init_wall;
    h->clock_hz = cf_clock.hz;
    h->offset_ns = cf_sync.init.offset_ns;
    h->offset_err_ns = cf_sync.init.err_ns;
    gethostname(h->host, sizeof(h->host) - 1);
    cf_library_version(h->mpi_library, sizeof(h->mpi_library));
    if (cf_g.world_rank == 0) { /* the profile's program is rank 0's */
        unsigned fw;
        cf_program_info(h->program, sizeof(h->program), &fw);
    }

    atomic_store(&cf_spill_state, 1);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = cf_on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&sa.sa_mask); /* nothing else runs on this thread while the part is written */
    for (unsigned i = 0; i < CF_NSIGS; i++) {
        if (sigaction(cf_sigs[i].sig, NULL, &cf_old[i]) != 0)
            continue;
        /* a signal the job ignores does not end it */
        if (!(cf_old[i].sa_flags & SA_SIGINFO) && cf_old[i].sa_handler == SIG_IGN)
            continue;
        cf_armed[i] = sigaction(cf_sigs[i].sig, &sa, NULL) == 0;
    }
#ifdef __GLIBC__
    on_exit(cf_on_exit, NULL);
#else
    atexit(cf_on_exit);
#endif
}

/* The module's init: the spool armed, then its refresh thread (cf_refresh.c),
 * which writes with this file's writer. */
void cf_spill_init(void)
{
    cf_spill_arm();
    cf_refresh_init(cf_spill_refresh);
}

void cf_spill_finalized(void)
{
    cf_refresh_stop();
    /* a handler before ours let the job go on after a signal, or a refresh
     * wrote it: the part is stale */
    if (atomic_exchange(&cf_spill_state, 0) == 3 || cf_refreshed)
        cf_spool_unlink();
    /* the job file, and the spool rank 0 made for nothing */
    if (cf_g.world_rank == 0 && cf_dir[0]) {
        cf_spool_job_unlink(cf_dir, cf_hdr.nonce);
        cf_sched_unlink(cf_dir, cf_hdr.nonce);
    }
    if (cf_dir_made)
        rmdir(cf_dir);
}
