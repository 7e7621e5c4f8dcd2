/*
 * test_chunk_text.c - the Python chunker (index/chunk/chunk.c) on awkward text:
 * CRLF, form feeds and lone CRs, syntax errors, empty and comment-only
 * sources; windows of long units; deep nesting.
 */
#include "chunk_util.h"

static const ChunkCase cases[] = {
    {"CRLF",
     "import os\r\n"
     "\r\n"
     "def f(a,\r\n"
     "      b):\r\n"
     "    \"\"\"Doc.\"\"\"\r\n"
     "    return a\r\n"
     "\r\n"
     "class C:\r\n"
     "    x = 1\r\n"
     "\r\n"
     "    def m(self):\r\n"
     "        pass\r\n",
     0, 0,
     (const ExpChunk[]){
         M(1, 1, NULL),
         {IDX_KIND_FUNCTION, 3, 6, 0, "f", "def f(a, b):", "Doc.", -1},
         {IDX_KIND_CLASS, 8, 9, 0, "C", "class C:", NULL, -1},
         {IDX_KIND_METHOD, 11, 12, 0, "C.m", "def m(self):", NULL, 2},
         END_CHUNKS,
     },
     (const ExpRef[]){
         IMPORT(0, 1, 0, "os", NULL, "os"),
         END_REFS,
     }},

    {"form feeds and lone CR",
     "import os\n"        /* 1 */
     "\f\n"               /* 2 */
     "def f():\n"         /* 3 */
     "    x = 1\f\n"      /* 4 */
     "    return x\n"     /* 5 */
     "\f\n"               /* 6 */
     "\fdef g():\n"       /* 7 */
     "    s = \"a\rb\"\n" /* 8 */
     "    return s\n"     /* 9 */
     "# c\rd\n"           /* 10 */
     "class K:\n"         /* 11 */
     "    pass\n",        /* 12 */
     0, 0,
     (const ExpChunk[]){
         M(1, 1, NULL),
         {IDX_KIND_FUNCTION, 3, 5, 0, "f", "def f():", NULL, -1},
         {IDX_KIND_FUNCTION, 7, 9, 0, "g", "def g():", NULL, -1},
         {IDX_KIND_CLASS, 11, 12, 0, "K", "class K:", NULL, -1},
         END_CHUNKS,
     },
     (const ExpRef[]){
         IMPORT(0, 1, 0, "os", NULL, "os"),
         END_REFS,
     }},

    {"syntax errors",
     "import os\n"        /* 1 */
     "\n"                 /* 2 */
     "def broken(:\n"     /* 3 */
     "    pass\n"         /* 4 */
     "\n"                 /* 5 */
     "x = [1, 2\n"        /* 6 */
     "\n"                 /* 7 */
     "def ok():\n"        /* 8 */
     "    return 1\n"     /* 9 */
     "\n"                 /* 10 */
     "class C:\n"         /* 11 */
     "    def m(self):\n" /* 12 */
     "        pass\n",    /* 13 */
     0, 1,
     (const ExpChunk[]){
         M(1, 1, NULL),
         {IDX_KIND_FUNCTION, 3, 4, 0, "broken", "def broken(:", NULL, -1},
         M(6, 6, NULL),
         {IDX_KIND_FUNCTION, 8, 9, 0, "ok", "def ok():", NULL, -1},
         {IDX_KIND_CLASS, 11, 11, 0, "C", "class C:", NULL, -1},
         {IDX_KIND_METHOD, 12, 13, 0, "C.m", "def m(self):", NULL, 4},
         END_CHUNKS,
     },
     (const ExpRef[]){
         IMPORT(0, 1, 0, "os", NULL, "os"),
         END_REFS,
     }},

    {"syntax error inside a function",
     "def f():\n"         /* 1 */
     "    x = (1,\n"      /* 2 */
     "\n"                 /* 3 */
     "def g():\n"         /* 4 */
     "    return h()\n"   /* 5 */
     "\n"                 /* 6 */
     "class K:\n"         /* 7 */
     "    def a(self):\n" /* 8 */
     "        y = ]\n"    /* 9 */
     "    def b(self):\n" /* 10 */
     "        pass\n",    /* 11 */
     0, 1,
     (const ExpChunk[]){
         {IDX_KIND_FUNCTION, 1, 2, 0, "f", "def f():", NULL, -1},
         {IDX_KIND_FUNCTION, 4, 5, 0, "g", "def g():", NULL, -1},
         {IDX_KIND_CLASS, 7, 7, 0, "K", "class K:", NULL, -1},
         {IDX_KIND_METHOD, 8, 9, 0, "K.a", "def a(self):", NULL, 2},
         {IDX_KIND_METHOD, 10, 11, 0, "K.b", "def b(self):", NULL, 2},
         END_CHUNKS,
     },
     (const ExpRef[]){
         CALL(1, 5, "h"),
         END_REFS,
     }},

    /* tree-sitter gives up on the whole file (an ERROR root): class A stays
     * module code, what follows its last line is re-parsed and chunked */
    {"syntax error, ERROR root",
     "import os\n"                 /* 1 */
     "\n"                          /* 2 */
     "class A(Base):\n"            /* 3 */
     "    x = 1\n"                 /* 4 */
     "\n"                          /* 5 */
     "    def f(self):\n"          /* 6 */
     "        for u in y:\n"       /* 7 */
     "            try:\n"          /* 8 */
     "                return x:\n" /* 9 */
     "                pass\n"      /* 10 */
     "        return 2\n"          /* 11 */
     "\n"                          /* 12 */
     "class B:\n"                  /* 13 */
     "    def g(self):\n"          /* 14 */
     "        pass\n"              /* 15 */
     "\n"                          /* 16 */
     "@deco\n"                     /* 17 */
     "def h():\n"                  /* 18 */
     "    pass\n",                 /* 19 */
     0, 1,
     (const ExpChunk[]){
         M(1, 11, NULL),
         {IDX_KIND_CLASS, 13, 13, 0, "B", "class B:", NULL, -1},
         {IDX_KIND_METHOD, 14, 15, 0, "B.g", "def g(self):", NULL, 1},
         {IDX_KIND_FUNCTION, 17, 19, 0, "h", "def h():", NULL, -1},
         END_CHUNKS,
     },
     (const ExpRef[]){
         IMPORT(0, 1, 0, "os", NULL, "os"),
         VALUE(3, 17, "deco"),
         END_REFS,
     }},

    {"empty", "", 0, 0, (const ExpChunk[]){END_CHUNKS}, (const ExpRef[]){END_REFS}},
    {"blank lines", "\n\n   \n\t\n", 0, 0, (const ExpChunk[]){END_CHUNKS},
     (const ExpRef[]){END_REFS}},
    {"only comments", "# one\n#two\n\n    # three\n# four", 0, 0, (const ExpChunk[]){END_CHUNKS},
     (const ExpRef[]){END_REFS}},
};

static void test_table(void)
{
    run_cases(cases, sizeof cases / sizeof cases[0]);
}

static void test_case_invariants(void)
{
    cases_invariants(cases, sizeof cases / sizeof cases[0]);
}

/* ---------------------------------------------------------------- long units */

/* A 230-line function: the first cut moves back to the multi-line statement
 * at 95, the second finds no statement start in 165..195 (a list literal
 * spans 160..200) and cuts at 100 lines. */
static void test_long_function(void)
{
    StrBuf sb;
    sb_init(&sb);
    sb_adds(&sb, "def big():\n");                    /* 1 */
    sb_adds(&sb, "    \"\"\"Big function.\"\"\"\n"); /* 2 */
    for (int l = 3; l <= 94; l++)
        sb_adds(&sb, "    x += 1\n");
    sb_adds(&sb, "    total = compute(\n"); /* 95 */
    for (int l = 96; l <= 104; l++)
        sb_adds(&sb, "        1,\n");
    sb_adds(&sb, "    )\n"); /* 105 */
    for (int l = 106; l <= 159; l++)
        sb_adds(&sb, "    x += 1\n");
    sb_adds(&sb, "    items = [\n"); /* 160 */
    for (int l = 161; l <= 199; l++)
        sb_adds(&sb, "        1,\n");
    sb_adds(&sb, "    ]\n"); /* 200 */
    for (int l = 201; l <= 229; l++)
        sb_adds(&sb, "    x += 1\n");
    sb_adds(&sb, "    return x\n"); /* 230 */
    sb_adds(&sb, "\n");             /* 231 */
    sb_adds(&sb, "y = big()\n");    /* 232 */

    Chunker *ck = idx_chunker_new();
    ChunkSet s = {0};
    CHECK_INT(idx_chunker_run_lang(ck, idx_lang_by_name("python"), sb.buf, sb.len, 0, &s, NULL),
              CR_OK);
    const ExpChunk xc[] = {
        {IDX_KIND_FUNCTION, 1, 94, 1, "big", "def big():", "Big function.", -1},
        {IDX_KIND_FUNCTION, 95, 194, 2, "big", "def big():", "Big function.", -1},
        {IDX_KIND_FUNCTION, 195, 230, 3, "big", "def big():", "Big function.", -1},
        M(232, 232, NULL),
        END_CHUNKS,
    };
    const ExpRef xr[] = {CALL(1, 95, "compute"), CALL(3, 232, "big"), END_REFS};
    check_set("long function", sb.buf, sb.len, 0, &s, xc, xr);
    idx_chunk_set_release(&s);
    idx_chunker_free(ck);
    sb_release(&sb);
}

/* A class whose header run is 152 lines (a dict literal over 98..103 moves
 * the cut back), then a method, then one more class-level line. */
static void test_long_class_run(void)
{
    StrBuf sb;
    sb_init(&sb);
    sb_adds(&sb, "class Config:\n");             /* 1 */
    sb_adds(&sb, "    \"\"\"Settings.\"\"\"\n"); /* 2 */
    for (int l = 3; l <= 97; l++)
        sb_addf(&sb, "    A%d = %d\n", l, l);
    sb_adds(&sb, "    TABLE = {\n"); /* 98 */
    for (int l = 99; l <= 102; l++)
        sb_addf(&sb, "        %d: %d,\n", l, l);
    sb_adds(&sb, "    }\n"); /* 103 */
    for (int l = 104; l <= 152; l++)
        sb_addf(&sb, "    B%d = %d\n", l, l);
    sb_adds(&sb, "\n");                       /* 153 */
    sb_adds(&sb, "    def m(self):\n");       /* 154 */
    sb_adds(&sb, "        return self.A3\n"); /* 155 */
    sb_adds(&sb, "\n");                       /* 156 */
    sb_adds(&sb, "    LAST = m\n");           /* 157 */

    Chunker *ck = idx_chunker_new();
    ChunkSet s = {0};
    CHECK_INT(idx_chunker_run_lang(ck, idx_lang_by_name("python"), sb.buf, sb.len, 0, &s, NULL),
              CR_OK);
    const ExpChunk xc[] = {
        {IDX_KIND_CLASS, 1, 97, 1, "Config", "class Config:", "Settings.", -1},
        {IDX_KIND_CLASS, 98, 152, 2, "Config", "class Config:", "Settings.", -1},
        {IDX_KIND_METHOD, 154, 155, 0, "Config.m", "def m(self):", NULL, 0},
        {IDX_KIND_CLASS, 157, 157, 0, "Config", "class Config:", NULL, -1},
        END_CHUNKS,
    };
    const ExpRef xr[] = {END_REFS};
    check_set("long class run", sb.buf, sb.len, 0, &s, xc, xr);
    idx_chunk_set_release(&s);
    idx_chunker_free(ck);
    sb_release(&sb);
}

/* ---------------------------------------------------------------- deep nesting */

/* Parentheses and calls nested n deep, then a function calling g. */
static void deep_source(StrBuf *sb, int n)
{
    sb_reset(sb);
    sb_adds(sb, "x = ");
    for (int i = 0; i < n; i++)
        sb_addc(sb, '(');
    sb_addc(sb, '1');
    for (int i = 0; i < n; i++)
        sb_addc(sb, ')');
    sb_adds(sb, "\ndef f():\n    return g(");
    for (int i = 0; i < n; i++)
        sb_adds(sb, "g(");
    for (int i = 0; i < n + 1; i++)
        sb_addc(sb, ')');
    sb_adds(sb, "\n");
}

static void test_deep_nesting(void)
{
    Chunker *ck = idx_chunker_new();
    StrBuf sb;
    sb_init(&sb);

    deep_source(&sb, 1000);
    ChunkSet s = {0};
    CHECK_INT(idx_chunker_run_lang(ck, idx_lang_by_name("python"), sb.buf, sb.len, 0, &s, NULL),
              CR_OK);
    const ExpChunk xc[] = {
        M(1, 1, NULL),
        {IDX_KIND_FUNCTION, 2, 3, 0, "f", "def f():", NULL, -1},
        END_CHUNKS,
    };
    const ExpRef xr[] = {CALL(1, 3, "g"), END_REFS};
    check_set("1,000 nested parentheses", sb.buf, sb.len, 0, &s, xc, xr);
    idx_chunk_set_release(&s);

    /* 10,000 deep: past the nesting bounds (chunk_ts.c), refused whole */
    deep_source(&sb, 10000);
    ErrInfo e = {0};
    CHECK_INT(idx_chunker_run_lang(ck, idx_lang_by_name("python"), sb.buf, sb.len, 0, &s, &e),
              CR_ETOOBIG);
    CHECK_INT(s.n_chunks, 0);
    idx_chunk_set_release(&s);

    sb_reset(&sb);
    for (int i = 0; i < 3000; i++) {
        for (int k = 0; k < i; k++)
            sb_addc(&sb, ' ');
        sb_adds(&sb, "if x:\n");
    }
    for (int k = 0; k < 3000; k++)
        sb_addc(&sb, ' ');
    sb_adds(&sb, "pass\n");
    sb_adds(&sb, "def after():\n    pass\n");
    CHECK_INT(idx_chunker_run_lang(ck, idx_lang_by_name("python"), sb.buf, sb.len, 0, &s, NULL),
              CR_OK);
    check_invariants("3,000 nested if blocks", sb.buf, sb.len, 0, &s);
    CHECK(s.n_chunks > 0);
    idx_chunk_set_release(&s);

    sb_release(&sb);
    idx_chunker_free(ck);
}

/* A parse from the tree a parser kept of its last text (a save's,
 * idx_ts_parse_keep) is the tree a fresh parse makes: for an edit at the
 * end, in the middle, a deletion, a line made broken and mended, another
 * file altogether and an empty one, in Python and in C. */
static void keep_sequence(const char *lang_name, const char *const *texts)
{
    const IdxLang *lang = idx_lang_by_name(lang_name);
    CHECK(lang && lang->grammar);
    if (!lang || !lang->grammar) return;
    TSParser *kept = ts_parser_new(), *fresh = ts_parser_new();
    ts_parser_set_language(kept, lang->grammar());
    ts_parser_set_language(fresh, lang->grammar());
    TsKeep keep = {0};
    for (size_t i = 0; texts[i]; i++) {
        TSTree *a = NULL, *b = NULL;
        ErrInfo e = {0};
        size_t len = strlen(texts[i]);
        CHECK_INT(idx_ts_parse_keep(kept, &keep, texts[i], len, &a, &e), CR_OK);
        CHECK_INT(idx_ts_parse(fresh, texts[i], len, &b, &e), CR_OK);
        CHECK(keep.tree != NULL && keep.len == len);
        if (a && b) {
            char *sa = ts_node_string(ts_tree_root_node(a));
            char *sb = ts_node_string(ts_tree_root_node(b));
            CHECK_STR(sa, sb);
            CHECK_INT(ts_node_end_byte(ts_tree_root_node(a)), (int)len);
            free(sa);
            free(sb);
        }
        if (a) ts_tree_delete(a);
        if (b) ts_tree_delete(b);
    }
    idx_ts_keep_release(&keep);
    CHECK(keep.tree == NULL && keep.src == NULL);
    ts_parser_delete(kept);
    ts_parser_delete(fresh);
}

static void test_kept_tree_parses_as_fresh(void)
{
    static const char *const py[] = {
        "def a(x):\n    return x\n\nclass B:\n    def m(self):\n        return a(1)\n",
        "def a(x):\n    return x\n\nclass B:\n    def m(self):\n        return a(1)\n\n"
        "def added(y):\n    return y\n",
        "def a(x):\n    if x:\n        return 2\n    return x\n\nclass B:\n    def m(self):\n"
        "        return a(1)\n\ndef added(y):\n    return y\n",
        "def a(x):\n    return x\n\nclass B:\n    def m(self):\n        return a((1)\n",
        "def a(x):\n    return x\n\nclass B:\n    pass\n",
        "import os\n\nVALUE = os.sep\n",
        "",
        "def a(x):\n    return x\n",
        NULL};
    static const char *const c[] = {
        "int f(int x) { return x + 1; }\nstruct s { int a; };\n",
        "int f(int x) { return x + 1; }\nint g(void) { return f(2); }\nstruct s { int a; };\n",
        "int f(int x) { return x + 1; }\nint g(void) { return f(2; }\nstruct s { int a; };\n",
        "#define M(x) (x)\nstatic int h;\n", NULL};
    keep_sequence("python", py);
    keep_sequence("c", c);
}

/* A text over 1 MiB parses, and its tree is not kept (a store keeps a
 * bounded amount between saves); the next parse starts afresh. */
static void test_kept_tree_bounded(void)
{
    const IdxLang *lang = idx_lang_by_name("python");
    CHECK(lang && lang->grammar);
    if (!lang || !lang->grammar) return;
    TSParser *p = ts_parser_new();
    ts_parser_set_language(p, lang->grammar());
    const char line[] = "x = 1\n";
    size_t n = ((size_t)1 << 20) / (sizeof line - 1) + 1, len = n * (sizeof line - 1);
    char *big = xmalloc(len + 1);
    for (size_t i = 0; i < n; i++)
        memcpy(big + i * (sizeof line - 1), line, sizeof line - 1);
    big[len] = 0;
    TsKeep keep = {0};
    TSTree *t = NULL;
    ErrInfo e = {0};
    CHECK_INT(idx_ts_parse_keep(p, &keep, "y = 2\n", 6, &t, &e), CR_OK);
    CHECK(keep.tree != NULL);
    if (t) ts_tree_delete(t);
    t = NULL;
    CHECK_INT(idx_ts_parse_keep(p, &keep, big, len, &t, &e), CR_OK);
    CHECK(t != NULL && keep.tree == NULL && keep.src == NULL);
    if (t) ts_tree_delete(t);
    idx_ts_keep_release(&keep);
    free(big);
    ts_parser_delete(p);
}

int main(void)
{
    RUN(test_table);
    RUN(test_case_invariants);
    RUN(test_long_function);
    RUN(test_long_class_run);
    RUN(test_deep_nesting);
    RUN(test_kept_tree_parses_as_fresh);
    RUN(test_kept_tree_bounded);
    return test_summary();
}
