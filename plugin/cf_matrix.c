/* The communication matrix: messages and bytes each rank sent to each
 * world rank by point-to-point calls (sends, the send half of sendrecv,
 * started persistent sends) per communicator, and the sends the UCX layer
 * saw beneath collectives, counted per thread in a table of the
 * (communicator, peer) pairs actually used (CF_PEERS slots) and gathered at
 * finalize into the profile's "matrix" section.  Memory: O(peers used) per
 * rank, and on rank 0 the sum of those lists, never ranks x ranks. */
#include <stdlib.h>
#include <string.h>

#include "cf_matrix.h"
#include "cf_sample.h"

void cf_matrix_thread_init(cf_thread_t *t)
{
    t->peer = calloc(CF_PEERS, sizeof(*t->peer));
}

typedef struct {
    uint64_t key, msgs, bytes; /* key as in cf_peer_t */
} cf_pair_wire_t;

static int cmp_peer(const void *pa, const void *pb)
{
    const cf_pair_wire_t *a = pa, *b = pb;
    uint32_t pa32 = (uint32_t)a->key & ~CF_PEER_UCX, pb32 = (uint32_t)b->key & ~CF_PEER_UCX;
    /* by peer, then communicator and source: the profile's rows by receiver */
    if (pa32 != pb32)
        return (pa32 > pb32) - (pa32 < pb32);
    return (a->key > b->key) - (a->key < b->key);
}

/* This rank's row: its threads' tables summed per key, ascending peers. */
static cf_pair_wire_t *cf_matrix_row(size_t *n_p, uint64_t *lost_p)
{
    uint32_t nthreads = cf_thread_count();
    size_t n = 0, cap = 0;
    cf_pair_wire_t *row = NULL;

    *lost_p = 0;
    for (uint32_t i = 0; i < nthreads; i++) {
        const cf_thread_t *t = cf_thread_at(i);
        if (t == NULL || t->peer == NULL)
            continue;
        *lost_p += t->peer_full;
        for (uint32_t s = 0; s < CF_PEERS; s++) {
            const cf_peer_t *e = &t->peer[s];
            if (e->key == 0)
                continue;
            if (n == cap) {
                size_t c = cap ? 2 * cap : 64;
                cf_pair_wire_t *r = realloc(row, c * sizeof(*r));
                if (r == NULL) {
                    *lost_p += e->msgs;
                    continue;
                }
                row = r;
                cap = c;
            }
            row[n++] = (cf_pair_wire_t){e->key, e->msgs, e->bytes};
        }
    }
    if (n > 0)
        qsort(row, n, sizeof(*row), cmp_peer);
    /* several threads that sent to one peer: one entry */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && row[m - 1].key == row[i].key) {
            row[m - 1].msgs += row[i].msgs;
            row[m - 1].bytes += row[i].bytes;
        } else {
            row[m++] = row[i];
        }
    }
    *n_p = m;
    return row;
}

/* Collective over the world; the section on rank 0, NULL elsewhere (and
 * when rank 0 runs out of memory, which the section then does not hide:
 * it is left out). */
json_t *cf_matrix_section(const cf_fin_t *f)
{
    (void)f;
    size_t n = 0;
    uint64_t lost = 0;
    cf_pair_wire_t *row = cf_matrix_row(&n, &lost);
    int me = cf_g.world_rank, np = cf_g.world_size;
    /* counts in pairs, bounded by CF_PEERS x threads */
    int mine = (int)n, *counts = NULL, *displs = NULL;
    uint64_t lost_all = 0;
    cf_pair_wire_t *all = NULL;
    json_t *sec = NULL;
    MPI_Datatype t;

    PMPI_Reduce(&lost, &lost_all, 1, MPI_UINT64_T, MPI_SUM, 0, cf_g.tool_comm);
    if (me == 0)
        counts = calloc((size_t)np, sizeof(int));
    PMPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, cf_g.tool_comm);
    size_t total = 0;
    if (me == 0 && counts != NULL) {
        displs = calloc((size_t)np, sizeof(int));
        for (int r = 0; r < np; r++)
            total += (size_t)counts[r];
        all = calloc(total ? total : 1, sizeof(*all));
        if (displs != NULL && all != NULL && total <= (size_t)INT32_MAX)
            for (int r = 0, off = 0; r < np; off += counts[r], r++)
                displs[r] = off;
    }
    /* every rank sends nothing when rank 0 has no room: no section */
    int ok = me != 0 || (counts != NULL && displs != NULL && all != NULL && total <= (size_t)INT32_MAX);
    PMPI_Bcast(&ok, 1, MPI_INT, 0, cf_g.tool_comm);
    if (!ok) {
        mine = 0;
        if (counts != NULL)
            memset(counts, 0, (size_t)np * sizeof(int));
    }
    PMPI_Type_contiguous((int)sizeof(cf_pair_wire_t), MPI_BYTE, &t);
    PMPI_Type_commit(&t);
    PMPI_Gatherv(row, mine, t, all, counts, displs, t, 0, cf_g.tool_comm);
    PMPI_Type_free(&t);
    if (me == 0 && ok) {
        json_t *pairs = json_array();
        sec = json_object();
        for (int r = 0; pairs != NULL && r < np; r++)
            for (int k = 0; k < counts[r]; k++) {
                const cf_pair_wire_t *x = &all[displs[r] + k];
                uint32_t lo = (uint32_t)x->key;
                json_array_append_new(pairs, json_pack("[i,I,I,I,I,s]", r, (json_int_t)((lo & ~CF_PEER_UCX) - 1u),
                                                       (json_int_t)x->msgs, (json_int_t)x->bytes,
                                                       (json_int_t)(x->key >> 32), lo & CF_PEER_UCX ? "ucx" : "mpi"));
            }
        if (sec != NULL && pairs != NULL) {
            json_object_set_new(sec, "what", json_string("messages sent, by world rank of sender and receiver and by "
                                                         "communicator: point-to-point calls (source mpi) and the "
                                                         "UCX sends beneath collectives (source ucx)"));
            json_object_set_new(sec, "ranks", json_integer(np));
            json_object_set_new(sec, "columns", json_pack("[s,s,s,s,s,s]", "src", "dst", "messages", "bytes", "comm", "source"));
            json_object_set_new(sec, "pairs", pairs);
            json_object_set_new(sec, "lost_messages", json_integer((json_int_t)lost_all));
        } else {
            json_decref(pairs);
            json_decref(sec);
            sec = NULL;
        }
    }
    free(row);
    free(all);
    free(counts);
    free(displs);
    return sec;
}
