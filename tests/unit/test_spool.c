/* The spool of a job that did not finish: part paths, and the merge of
 * parts written here the way the plugin writes them (ranks that dropped
 * records, a rank without a part, an earlier job's part, a bad file). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "tmpdir.h"
#include "cf_sched.h"
#include "cf_spool.h"

static int setup(void **state)
{
    (void)state;
    return tmpdir_setup("spool");
}

static void test_paths(void **state)
{
    (void)state;
    char sub[64], path[64];
    assert_int_equal(cf_spool_paths("/s", 17, 256, sub, path, sizeof(path)), (int)strlen("/s/ranks-0-255/rank-17.spill"));
    assert_string_equal(sub, "/s/ranks-0-255");
    assert_string_equal(path, "/s/ranks-0-255/rank-17.spill");
    cf_spool_paths("/s", 300, 256, sub, path, sizeof(path));
    assert_string_equal(path, "/s/ranks-256-511/rank-300.spill");
    cf_spool_paths("/s", 17, 0, sub, path, sizeof(path));
    assert_string_equal(sub, "/s");
    assert_string_equal(path, "/s/rank-17.spill");
    assert_int_equal(cf_spool_paths("/a/very/long/spool/directory/name", 123456, 256, sub, path, 40), -1);
}

/* Keys of an allreduce on world of three sizes. */
static uint64_t key(unsigned bin) { return cf_key_make(CF_LAYER_MPI, 1, CF_COMM_ID_WORLD, CF_PATH_INTRA, 0, bin); }

static void put(FILE *f, const void *p, size_t n) { assert_int_equal(fwrite(p, 1, n, f), n); }

/* A part of rank of size ranks: one thread with the keys (calls each) and dropped. */
static void write_part(const char *dir, int rank, int size, uint64_t nonce, double start, const uint64_t *keys,
                       const uint64_t *calls, size_t n, uint64_t dropped)
{
    char sub[512], path[512];
    assert_true(cf_spool_paths(dir, rank, 2, sub, path, sizeof(path)) > 0);
    mkdir(dir, 0777);
    mkdir(sub, 0777);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    cf_spill_hdr_t h;
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, CF_SPILL_MAGIC, 8);
    h.version = CF_SPILL_VERSION;
    h.hdr_size = sizeof(h);
    h.stat_size = sizeof(cf_stat_t);
    h.hist_n = CF_HIST_N;
    h.rank = rank;
    h.size = size;
    h.nnodes = 1;
    h.end = rank == 1 ? CF_END_ABORT : CF_END_SIGNAL;
    h.code = rank == 1 ? 3 : 15;
    h.nthreads = 1;
    h.ncomm = 1;
    h.nops = 2;
    h.nonce = nonce;
    snprintf(h.jobid, sizeof(h.jobid), "job %llu", (unsigned long long)nonce);
    h.init_wall = start;
    h.wall_s = 2.5;
    snprintf(h.host, sizeof(h.host), "node%d", rank);
    put(f, &h, sizeof(h));
    cf_spill_op_t ops[2] = {{"none", "other"}, {"MPI_Allreduce", "collective"}};
    put(f, ops, sizeof(ops));
    cf_spill_comm_t c = {.id = CF_COMM_ID_WORLD, .size = size, .nodes = 1, .instances = 1};
    snprintf(c.name, sizeof(c.name), "MPI_COMM_WORLD");
    put(f, &c, sizeof(c));
    cf_spill_thread_t th = {.nstats = n, .dropped = dropped, .mpi_ns = 1000000};
    put(f, &th, sizeof(th));
    for (size_t i = 0; i < n; i++) {
        cf_stat_t s;
        memset(&s, 0, sizeof(s));
        s.key = keys[i];
        for (uint64_t k = 0; k < calls[i]; k++)
            cf_stat_add(&s, 8, 1000);
        put(f, &s, sizeof(s));
    }
    fclose(f);
}

static const cf_record_t *find(const cf_profile_t *p, unsigned bin)
{
    for (size_t i = 0; i < p->nrec; i++)
        if (p->rec[i].size_lo == cf_size_bin_lo(bin))
            return &p->rec[i];
    return NULL;
}

static int has_reason(const cf_profile_t *p, const char *s)
{
    for (size_t i = 0; i < p->npartial_reason; i++)
        if (strstr(p->partial_reason[i], s))
            return 1;
    return 0;
}

static void test_merge(void **state)
{
    (void)state;
    char dir[300], err[600], note[128];
    uint64_t job = 0;
    snprintf(dir, sizeof(dir), "%s/job.parts", tmpdir);
    double now = (double)time(NULL);
    /* rank 0 dropped records and kept A and B; rank 1 dropped none and kept
     * A and C; rank 2 left nothing; an hour-old job's rank 0 is there too */
    uint64_t k0[] = {key(4), key(5)}, c0[] = {3, 2}, k1[] = {key(4), key(6)}, c1[] = {3, 7};
    write_part(dir, 0, 3, 42, now, k0, c0, 2, 5);
    write_part(dir, 1, 3, 42, now, k1, c1, 2, 0);
    write_part(dir, 2, 3, 41, now - 3600, k0, c0, 2, 0);
    cf_profile_t p;
    assert_int_equal(cf_spool_merge(dir, 0, &p, &job, note, sizeof(note), err, sizeof(err)), CF_OK);
    assert_int_equal(job, 42); /* no job file: the newest job's parts */
    assert_string_equal(note, "parts of 2 of 3 ranks");
    assert_int_equal(p.ranks, 3);
    assert_int_equal((int)p.nrank, 2);
    assert_true(p.partial);
    assert_int_equal((int)p.nrec, 3);
    const cf_record_t *a = find(&p, 4), *b = find(&p, 5), *c = find(&p, 6);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_int_equal(a->calls, 6);
    assert_int_equal(b->calls, 2);
    assert_int_equal(c->calls, 7);
    assert_string_equal(a->op, "MPI_Allreduce");
    /* rank 2 is missing everywhere; rank 0, which dropped, may lack C only */
    assert_int_equal(a->ranks_missing, 1);
    assert_int_equal(b->ranks_missing, 1);
    assert_int_equal(c->ranks_missing, 2);
    assert_true(has_reason(&p, "rank 0 ended by SIGTERM"));
    assert_true(has_reason(&p, "rank 1 called MPI_Abort (errorcode 3)"));
    assert_true(has_reason(&p, "1 of 3 ranks left nothing"));
    assert_true(has_reason(&p, "ranks 2"));
    assert_true(has_reason(&p, "clocks not synchronized"));
    assert_true(has_reason(&p, "1 parts of another job (job 41) left in the spool"));
    assert_int_equal((int)p.ncomm, 1);
    cf_profile_free(&p);
    /* the profile reads back */
    char path[400];
    snprintf(path, sizeof(path), "%s/m.json", tmpdir);
    assert_int_equal(cf_spool_merge(dir, 0, &p, NULL, NULL, 0, err, sizeof(err)), CF_OK);
    assert_int_equal(cf_profile_write(&p, path, err, sizeof(err)), CF_OK);
    cf_profile_free(&p);
    assert_int_equal(cf_profile_read(path, &p, err, sizeof(err)), CF_OK);
    assert_int_equal(find(&p, 6)->ranks_missing, 2);
    cf_profile_free(&p);
    /* only the parts of the job asked for: a spool of the hour-old job alone has none of job 42 */
    char old[400];
    snprintf(old, sizeof(old), "%s/old.parts", tmpdir);
    write_part(old, 2, 3, 41, now - 3600, k0, c0, 2, 0);
    assert_int_equal(cf_spool_merge(old, 42, &p, NULL, NULL, 0, err, sizeof(err)), CF_ERR_NODATA);
    assert_int_equal(cf_spool_merge(old, 0, &p, NULL, NULL, 0, err, sizeof(err)), CF_OK);
    cf_profile_free(&p);
    cf_spool_remove(old, 0);
    assert_int_not_equal(access(old, F_OK), 0);
    /* a spool holding parts of job 42 is not claimed by job 43; its job file names the job merged */
    char other[64], why[300];
    assert_int_equal(cf_spool_claim(dir, 43, "job 43", now, other, sizeof(other), why, sizeof(why)), 1);
    assert_int_equal(cf_spool_claim(dir, 41, "job 41", now, other, sizeof(other), why, sizeof(why)), 1);
    uint64_t n = 0;
    assert_int_not_equal(cf_spool_job_read(dir, &n, other, sizeof(other), NULL), 0);
    char jf[400];
    snprintf(jf, sizeof(jf), "%s/job", dir);
    FILE *f = fopen(jf, "w");
    fprintf(f, "commfit spool 1\nnonce %016x\njob job 41\nstarted %.0f\n", 41, now - 3600);
    fclose(f);
    assert_int_equal(cf_spool_job_read(dir, &n, other, sizeof(other), NULL), 0);
    assert_int_equal(n, 41);
    assert_string_equal(other, "job 41");
    assert_int_equal(cf_spool_merge(dir, 0, &p, &job, NULL, 0, err, sizeof(err)), CF_OK);
    assert_int_equal(job, 41);
    assert_int_equal((int)p.nrank, 1);
    assert_true(has_reason(&p, "2 parts of another job (job 42) left in the spool"));
    cf_profile_free(&p);
    /* removing job 41's parts leaves job 42's */
    cf_spool_remove(dir, 41);
    assert_int_equal(access(jf, F_OK), -1);
    /* a job file naming a job none of the parts is of: the newest job's */
    f = fopen(jf, "w");
    fprintf(f, "commfit spool 1\nnonce %016x\njob job 99\nstarted %.0f\n", 99, now);
    fclose(f);
    assert_int_equal(cf_spool_merge(dir, 0, &p, &job, NULL, 0, err, sizeof(err)), CF_OK);
    assert_int_equal(job, 42);
    assert_int_equal((int)p.nrank, 2);
    assert_false(has_reason(&p, "another job"));
    cf_profile_free(&p);
    cf_spool_remove(dir, 42);
    assert_int_not_equal(access(dir, F_OK), 0);
    /* an empty spool is claimed: its job file names the job */
    mkdir(dir, 0700);
    assert_int_equal(cf_spool_claim(dir, 44, "job 44", now, other, sizeof(other), why, sizeof(why)), 0);
    assert_int_equal(cf_spool_job_read(dir, &n, other, sizeof(other), NULL), 0);
    assert_int_equal(n, 44);
    cf_spool_remove(dir, 44);
    assert_int_not_equal(access(dir, F_OK), 0);
}

static void test_bad(void **state)
{
    (void)state;
    char dir[300], path[400], err[600];
    cf_profile_t p;
    snprintf(dir, sizeof(dir), "%s/empty.parts", tmpdir);
    mkdir(dir, 0777);
    assert_int_equal(cf_spool_merge(dir, 0, &p, NULL, NULL, 0, err, sizeof(err)), CF_ERR_NODATA);
    snprintf(path, sizeof(path), "%s/rank-0.spill", dir);
    FILE *f = fopen(path, "wb");
    fputs("not a part", f);
    fclose(f);
    assert_int_equal(cf_spool_merge(dir, 0, &p, NULL, NULL, 0, err, sizeof(err)), CF_ERR_FORMAT);
    assert_non_null(strstr(err, "not a commfit spill file"));
    snprintf(path, sizeof(path), "%s/missing", tmpdir);
    assert_int_equal(cf_spool_merge(path, 0, &p, NULL, NULL, 0, err, sizeof(err)), CF_ERR_IO);
    /* a part whose header claims 2^26 communicators: refused before anything is allocated, the
     * reason among the profile's; the other part merged */
    snprintf(dir, sizeof(dir), "%s/sizes.parts", tmpdir);
    uint64_t k[] = {key(4)}, c[] = {2};
    write_part(dir, 0, 2, 7, (double)time(NULL), k, c, 1, 0);
    write_part(dir, 1, 2, 7, (double)time(NULL), k, c, 1, 0);
    char sub[512], part[512];
    cf_spool_paths(dir, 1, 2, sub, part, sizeof(part));
    f = fopen(part, "r+b");
    uint32_t ncomm = 1u << 26;
    fseek(f, (long)offsetof(cf_spill_hdr_t, ncomm), SEEK_SET);
    fwrite(&ncomm, sizeof(ncomm), 1, f);
    fclose(f);
    assert_int_equal(cf_spool_merge(dir, 0, &p, NULL, NULL, 0, err, sizeof(err)), CF_OK);
    assert_int_equal((int)p.nrank, 1);
    char want[700];
    snprintf(want, sizeof(want), "1 parts refused (%s: inconsistent header: counts out of range)", part);
    assert_true(has_reason(&p, want));
    cf_profile_free(&p);
    /* within the header's bounds but past the file's size: after the 2 operations, 1560 bytes, room for 6 */
    ncomm = 1u << 20;
    f = fopen(part, "r+b");
    fseek(f, (long)offsetof(cf_spill_hdr_t, ncomm), SEEK_SET);
    fwrite(&ncomm, sizeof(ncomm), 1, f);
    fclose(f);
    assert_int_equal(cf_spool_merge(dir, 0, &p, NULL, NULL, 0, err, sizeof(err)), CF_OK);
    assert_true(has_reason(&p, "1048576 communicators claimed, the file has room for 6"));
    cf_profile_free(&p);
}

/* The job's scheduler section kept in the spool: taken back for its own
 * job only, cleaned of what is not a known field, never through a link */
static void test_sched_kept(void **state)
{
    (void)state;
    char dir[300], path[400], link[400];
    snprintf(dir, sizeof(dir), "%s/sched", tmpdir);
    mkdir(dir, 0700);
    json_t *s = json_pack("{s:s, s:s, s:s, s:i, s:s, s:i}", "name", "slurm", "job_id", "42", "nodes", "n[1-2]",
                          "time_limit_s", 300, "secret", "x", "step", 0);
    assert_int_equal(cf_sched_save(dir, 0xabcULL, s), 0);
    json_decref(s);
    assert_null(cf_sched_load(dir, 0xabdULL)); /* another job's nonce */
    json_t *o = cf_sched_load(dir, 0xabcULL);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "job_id")), "42");
    assert_string_equal(json_string_value(json_object_get(o, "nodes")), "n[1-2]");
    assert_int_equal((int)json_integer_value(json_object_get(o, "time_limit_s")), 300);
    assert_null(json_object_get(o, "secret")); /* not a field of the section */
    assert_null(json_object_get(o, "step"));   /* a number where a string belongs */
    json_decref(o);
    snprintf(path, sizeof(path), "%s/scheduler.0000000000000abc", dir);
    cf_sched_unlink(dir, 0xabcULL);
    assert_int_equal(access(path, F_OK), -1);
    /* a link to a file of the right form, and a file that is not JSON: nothing */
    snprintf(link, sizeof(link), "%s/elsewhere", tmpdir);
    FILE *f = fopen(link, "w");
    fputs("{\"name\": \"slurm\", \"job_id\": \"7\"}", f);
    fclose(f);
    assert_int_equal(symlink(link, path), 0);
    assert_null(cf_sched_load(dir, 0xabcULL));
    unlink(path);
    f = fopen(path, "w");
    fputs("{\"job_id\": ", f);
    fclose(f);
    assert_null(cf_sched_load(dir, 0xabcULL));
    /* nothing outside a batch job */
    assert_int_equal(cf_sched_save(dir, 0xabcULL, NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_paths), cmocka_unit_test(test_merge),
                                       cmocka_unit_test(test_bad), cmocka_unit_test(test_sched_kept)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
