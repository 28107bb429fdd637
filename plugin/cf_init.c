/* MPI_Init's order of work: the configuration, the core's state, the node
 * map and the clocks, then the modules of the list (cf_modules.c) in its
 * order.  The core (cf_runtime.c) owns the state; this file is the only one
 * of the start that names the sampler, the clock sync and the modules. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <dlfcn.h>
#include <link.h> /* ElfW, for the PML object's size */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "cf_module.h"
#include "cf_runtime.h"
#include "cf_sample.h"
#include "cf_sync.h"

/* ---- init ---- */

/* CPUs this node's ranks may run on: the union of their affinity masks,
 * capped by the CPUs online.  A rank whose mask cannot be read (more CPUs
 * than the fixed mask holds) counts as allowed everywhere.  Collective over
 * the node communicator. */
#define CF_CPU_WORDS (CPU_SETSIZE / 64)
static int cf_node_cpus(MPI_Comm node)
{
    uint64_t mask[CF_CPU_WORDS + 1] = {0}; /* the last word: some rank's mask is unknown */
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set))
                mask[c / 64] |= UINT64_C(1) << (c % 64);
    } else
        mask[CF_CPU_WORDS] = 1;
    PMPI_Allreduce(MPI_IN_PLACE, mask, CF_CPU_WORDS + 1, MPI_UINT64_T, MPI_BOR, node);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int n = 0;
    for (int w = 0; w < CF_CPU_WORDS; w++)
        n += __builtin_popcountll(mask[w]);
    if (mask[CF_CPU_WORDS] || n == 0)
        n = online > 0 ? (int)online : 0;
    if (online > 0 && n > online)
        n = (int)online;
    return n;
}

/* The ranks that share this kernel, and so its CPUs, whatever their host
 * names: network namespaces or containers on one machine are separate
 * nodes to MPI but not to the scheduler.  Ranks with the same boot id; the
 * shared-memory node where it cannot be read or two machines' ids collide
 * in the 31 bits the split takes.  Collective over world; returns a
 * communicator the caller frees. */
static MPI_Comm cf_machine_comm(MPI_Comm node)
{
    char id[64] = "";
    uint64_t h = 1469598103934665603ull, lo, hi; /* FNV-1a */
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    MPI_Comm m = MPI_COMM_NULL;
    int readable = f != NULL && fgets(id, sizeof(id), f) != NULL, all = 0;
    if (f != NULL)
        fclose(f);
    for (const char *c = id; *c && *c != '\n'; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    PMPI_Allreduce(&readable, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) {
        int ok = PMPI_Comm_split(MPI_COMM_WORLD, (int)(h & 0x7fffffff), 0, &m) == MPI_SUCCESS;
        PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (!all && ok)
            PMPI_Comm_free(&m);
    }
    if (all) {
        PMPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, m);
        PMPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, m);
        int same = lo == hi, every = 0;
        PMPI_Allreduce(&same, &every, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (every)
            return m;
        PMPI_Comm_free(&m);
    }
    PMPI_Comm_dup(node, &m);
    return m;
}
#ifdef OPEN_MPI
/* The UCX PML hands every send that completed inside MPI_Isend the same
 * request, a member of its module object (ompi_pml_ucx.completed_send_req),
 * so that several sends in flight share one handle: a request inside that
 * object is shared.  The object's bounds, from its symbol, when the PML's
 * component is loaded. */
static void cf_pml_shared_requests(void)
{
    void *pml = dlsym(RTLD_DEFAULT, "ompi_pml_ucx");
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    cf_g.req_pml_shared_lo = cf_g.req_pml_shared_len = 0;
    if (pml && dladdr1(pml, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size > 0) {
        cf_g.req_pml_shared_lo = (uintptr_t)pml;
        cf_g.req_pml_shared_len = (uintptr_t)sym->st_size;
    }
}
#endif

/* The tables of a rank that records: the world's node leaders (*leaders)
 * and nodes, the request table of *nreq_p slots, the thread slots; 1 when
 * all are there.  A rank switched off allocates nothing: glibc raises its
 * mmap threshold when a large block is freed, so tables allocated and let
 * go here would change how the program's own memory is mapped (a program
 * that faults its buffers in afresh each step would run faster). */
static int cf_runtime_alloc(int size, int **leaders, uint32_t *nreq_p)
{
    uint32_t nreq = 64;
    while (nreq < cf_g.cfg.max_requests)
        nreq <<= 1;
    *nreq_p = nreq;
    if (cf_g.cfg.disable)
        return 0;
    *leaders = calloc((size_t)size, sizeof(int));
    cf_g.world_node = calloc((size_t)size, sizeof(int));
    cf_g.req_key = calloc(nreq, sizeof(*cf_g.req_key));
    cf_g.req_val = calloc(nreq, sizeof(*cf_g.req_val));
    int threads = cf_threads_alloc();
    return *leaders && cf_g.world_node && cf_g.req_key && cf_g.req_val && threads;
}

void cf_runtime_init(int provided)
{
    (void)provided;
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    cf_config_read(&cf_g.cfg, rank == 0);
    cf_modules_register(cf_modules, cf_nmodules);
    cf_g.world_rank = rank;
    cf_g.world_size = size;
    cf_g.world_handle = MPI_COMM_WORLD;

    /* everything is allocated first, then the ranks agree: a rank that is
     * switched off or short of memory must not leave the others waiting in
     * the collectives below (or, at finalize, in the merge) */
    uint32_t nreq;
    int *leaders = NULL, mine[2] = {cf_runtime_alloc(size, &leaders, &nreq), 1}, all[2] = {0, 0};
    mine[1] = cf_g.cfg.disable || cf_samples_init() == CF_OK;
    PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all[0]) {
        if (rank == 0 && !cf_g.cfg.disable)
            cf_log("a rank is short of memory or has COMMFIT_DISABLE set; the job runs without profiling");
        goto err_off;
    }
    if (!all[1]) {
        cf_samples_free();
        if (rank == 0)
            cf_log("no memory for %u samples on some rank; waits and one-way times are not measured",
                   cf_g.cfg.samples);
    }
    cf_g.req_mask = nreq - 1;
    cf_g.req_done_shared = MPI_REQUEST_NULL;
#ifdef OPEN_MPI /* request handles are pointers there; MPICH's are integers and not shared */
    void *shared = dlsym(RTLD_DEFAULT, "ompi_request_empty");
    if (shared)
        cf_g.req_done_shared = (MPI_Request)shared;
    cf_pml_shared_requests();
#endif
    PMPI_Comm_dup(MPI_COMM_WORLD, &cf_g.tool_comm);
    {
        /* a job started by MPI_Comm_spawn writes a profile of its own */
        MPI_Comm parent = MPI_COMM_NULL;
        cf_g.spawned = PMPI_Comm_get_parent(&parent) == MPI_SUCCESS && parent != MPI_COMM_NULL;
    }

    /* node map: node index of every world rank, from the shared-memory split */
    MPI_Comm shm;
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm) == MPI_SUCCESS) {
        int leader = rank;
        PMPI_Bcast(&leader, 1, MPI_INT, 0, shm); /* world rank of the node's first rank */
        /* CPUs are contended by every rank on the machine, not only by
         * those MPI counts as this node's */
        MPI_Comm machine = cf_machine_comm(shm);
        PMPI_Comm_size(machine, &cf_g.node_ranks);
        cf_g.node_cpus = cf_node_cpus(machine);
        PMPI_Comm_free(&machine);
        PMPI_Comm_free(&shm);
        PMPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
    } else {
        for (int i = 0; i < size; i++)
            leaders[i] = i;
    }
    /* nodes numbered by their first world rank, in order */
    int nnodes = 0;
    for (int i = 0; i < size; i++) {
        if (leaders[i] == i)
            nnodes++;
        cf_g.world_node[i] = -1;
    }
    for (int i = 0, k = 0; i < size; i++)
        if (leaders[i] == i)
            cf_g.world_node[i] = k++;
    for (int i = 0; i < size; i++)
        cf_g.world_node[i] = cf_g.world_node[leaders[i]];
    free(leaders);
    cf_g.node = cf_g.world_node[rank];
    cf_g.nnodes = nnodes;

    cf_sync_test_offset(rank == 0);
    if (cf_clock_init(cf_g.cfg.timer) != 0 && rank == 0)
        cf_log("COMMFIT_TIMER=tsc: this processor does not say its TSC is invariant; CLOCK_MONOTONIC is read instead");
    cf_sync_start();
    cf_sync_measure(&cf_sync.init);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    cf_g.init_wall = (double)now.tv_sec + now.tv_nsec * 1e-9;

    atomic_store(&cf_g.state, 1);
    cf_g.tail_calls = cf_tail_calls();
    cf_recording_resume();
    cf_comm_register(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    cf_comm_register(MPI_COMM_SELF, "MPI_COMM_SELF");
    /* the modules, in the order of their list (collective: the same on every rank) */
    for (size_t m = 0; m < cf_nmodules; m++)
        if (cf_modules[m].init)
            cf_modules[m].init();
    return;

err_off:
    free(leaders);
    free(cf_g.world_node);
    free(cf_g.req_key);
    free(cf_g.req_val);
    cf_threads_free();
    cf_g.world_node = NULL;
    cf_g.req_key = NULL;
    cf_g.req_val = NULL;
    cf_samples_free();
    atomic_store(&cf_g.state, 0);
}
