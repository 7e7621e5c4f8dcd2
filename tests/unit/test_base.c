#include "base.h"
#include "test.h"

#include <stdlib.h>

static void test_errors(void)
{
    CHECK_STR(cr_strerror(CR_OK), "success");
    CHECK_STR(cr_strerror(CR_EUTF8), "not valid UTF-8");
    CHECK_STR(cr_strerror((CrErr)9999), "unknown error");
    /* the table's columns: the exit status and the JSON-RPC code */
    CHECK_INT(cr_exit_code(CR_OK), 0);
    CHECK_INT(cr_exit_code(CR_EUSAGE), 1);
    CHECK_INT(cr_exit_code(CR_EDB), 2);
    CHECK_INT(cr_exit_code(CR_EHTTP), 3);
    CHECK_INT(cr_exit_code(CR_ENOINDEX), 4);
    CHECK_INT(cr_exit_code((CrErr)9999), 2);
    CHECK_INT(cr_rpc_code(CR_EINVAL), -32602);
    CHECK_INT(cr_rpc_code(CR_ECANCELED), -32800);
    CHECK_INT(cr_rpc_code(CR_EIO), -32803);
    ErrInfo e = {0};
    CHECK_INT(err_set(&e, CR_EIO, "x=%d", 7), CR_EIO);
    CHECK_INT(e.code, CR_EIO);
    CHECK_STR(e.msg, "x=7");
    CHECK_INT(err_set(NULL, CR_EDB, "ignored"), CR_EDB);
}

static void test_strbuf(void)
{
    StrBuf sb;
    sb_init(&sb);
    sb_adds(&sb, "abc");
    sb_addc(&sb, '-');
    for (int i = 0; i < 1000; i++)
        sb_addf(&sb, "%d,", i);
    CHECK(sb.len > 3000);
    CHECK(strncmp(sb.buf, "abc-0,1,2,", 10) == 0);
    CHECK_INT(strlen(sb.buf), sb.len);
    size_t before = sb.len;
    sb_truncate(&sb, before + 5); /* longer: nothing happens */
    CHECK_INT(sb.len, before);
    sb_consume(&sb, 4);
    CHECK(strncmp(sb.buf, "0,1,2,", 6) == 0);
    CHECK_INT(sb.len, before - 4);
    sb_truncate(&sb, 4);
    CHECK_STR(sb.buf, "0,1,");
    sb_consume(&sb, 99);
    CHECK_STR(sb.buf, "");
    CHECK_INT(sb.len, 0);
    sb_adds(&sb, "abc-0,1,2,");
    size_t n;
    char *p = sb_detach(&sb, &n);
    CHECK_INT(strlen(p), n);
    CHECK_INT(sb.len, 0);
    free(p);
    /* sb_addi writes what "%lld" writes */
    static const int64_t ints[] = {0, 7, -7, 42, 1000000, -99999, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        char want[32];
        snprintf(want, sizeof want, "x%lld", (long long)ints[i]);
        sb_reset(&sb);
        sb_addc(&sb, 'x');
        sb_addi(&sb, ints[i]);
        CHECK_STR(sb.buf, want);
    }
    sb_release(&sb);
    sb_release(NULL);
}

static void test_utf8(void)
{
    static const struct {
        const char *s;
        int valid;
    } cases[] = {
        {"plain ascii", 1},  {"caf\xc3\xa9", 1},
        {"\xe2\x82\xac", 1}, {"\xf0\x9f\x98\x80", 1},
        {"\xc3", 0},         {"\xc0\xaf", 0}, /* overlong */
        {"\xed\xa0\x80", 0}, /* surrogate */ {"\xff", 0},
        {"\xe2\x82", 0},     {"\xf4\x90\x80\x80", 0}, /* > U+10FFFF */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = utf8_valid(cases[i].s, strlen(cases[i].s));
        if (got != cases[i].valid) fprintf(stderr, "utf8 case %zu\n", i);
        CHECK_INT(got, cases[i].valid);
    }
    CHECK(looks_binary("a\0b", 3));
    CHECK(!looks_binary("abc", 3));
}

/* Invalid bytes become U+FFFD one by one; valid sequences pass. */
static void test_utf8_repair(void)
{
    StrBuf sb;
    sb_init(&sb);
    const char in[] = "a\xc3\xa9\xff\xe2\x82z\xf0\x9f\x98\x80";
    utf8_repair(in, sizeof in - 1, &sb);
    CHECK_STR(sb.buf, "a\xc3\xa9\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDz\xf0\x9f\x98\x80");
    CHECK(utf8_valid(sb.buf, sb.len));
    sb_release(&sb);
}

static void test_count_lines(void)
{
    CHECK_INT(count_lines("", 0), 0);
    CHECK_INT(count_lines("a", 1), 1);
    CHECK_INT(count_lines("a\n", 2), 1);
    CHECK_INT(count_lines("a\nb", 3), 2);
    CHECK_INT(count_lines("a\fb\n\n", 5), 2); /* form feed is not a line break */
}

static void test_hash(void)
{
    CHECK(hash64("abc", 3) == hash64("abc", 3));
    CHECK(hash64("abc", 3) != hash64("abd", 3));
    CHECK(hash64("", 0) != hash64("\0", 1));
    char hex[17];
    hash64_hex(0x0123456789abcdefull, hex);
    CHECK_STR(hex, "0123456789abcdef");
}

static void test_strmap(void)
{
    StrMap m;
    strmap_init(&m);
    int64_t v = -1;
    CHECK(!strmap_get(&m, "missing", &v));
    char key[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "k%d", i);
        strmap_put(&m, key, i);
    }
    strmap_put(&m, "k42", 4242);
    CHECK_INT(m.len, 5000);
    CHECK(strmap_get(&m, "k42", &v));
    CHECK_INT(v, 4242);
    CHECK(strmap_get(&m, "k4999", &v));
    CHECK_INT(v, 4999);
    CHECK(strmap_getn(&m, "k7xyz", 2, &v));
    CHECK_INT(v, 7);
    strmap_release(&m);
}

static void test_i64map(void)
{
    I64Map m;
    i64map_init(&m);
    int64_t v = 0;
    CHECK(!i64map_get(&m, 0, &v));
    for (int64_t k = -500; k < 5000; k += 3)
        i64map_put(&m, k * 7919, k);
    i64map_put(&m, 0, 42);
    CHECK(i64map_get(&m, 0, &v));
    CHECK_INT(v, 42);
    CHECK(i64map_get(&m, -497 * 7919, &v));
    CHECK_INT(v, -497);
    CHECK(!i64map_get(&m, 1, NULL));
    CHECK_INT(m.len, 1835); /* 1834 multiples plus key 0 */
    /* deleting every other key keeps the rest findable (probe chains) */
    int ok = 1;
    for (int64_t k = -500; k < 5000; k += 6)
        ok &= i64map_del(&m, k * 7919);
    CHECK(ok);
    CHECK(!i64map_del(&m, -500 * 7919));
    CHECK_INT(m.len, 1835 - 917);
    for (int64_t k = -497; k < 5000; k += 6)
        ok &= i64map_get(&m, k * 7919, &v) && v == k;
    CHECK(ok);
    CHECK(!i64map_get(&m, -500 * 7919, NULL));
    int64_t sum = 0, key;
    size_t seen = 0;
    for (size_t pos = 0; i64map_next(&m, &pos, &key, &v); seen++)
        sum += v;
    CHECK_INT(seen, m.len);
    int64_t want = 42;
    for (int64_t k = -497; k < 5000; k += 6)
        want += k;
    CHECK_INT(sum, want);
    i64map_release(&m);
}

static void no_checks(void) {}
static void skips(void)
{
    SKIP("not on this machine");
}

/* The harness itself: a test that checks nothing fails, a skip is a skip;
 * TEST_FILTER picks the tests whose name holds one of its words. */
static void test_harness(void)
{
    const char *was = getenv("TEST_FILTER");
    char *keep = was ? strdup(was) : NULL;
    unsetenv("TEST_FILTER");
    TestState saved = test_state_;
    test_state_.quiet = 1;
    RUN(no_checks);
    RUN(skips);
    TestState got = test_state_;
    test_state_ = saved;
    CHECK_INT(got.failed, saved.failed + 1);
    CHECK_INT(got.skipped, saved.skipped + 1);
    CHECK_INT(got.passed, saved.passed);

    setenv("TEST_FILTER", "strbuf,utf8", 1);
    CHECK(test_selected_("test_strbuf"));
    CHECK(test_selected_("test_utf8_repair"));
    CHECK(!test_selected_("test_hash"));
    CHECK(!test_selected_("utf"));
    setenv("TEST_FILTER", "", 1);
    CHECK(test_selected_("test_hash"));
    if (keep)
        setenv("TEST_FILTER", keep, 1);
    else
        unsetenv("TEST_FILTER");
    free(keep);
}

int main(void)
{
    RUN(test_harness);
    RUN(test_errors);
    RUN(test_strbuf);
    RUN(test_utf8);
    RUN(test_utf8_repair);
    RUN(test_count_lines);
    RUN(test_hash);
    RUN(test_strmap);
    RUN(test_i64map);
    return test_summary();
}
