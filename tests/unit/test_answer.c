#include "test.h"
#include "ws.h"

#include <jansson.h>
#include <stdlib.h>

/* A hand-built answer: two context items, one citation, one rejection. */
static void make_answer(RtvAnswer *a)
{
    memset(a, 0, sizeof *a);
    a->answer = xstrdup("See [pkg/my mod.py:3-4].");
    a->mode = RTV_MODE_EXTRACTIVE;
    a->n_items = 2;
    a->items = xcalloc(2, sizeof *a->items);
    RtvItem *it = &a->items[0];
    it->chunk.path = xstrdup("pkg/my mod.py");
    it->chunk.module = xstrdup("pkg.my mod");
    it->chunk.symbol = xstrdup("Map.match");
    it->start_line = 2;
    it->end_line = 9;
    it->score = 1.0;
    it->via = RTV_VIA_BM25 | RTV_VIA_GRAPH;
    it->text = xstrdup("...");
    it = &a->items[1];
    it->chunk.path = xstrdup("pkg/__init__.py");
    it->chunk.module = xstrdup("pkg");
    it->chunk.symbol = xstrdup("");
    it->start_line = 1;
    it->end_line = 1;
    it->score = 0.25;
    it->via = RTV_VIA_DENSE;
    a->n_citations = 1;
    a->citations = xcalloc(1, sizeof *a->citations);
    a->citations[0].path = xstrdup("pkg/my mod.py");
    a->citations[0].start_line = 3;
    a->citations[0].end_line = 4;
    a->citations[0].symbol = xstrdup("Map.match");
    a->citations[0].verified = 1;
    a->citations[0].source = "auto";
    a->citations[0].origin = "fallback";
    a->n_rejected = 1;
    a->rejected = xcalloc(1, sizeof *a->rejected);
    a->rejected[0].text = xstrdup("[gone.py:1-2]");
    a->rejected[0].reason = "file-not-found";
    a->timings.bm25_ms = 1.5;
    a->timings.total_ms = 3.25;
}

static json_int_t geti(json_t *o, const char *path)
{
    json_t *v = json_object_get(o, path);
    return json_is_integer(v) ? json_integer_value(v) : -999;
}

static const char *gets(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static void test_answer_json(void)
{
    RtvAnswer a;
    make_answer(&a);
    json_t *o = ws_answer_json(&a, "/srv/ws");
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    json_error_t err;
    json_t *j = json_loads(s, 0, &err);
    CHECK(json_is_object(j));
    CHECK_INT(json_object_size(j), 8);
    CHECK_STR(gets(j, "answer"), "See [pkg/my mod.py:3-4].");
    CHECK_STR(gets(j, "mode"), "extractive");
    CHECK_STR(gets(j, "match"), "strong");
    CHECK_STR(gets(j, "matchReason"), "");

    json_t *cits = json_object_get(j, "citations");
    CHECK_INT(json_array_size(cits), 1);
    json_t *c = json_array_get(cits, 0);
    CHECK_STR(gets(c, "uri"), "file:///srv/ws/pkg/my%20mod.py");
    CHECK_STR(gets(c, "path"), "pkg/my mod.py");
    CHECK_INT(geti(c, "startLine"), 3);
    CHECK_INT(geti(c, "endLine"), 4);
    CHECK_STR(gets(c, "symbol"), "Map.match");
    CHECK(json_is_true(json_object_get(c, "verified")));
    CHECK_STR(gets(c, "source"), "auto");
    CHECK_STR(gets(c, "origin"), "fallback");
    json_t *range = json_object_get(c, "range");
    CHECK_INT(geti(json_object_get(range, "start"), "line"), 2);
    CHECK_INT(geti(json_object_get(range, "start"), "character"), 0);
    CHECK_INT(geti(json_object_get(range, "end"), "line"), 4);
    CHECK_INT(geti(json_object_get(range, "end"), "character"), 0);

    json_t *rej = json_object_get(j, "rejected");
    CHECK_INT(json_array_size(rej), 1);
    CHECK_STR(gets(json_array_get(rej, 0), "text"), "[gone.py:1-2]");
    CHECK_STR(gets(json_array_get(rej, 0), "reason"), "file-not-found");

    json_t *ctx = json_object_get(j, "context");
    CHECK_INT(json_array_size(ctx), 2);
    json_t *x = json_array_get(ctx, 0);
    CHECK_STR(gets(x, "path"), "pkg/my mod.py");
    CHECK_INT(geti(x, "startLine"), 2);
    CHECK_INT(geti(x, "endLine"), 9);
    CHECK_STR(gets(x, "symbol"), "Map.match");
    CHECK(json_is_number(json_object_get(x, "score")));
    CHECK(json_number_value(json_object_get(x, "score")) == 1.0);
    json_t *via = json_object_get(x, "via");
    CHECK_INT(json_array_size(via), 2);
    CHECK_STR(json_string_value(json_array_get(via, 0)), "bm25");
    CHECK_STR(json_string_value(json_array_get(via, 1)), "graph");
    x = json_array_get(ctx, 1);
    CHECK_STR(gets(x, "symbol"), "pkg"); /* module code goes by its module */
    CHECK_STR(json_string_value(json_array_get(json_object_get(x, "via"), 0)), "dense");
    CHECK(json_number_value(json_object_get(x, "score")) == 0.25);
    CHECK(json_object_get(x, "text") == NULL); /* the packed text stays server-side */

    json_t *t = json_object_get(j, "timings");
    static const char *const keys[] = {"bm25_ms", "dense_ms",  "graph_ms", "pack_ms",
                                       "llm_ms",  "verify_ms", "total_ms"};
    CHECK_INT(json_object_size(t), 7);
    for (size_t i = 0; i < 7; i++)
        CHECK(json_is_number(json_object_get(t, keys[i])));
    CHECK(json_number_value(json_object_get(t, "bm25_ms")) == 1.5);
    CHECK(json_number_value(json_object_get(t, "total_ms")) == 3.25);
    CHECK(json_number_value(json_object_get(t, "llm_ms")) == 0.0);

    json_decref(j);
    free(s);
    rtv_answer_release(&a);
}

static void test_empty_and_invalid_utf8(void)
{
    RtvAnswer a = {0};
    a.answer = xstrdup("bad \xFF byte \xC3");
    a.mode = RTV_MODE_LLM;
    a.timings.total_ms = 1.0 / 0.0; /* not representable in JSON */
    json_t *j = ws_answer_json(&a, "/w");
    /* json_text: stray bytes escaped (%XX), as a path's are, not U+FFFD */
    CHECK_STR(gets(j, "answer"), "bad %FF byte %C3");
    CHECK_STR(gets(j, "mode"), "llm");
    CHECK_INT(json_array_size(json_object_get(j, "citations")), 0);
    CHECK(json_is_array(json_object_get(j, "rejected")));
    CHECK(json_is_array(json_object_get(j, "context")));
    CHECK(json_number_value(json_object_get(json_object_get(j, "timings"), "total_ms")) == 0.0);
    json_decref(j);
    rtv_answer_release(&a);
}

int main(void)
{
    RUN(test_answer_json);
    RUN(test_empty_and_invalid_utf8);
    return test_summary();
}
