/* Profile writer and reader: round trip, atomic write, and every kind of
 * bad input a reader meets (truncated, corrupt, wrong version), fuzzed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "tmpdir.h"
#include "cf_profile.h"

static int setup(void **state)
{
    (void)state;
    return tmpdir_setup("profile");
}

static void make_profile(cf_profile_t *p)
{
    cf_profile_init(p);
    p->ranks = 2;
    p->nodes = 2;
    p->wall_s = 1.5;
    snprintf(p->mpi_library, sizeof(p->mpi_library), "Open MPI v4.1.4");
    snprintf(p->program, sizeof(p->program), "python3.11");
    p->frameworks = CF_FW_KNOWN | CF_FW_BIT(TORCH);
    p->unfinished_requests = 3;
    p->nrank = 2;
    p->rank = calloc(2, sizeof(*p->rank));
    p->rank[0] = (cf_rank_info_t){.rank = 0, .node = 0, .host = "a", .wall_s = 1.5, .mpi_s = 0.25, .node_ranks = 3,
                                   .node_cpus = 2};
    p->rank[1] = (cf_rank_info_t){.rank = 1, .node = 1, .host = "b", .wall_s = 1.4, .mpi_s = 0.5, .node_ranks = 1,
                                   .node_cpus = 8};
    p->oversubscribed = 1;
    p->ranks_per_node_max = 3;
    p->cpus_per_node_min = 2;
    cf_profile_add_partial_reason(p, "samples ran out: %d calls chosen for sampling were not sampled", 7);
    p->ncomm = 1;
    p->comm = calloc(1, sizeof(*p->comm));
    p->comm[0] = (cf_comm_info_t){.id = CF_COMM_ID_WORLD, .size = 4, .nodes = 2, .name = "MPI_COMM_WORLD"};
    p->nregion = 1;
    p->region = calloc(1, sizeof(char *));
    p->region[0] = strdup("step");
    p->nrec = 2;
    p->rec = calloc(2, sizeof(*p->rec));
    p->rec[0] = (cf_record_t){.layer = 0, .op = "MPI_Allreduce", .kind = "collective", .comm = CF_COMM_ID_WORLD,
                              .path = 2, .size_lo = 8192, .size_hi = 16383, .calls = 28, .bytes = 229376,
                              .t_sum = 0.028, .t_min = 0.0005, .t_max = 0.003, .t_p50 = 0.001, .t_p99 = 0.0029,
                              .region = 1, .xfer_n = 3, .xfer_sum = 0.0021, .xfer_p50 = 0.0007, .xfer_p99 = 0.0008,
                              .sample_eligible = 28, .sample_selected = 5};
    p->rec[1] = (cf_record_t){.layer = 1, .op = "ucp_tag_send_nbx", .kind = "p2p", .parent_op = "MPI_Send",
                              .path = 1, .size_lo = 1, .size_hi = 1, .calls = 1, .bytes = 1};
    /* rank 0's step: its page faults, context switches and period; rank 1 none */
    assert_int_equal(cf_profile_set_rank_step(p, 0, "step", 812.5, 2.25, 0.025), CF_OK);
}

static void test_roundtrip(void **state)
{
    (void)state;
    cf_profile_t p, q;
    char path[300], err[256];
    make_profile(&p);
    snprintf(path, sizeof(path), "%s/rt.json", tmpdir);
    assert_int_equal(cf_profile_write(&p, path, err, sizeof(err)), CF_OK);
    assert_int_equal(cf_profile_read(path, &q, err, sizeof(err)), CF_OK);
    assert_int_equal(q.ranks, 2);
    assert_int_equal(q.nodes, 2);
    assert_int_equal(q.nrank, 2);
    assert_string_equal(q.rank[1].host, "b");
    assert_int_equal(q.ncomm, 1);
    assert_int_equal(q.comm[0].size, 4);
    assert_int_equal(q.nrec, 2);
    assert_string_equal(q.rec[0].op, "MPI_Allreduce");
    assert_string_equal(q.rec[0].kind, "collective");
    assert_int_equal(q.rec[0].calls, 28);
    assert_int_equal(q.rec[0].bytes, 229376);
    assert_int_equal(q.rec[0].size_lo, 8192);
    assert_true(q.rec[0].t_p50 == 0.001);
    assert_int_equal(q.rec[0].region, 1);
    assert_int_equal(q.rec[0].xfer_n, 3);
    assert_true(q.rec[0].xfer_p50 == 0.0007);
    assert_int_equal(q.rec[1].xfer_n, 0);
    assert_string_equal(q.region[0], "step");
    assert_int_equal(q.rec[1].layer, 1);
    assert_string_equal(q.rec[1].parent_op, "MPI_Send");
    assert_int_equal(q.rec[1].path, 1);
    assert_int_equal(q.rec[0].sample_eligible, 28);
    assert_int_equal(q.rec[0].sample_selected, 5);
    assert_int_equal(q.rec[1].sample_eligible, 0);
    assert_true(q.partial);
    assert_int_equal(q.npartial_reason, 1);
    assert_string_equal(q.partial_reason[0], "samples ran out: 7 calls chosen for sampling were not sampled");
    assert_int_equal(q.oversubscribed, 1);
    assert_int_equal(q.ranks_per_node_max, 3);
    assert_int_equal(q.cpus_per_node_min, 2);
    assert_string_equal(q.program, "python3.11");
    assert_int_equal(q.frameworks, CF_FW_KNOWN | CF_FW_BIT(TORCH));
    assert_int_equal(q.unfinished_requests, 3);
    assert_int_equal(q.rank[0].node_ranks, 3);
    assert_int_equal(q.rank[0].node_cpus, 2);
    assert_int_equal(q.rank[1].node_cpus, 8);
    const char *sr;
    double step_s;
    assert_true(cf_profile_rank_faults(&q, 0, &sr) == 812.5);
    assert_string_equal(sr, "step");
    assert_true(cf_profile_rank_load(&q, 0, &step_s) == 2.25);
    assert_true(step_s == 0.025f);
    assert_true(isnan(cf_profile_rank_faults(&q, 1, &sr)) && sr == NULL);
    assert_true(isnan(cf_profile_rank_load(&q, 1, &step_s)) && isnan(step_s));
    /* no temporary file is left behind */
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "ls '%s' | grep -q tmp", tmpdir);
    assert_int_not_equal(system(cmd), 0);
    cf_profile_free(&p);
    cf_profile_free(&q);
}

/* A profile written before the oversubscription and sampling members reads
 * as unknown: -1 and 0, no reasons. */
static void test_older_profile(void **state)
{
    (void)state;
    cf_profile_t p, q;
    char err[256];
    make_profile(&p);
    json_t *root = cf_profile_to_json(&p);
    json_t *job = json_object_get(root, "job");
    json_object_del(job, "partial_reasons");
    json_object_del(job, "oversubscribed");
    json_object_del(job, "ranks_per_node_max");
    json_object_del(job, "cpus_per_node_min");
    json_object_del(job, "program");
    json_object_del(job, "frameworks");
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(root, "ranks"), i, o) {
        json_object_del(o, "node_ranks");
        json_object_del(o, "node_cpus");
    }
    json_array_foreach(json_object_get(root, "records"), i, o) {
        json_object_del(o, "sample_eligible");
        json_object_del(o, "sample_selected");
    }
    assert_int_equal(cf_profile_from_json(root, &q, err, sizeof(err)), CF_OK);
    assert_true(q.partial); /* the flag itself is kept */
    assert_int_equal(q.npartial_reason, 0);
    assert_null(q.partial_reason);
    assert_int_equal(q.oversubscribed, -1);
    assert_int_equal(q.ranks_per_node_max, 0);
    assert_int_equal(q.cpus_per_node_min, 0);
    assert_string_equal(q.program, "");
    assert_int_equal(q.frameworks, 0); /* unknown: the advice names every framework's setting */
    assert_int_equal(q.rank[0].node_ranks, 0);
    assert_int_equal(q.rank[0].node_cpus, 0);
    assert_int_equal(q.rec[0].sample_eligible, 0);
    /* a profile that does not know the node figures does not write them */
    cf_profile_t u;
    cf_profile_init(&u);
    json_t *r2 = cf_profile_to_json(&u);
    assert_null(json_object_get(json_object_get(r2, "job"), "oversubscribed"));
    assert_null(json_object_get(json_object_get(r2, "job"), "frameworks"));
    /* known, none loaded: an empty list, read back as known */
    p.frameworks = CF_FW_KNOWN;
    json_t *r3 = cf_profile_to_json(&p);
    assert_int_equal(json_array_size(json_object_get(json_object_get(r3, "job"), "frameworks")), 0);
    cf_profile_t v;
    assert_int_equal(cf_profile_from_json(r3, &v, err, sizeof(err)), CF_OK);
    assert_int_equal(v.frameworks, CF_FW_KNOWN);
    cf_profile_free(&v);
    json_decref(r3);
    json_decref(r2);
    json_decref(root);
    cf_profile_free(&p);
    cf_profile_free(&q);
}

/* The call-site section: read as written, absent, refused when malformed. */
static void test_callsites(void **state)
{
    (void)state;
    cf_profile_t p, q;
    cf_callsites_t cs;
    char err[256];
    make_profile(&p);
    assert_int_equal(cf_profile_callsites(&p, &cs, err, sizeof(err)), CF_OK);
    assert_int_equal(cs.depth, 0); /* no section: none */
    assert_null(cs.site);
    json_t *root = cf_profile_to_json(&p);
    json_object_set_new(
        root, "callsites",
        json_pack("{s:i, s:i, s:b, s:[{s:i, s:s, s:i, s:i, s:i, s:f, s:f, s:f, s:i, s:[{s:s, s:i}, {s:i}]}]}", "depth",
                  2, "lost_calls", 3, "complete", 0, "sites", "id", 1, "op", "MPI_Allreduce", "comm", 1, "calls", 20,
                  "bytes", 2560, "time_s", 0.25, "min_s", 0.001, "max_s", 0.05, "ranks", 2, "stack", "module",
                  "/bin/prog", "offset", 4449, "offset", 77));
    assert_int_equal(cf_profile_from_json(root, &q, err, sizeof(err)), CF_OK);
    assert_int_equal(cf_profile_callsites(&q, &cs, err, sizeof(err)), CF_OK);
    assert_int_equal(cs.depth, 2);
    assert_int_equal(cs.lost_calls, 3);
    assert_false(cs.complete);
    assert_int_equal(cs.n, 1);
    assert_string_equal(cs.site[0].op, "MPI_Allreduce");
    assert_int_equal(cs.site[0].comm, 1);
    assert_int_equal(cs.site[0].calls, 20);
    assert_int_equal(cs.site[0].bytes, 2560);
    assert_true(cs.site[0].time_s == 0.25);
    assert_int_equal(cs.site[0].ranks, 2);
    assert_int_equal(cs.site[0].nframe, 2);
    assert_string_equal(cs.site[0].frame[0].module, "/bin/prog");
    assert_int_equal(cs.site[0].frame[0].offset, 4449);
    assert_null(cs.site[0].frame[0].symbol);
    assert_null(cs.site[0].frame[1].module); /* not in a module */
    assert_int_equal(cs.site[0].frame[1].offset, 77);
    free(cs.site);
    cf_profile_free(&q);
    /* a site without calls is refused with where it is */
    json_object_del(json_array_get(json_object_get(json_object_get(root, "callsites"), "sites"), 0), "calls");
    assert_int_equal(cf_profile_from_json(root, &q, err, sizeof(err)), CF_OK);
    assert_int_equal(cf_profile_callsites(&q, &cs, err, sizeof(err)), CF_ERR_FORMAT);
    assert_non_null(strstr(err, "callsites.sites[0] needs"));
    assert_null(cs.site);
    cf_profile_free(&q);
    json_decref(root);
    cf_profile_free(&p);
}

static void test_unwritable(void **state)
{
    (void)state;
    cf_profile_t p;
    char path[300], err[256] = "";
    make_profile(&p);
    snprintf(path, sizeof(path), "%s/no/such/dir/p.json", tmpdir);
    assert_int_equal(cf_profile_write(&p, path, err, sizeof(err)), CF_ERR_IO);
    assert_non_null(strstr(err, "No such file"));
    cf_profile_free(&p);
}

static int read_text(const char *text, size_t len, char *err, size_t errlen)
{
    char path[300];
    snprintf(path, sizeof(path), "%s/in.json", tmpdir);
    FILE *f = fopen(path, "w");
    fwrite(text, 1, len, f);
    fclose(f);
    cf_profile_t q;
    int rc = cf_profile_read(path, &q, err, errlen);
    if (rc == CF_OK)
        cf_profile_free(&q);
    return rc;
}

static char *profile_text(size_t *len_p)
{
    cf_profile_t p;
    make_profile(&p);
    json_t *j = cf_profile_to_json(&p);
    char *s = json_dumps(j, JSON_INDENT(1));
    json_decref(j);
    cf_profile_free(&p);
    *len_p = strlen(s);
    return s;
}

/* Only a regular file or a new name takes a profile: a FIFO, a device or
 * a directory is refused and left as it was, a symbolic link is written
 * through and stays a link. */
static void test_output_kinds(void **state)
{
    (void)state;
    cf_profile_t p, q;
    char fifo[300], dir[300], file[300], link[300], err[256] = "";
    struct stat st;
    make_profile(&p);
    snprintf(fifo, sizeof(fifo), "%s/fifo", tmpdir);
    snprintf(dir, sizeof(dir), "%s/adir", tmpdir);
    snprintf(file, sizeof(file), "%s/real.json", tmpdir);
    snprintf(link, sizeof(link), "%s/link.json", tmpdir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(cf_profile_write(&p, fifo, err, sizeof(err)), CF_ERR_INVALID);
    assert_non_null(strstr(err, "a FIFO, not a file"));
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(cf_profile_write(&p, dir, err, sizeof(err)), CF_ERR_INVALID);
    assert_non_null(strstr(err, "a directory"));
    assert_int_equal(cf_profile_write(&p, "/dev/null", err, sizeof(err)), CF_ERR_INVALID);
    assert_non_null(strstr(err, "a device"));
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    /* through a link: the file it names gets the profile */
    assert_int_equal(cf_profile_write(&p, file, err, sizeof(err)), CF_OK);
    assert_int_equal(symlink(file, link), 0);
    p.wall_s = 2.5;
    assert_int_equal(cf_profile_write(&p, link, err, sizeof(err)), CF_OK);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(cf_profile_read(file, &q, err, sizeof(err)), CF_OK);
    assert_true(q.wall_s == 2.5);
    cf_profile_free(&q);
    /* a link to nothing is refused, and nothing is created */
    unlink(file);
    assert_int_equal(cf_profile_write(&p, link, err, sizeof(err)), CF_ERR_INVALID);
    assert_non_null(strstr(err, "symbolic link to nothing"));
    assert_int_not_equal(stat(file, &st), 0);
    unlink(link);
    unlink(fifo);
    rmdir(dir);
    cf_profile_free(&p);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(read_text("", 0, err, sizeof(err)), CF_ERR_FORMAT);
    assert_non_null(strstr(err, "truncated"));
    assert_int_equal(read_text("{\"format\": \"commfit-profile\", \"vers", 35, err, sizeof(err)), CF_ERR_FORMAT);
    assert_non_null(strstr(err, "truncated"));
    assert_int_equal(read_text("[1,2]", 5, err, sizeof(err)), CF_ERR_FORMAT);
    assert_int_equal(read_text("{\"format\": \"darshan\"}", 21, err, sizeof(err)), CF_ERR_FORMAT);
    assert_non_null(strstr(err, "not a commfit profile"));
    const char *v2 = "{\"format\": \"commfit-profile\", \"version\": 2}";
    assert_int_equal(read_text(v2, strlen(v2), err, sizeof(err)), CF_ERR_VERSION);
    assert_non_null(strstr(err, "version 2"));
    const char *v1s = "{\"format\": \"commfit-profile\", \"version\": \"1\"}";
    assert_int_equal(read_text(v1s, strlen(v1s), err, sizeof(err)), CF_ERR_FORMAT);
    /* a record without calls names itself */
    size_t len;
    char *s = profile_text(&len);
    char *calls = strstr(s, "\"calls\"");
    assert_non_null(calls);
    memcpy(calls, "\"cells\"", 7);
    assert_int_equal(read_text(s, len, err, sizeof(err)), CF_ERR_FORMAT);
    assert_non_null(strstr(err, "records[0]: 'calls' is missing"));
    free(s);
    cf_profile_t q;
    assert_int_equal(cf_profile_read("/nonexistent/commfit.json", &q, err, sizeof(err)), CF_ERR_IO);
}

/* Every prefix of a valid profile is an error, never a crash or a success. */
/* A host name or library string with terminal escapes reads back clean. */
static void test_control_characters(void **state)
{
    (void)state;
    cf_profile_t p, q;
    char path[300], err[256] = "";
    make_profile(&p);
    snprintf(p.rank[0].host, sizeof(p.rank[0].host), "n\033[2J\ax");
    snprintf(p.mpi_library, sizeof(p.mpi_library), "lib\r\nfake line");
    snprintf(path, sizeof(path), "%s/ctl.json", tmpdir);
    assert_int_equal(cf_profile_write(&p, path, err, sizeof(err)), CF_OK);
    assert_int_equal(cf_profile_read(path, &q, err, sizeof(err)), CF_OK);
    assert_string_equal(q.rank[0].host, "n?[2J?x");
    assert_string_equal(q.mpi_library, "lib??fake line");
    cf_profile_free(&q);
    cf_profile_free(&p);
    unlink(path);
}

/* Values no run can produce are refused with a message naming them. */
static void test_inconsistent_values(void **state)
{
    (void)state;
    cf_profile_t p, q;
    char path[300], err[256] = "";
    snprintf(path, sizeof(path), "%s/odd.json", tmpdir);
    make_profile(&p);
    p.ranks = 0; /* with 2 rank entries */
    assert_int_equal(cf_profile_write(&p, path, err, sizeof(err)), CF_OK);
    assert_int_equal(cf_profile_read(path, &q, err, sizeof(err)), CF_ERR_FORMAT);
    assert_non_null(strstr(err, "job: 'ranks' is 0 but 'ranks' lists 2 ranks"));
    p.ranks = 2;
    p.rec[0].t_sum = -1.0;
    assert_int_equal(cf_profile_write(&p, path, err, sizeof(err)), CF_OK);
    assert_int_equal(cf_profile_read(path, &q, err, sizeof(err)), CF_ERR_FORMAT);
    assert_non_null(strstr(err, "records[0].time_s: 'sum' is -1, not a time"));
    p.rec[0].t_sum = 0.028;
    p.rec[0].calls = p.rec[1].calls = (uint64_t)INT64_MAX / 2 + 1; /* each fine, not their sum */
    assert_int_equal(cf_profile_write(&p, path, err, sizeof(err)), CF_OK);
    assert_int_equal(cf_profile_read(path, &q, err, sizeof(err)), CF_ERR_FORMAT);
    assert_non_null(strstr(err, "overflow"));
    cf_profile_free(&p);
    unlink(path);
}

static void test_truncations(void **state)
{
    (void)state;
    size_t len;
    char *s = profile_text(&len);
    char err[256];
    for (size_t n = 0; n < len - 1; n += 7) {
        int rc = read_text(s, n, err, sizeof(err));
        assert_int_not_equal(rc, CF_OK);
        assert_true(strlen(err) > 0);
    }
    assert_int_equal(read_text(s, len, err, sizeof(err)), CF_OK);
    free(s);
}

/* Random byte changes: the reader answers OK or a described error. */
static void test_fuzz(void **state)
{
    (void)state;
    size_t len;
    char *s = profile_text(&len);
    char *m = malloc(len);
    char err[256];
    unsigned seed = 12345;
    int ok = 0, bad = 0;
    for (int i = 0; i < 3000; i++) {
        memcpy(m, s, len);
        int edits = 1 + (int)(rand_r(&seed) % 4);
        for (int e = 0; e < edits; e++)
            m[rand_r(&seed) % len] = (char)" {}[]\",:0123456789aeEfn-.x"[rand_r(&seed) % 27];
        err[0] = 0;
        int rc = read_text(m, len, err, sizeof(err));
        if (rc == CF_OK)
            ok++;
        else {
            bad++;
            assert_true(strlen(err) > 0);
        }
    }
    assert_true(bad > 0);
    print_message("fuzz: %d accepted, %d rejected with a message\n", ok, bad);
    free(m);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),   cmocka_unit_test(test_older_profile), cmocka_unit_test(test_callsites), cmocka_unit_test(test_unwritable), cmocka_unit_test(test_output_kinds), cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_truncations), cmocka_unit_test(test_control_characters), cmocka_unit_test(test_inconsistent_values), cmocka_unit_test(test_fuzz),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
