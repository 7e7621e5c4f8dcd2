/* Anchors of verified citations: the hash of their lines, re-finding them
 * in the file as it is now (unchanged, shifted, moved, lost), and a
 * citation's own anchor after lines are added above. */
#include "verify_util.h"

#include <stdlib.h>

#define CLS                                                                                        \
    "import os\n\nclass A:\n    def f(self):\n        return 1\n\n"                                \
    "    def g(self):\n        return 2\n"

static void test_anchor_hash(void)
{
    char h1[17], h2[17];
    idx_hash_text("a\nb\n", 4, h1);
    vfy_anchor_hash("a\nb\n", 4, h2);
    CHECK_STR(h2, h1);
    vfy_anchor_hash("a\r\nb\r\n", 6, h2);
    CHECK_STR(h2, h1);
    vfy_anchor_hash("a\nb", 3, h2);
    CHECK_STR(h2, h1);
    vfy_anchor_hash("a\nc\n", 4, h2);
    CHECK(strcmp(h1, h2) != 0);
    vfy_anchor_hash("", 0, h2);
    CHECK_INT(strlen(h2), 16);
    CHECK_STR(vfy_anchor_status_name(VFY_ANCHOR_UNCHANGED), "unchanged");
    CHECK_STR(vfy_anchor_status_name(VFY_ANCHOR_SHIFTED), "shifted");
    CHECK_STR(vfy_anchor_status_name(VFY_ANCHOR_MOVED), "moved");
    CHECK_STR(vfy_anchor_status_name(VFY_ANCHOR_LOST), "lost");
}

static char *crlf(const char *s)
{
    StrBuf sb;
    sb_init(&sb);
    for (; *s; s++) {
        if (*s == '\n') sb_addc(&sb, '\r');
        sb_addc(&sb, *s);
    }
    return sb_detach(&sb, NULL);
}

static void test_anchor_resolve(void)
{
    /* the anchor of A.f, lines 4-5 of CLS */
    VfyAnchor a = {.path = "m.py", .start_line = 4, .end_line = 5, .symbol = "A.f"};
    vfy_anchor_hash("    def f(self):\n        return 1\n", 33, a.hash);
    static const struct {
        const char *text;
        VfyAnchorStatus status;
        uint32_t a, b;
    } cases[] = {
        {CLS, VFY_ANCHOR_UNCHANGED, 4, 5},
        {"# one\n# two\n" CLS, VFY_ANCHOR_SHIFTED, 6, 7},
        {CLS "\n\ndef h():\n    pass\n", VFY_ANCHOR_UNCHANGED, 4, 5},
        {"import os\nclass A:\n    def f(self):\n        return 1\n", VFY_ANCHOR_SHIFTED, 3, 4},
        /* a line inserted inside: the definition, header and body */
        {"import os\n\nclass A:\n    def f(self):\n        x = 0\n        return 1\n\n"
         "    def g(self):\n        return 2\n",
         VFY_ANCHOR_MOVED, 4, 6},
        /* the cited block edited */
        {"import os\n\nclass A:\n    def f(self):\n        return 42\n", VFY_ANCHOR_MOVED, 4, 5},
        /* moved far away, unchanged */
        {"import os\n\nclass B:\n    pass\n"
         "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"
         "class A:\n    def f(self):\n        return 1\n",
         VFY_ANCHOR_SHIFTED, 26, 27},
        /* edited, and two functions called f: the one in class A wins, far as it is */
        {"def f():\n    return 0\n\n\n\n\n\n\nclass A:\n    # note\n    async def f(self):\n"
         "        return 9\n",
         VFY_ANCHOR_MOVED, 11, 12},
        /* renamed */
        {"import os\n\nclass A:\n    def f2(self):\n        return 3\n", VFY_ANCHOR_LOST, 0, 0},
        /* emptied */
        {"", VFY_ANCHOR_LOST, 0, 0},
        /* shorter than the citation */
        {"x\n", VFY_ANCHOR_LOST, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        VfyAnchorMatch m;
        int before = test_state_.failed_checks;
        CHECK_INT(vfy_anchor_resolve(&a, cases[i].text, strlen(cases[i].text), &m),
                  cases[i].status);
        CHECK_INT(m.status, cases[i].status);
        CHECK_INT(m.start_line, cases[i].a);
        CHECK_INT(m.end_line, cases[i].b);
        /* the same with CRLF line ends */
        char *t = crlf(cases[i].text);
        CHECK_INT(vfy_anchor_resolve(&a, t, strlen(t), &m), cases[i].status);
        CHECK_INT(m.start_line, cases[i].a);
        CHECK_INT(m.end_line, cases[i].b);
        free(t);
        if (test_state_.failed_checks != before) fprintf(stderr, "  case %zu\n", i);
    }

    /* A multi-line header; the body ends before the next statement at its level. */
    const char *t = "x = 1\n\ndef h(\n    a,\n    b,\n):\n    return a\n\n# done\ny = 2\n";
    VfyAnchor ah = {.path = "m.py", .start_line = 1, .end_line = 2, .symbol = "h"};
    vfy_anchor_hash("gone\n", 5, ah.hash);
    VfyAnchorMatch m;
    CHECK_INT(vfy_anchor_resolve(&ah, t, strlen(t), &m), VFY_ANCHOR_MOVED);
    CHECK_INT(m.start_line, 3);
    CHECK_INT(m.end_line, 7);

    /* Module code is named after its module: no definition is looked for. */
    VfyAnchor am = {.path = "pkg/h.py", .start_line = 1, .end_line = 2, .symbol = "pkg.h"};
    vfy_anchor_hash("gone\n", 5, am.hash);
    const char *th = "def h():\n    pass\n";
    CHECK_INT(vfy_anchor_resolve(&am, th, strlen(th), &m), VFY_ANCHOR_LOST);
    am.path = "pkg/h/__init__.py";
    CHECK_INT(vfy_anchor_resolve(&am, th, strlen(th), &m), VFY_ANCHOR_LOST);
    am.path = "other.py";
    CHECK_INT(vfy_anchor_resolve(&am, th, strlen(th), &m), VFY_ANCHOR_MOVED);

    /* No symbol (module code): content gone means lost. */
    ah.symbol = "";
    CHECK_INT(vfy_anchor_resolve(&ah, t, strlen(t), &m), VFY_ANCHOR_LOST);
    ah.symbol = NULL;
    CHECK_INT(vfy_anchor_resolve(&ah, t, strlen(t), &m), VFY_ANCHOR_LOST);

    /* The last line without '\n', and NUL bytes in the buffer. */
    VfyAnchor al = {.start_line = 2, .end_line = 2, .symbol = ""};
    vfy_anchor_hash("b\0c", 3, al.hash);
    CHECK_INT(vfy_anchor_resolve(&al, "a\nb\0c", 5, &m), VFY_ANCHOR_UNCHANGED);
    CHECK_INT(vfy_anchor_resolve(&al, "a\nb\0c\nd\n", 8, &m), VFY_ANCHOR_UNCHANGED);
    CHECK_INT(vfy_anchor_resolve(&al, "z\na\nb\0c", 7, &m), VFY_ANCHOR_SHIFTED);
    CHECK_INT(m.start_line, 3);

    /* A bad anchor: no crash, lost. */
    VfyAnchor bad = {.path = "m.py", .start_line = 5, .end_line = 2, .symbol = "A.f", .hash = "zz"};
    CHECK_INT(vfy_anchor_resolve(&bad, CLS, strlen(CLS), &m), VFY_ANCHOR_MOVED);
    bad.symbol = ".";
    CHECK_INT(vfy_anchor_resolve(&bad, CLS, strlen(CLS), &m), VFY_ANCHOR_LOST);
}

/* A moved citation is re-found by its language's own definition shape (the
 * index's chunker), in every language: never by Python's def/class alone. */
static void test_anchor_languages(void)
{
    static const struct {
        const char *path, *symbol, *text;
        uint32_t a, b;
    } cases[] = {
        {"main.c", "f",
         "#include <x.h>\n\nint g(void) { return 0; }\n\nstatic int f(int a)\n{\n"
         "    a += 2;\n    return a;\n}\n",
         5, 9},
        {"db/db.cc", "DB.Get",
         "namespace x {\nclass DB {\n public:\n  int Get(int k) {\n    k++;\n    return k;\n"
         "  }\n};\n}\n",
         4, 7},
        {"gin.go", "Engine.Run",
         "package gin\n\nfunc Run() {}\n\nfunc (e *Engine) Run(addr string) error {\n"
         "\taddr += \"x\"\n\treturn nil\n}\n",
         5, 8},
        {"src/lib.rs", "Value.get",
         "fn get() {}\n\nimpl Value {\n    pub fn get(&self) -> i32 {\n        let x = 1;\n"
         "        x\n    }\n}\n",
         4, 7},
        {"A.java", "A.run",
         "package p;\n\nclass A {\n    void run() {\n        int x = 1;\n    }\n}\n", 4, 6},
        {"src/x.ts", "Sub.map",
         "export function map() {}\n\nexport class Sub {\n  map(x: number): number {\n"
         "    return x + 1;\n  }\n}\n",
         4, 6},
        {"lib/y.js", "load", "const a = 1;\n\nfunction load(p) {\n  return p;\n}\n", 3, 5},
        {"bin/tool", "main", "#!/usr/bin/env python3\nimport os\n\ndef main():\n    os.exit(0)\n",
         4, 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        VfyAnchor a = {
            .path = cases[i].path, .start_line = 1, .end_line = 2, .symbol = cases[i].symbol};
        vfy_anchor_hash("gone\n", 5, a.hash);
        VfyAnchorMatch m;
        int before = test_state_.failed_checks;
        CHECK_INT(vfy_anchor_resolve(&a, cases[i].text, strlen(cases[i].text), &m),
                  VFY_ANCHOR_MOVED);
        CHECK_INT(m.start_line, cases[i].a);
        CHECK_INT(m.end_line, cases[i].b);
        if (test_state_.failed_checks != before)
            fprintf(stderr, "  case %zu: %s %s\n", i, cases[i].path, cases[i].symbol);
    }
    /* an unknown language, or the module's own code: nothing to re-find */
    VfyAnchor u = {.path = "x.unknown", .start_line = 1, .end_line = 1, .symbol = "f"};
    vfy_anchor_hash("gone\n", 5, u.hash);
    VfyAnchorMatch m;
    const char *t = "def f():\n    pass\n";
    CHECK_INT(vfy_anchor_resolve(&u, t, strlen(t), &m), VFY_ANCHOR_LOST);
    u.path = "pkg/gin.go";
    u.symbol = "pkg";
    t = "package pkg\n\nfunc pkg() {}\n";
    CHECK_INT(vfy_anchor_resolve(&u, t, strlen(t), &m), VFY_ANCHOR_LOST);
}

/* A verified citation's anchor re-finds its lines in the file as it is,
 * and after lines are added above. */
static void test_citation_anchor(void)
{
    VfySource src = fake_source();
    VfyResult r;
    CHECK_INT(vfy_check(&src, "see `pkg/a.py:4-5`", 18, ctx, 2, VFY_AUTHOR_MODEL, &r, NULL), CR_OK);
    CHECK_INT(r.n_citations, 1);
    if (r.n_citations == 1) {
        VfyAnchor a;
        VfyAnchorMatch m;
        vfy_citation_anchor(&r.citations[0], &a);
        CHECK_STR(a.path, "pkg/a.py");
        CHECK_STR(a.symbol, "A.f");
        CHECK_INT(a.start_line, 4);
        CHECK_INT(vfy_anchor_resolve(&a, A_PY, strlen(A_PY), &m), VFY_ANCHOR_UNCHANGED);
        const char *edited = "new\n" A_PY;
        CHECK_INT(vfy_anchor_resolve(&a, edited, strlen(edited), &m), VFY_ANCHOR_SHIFTED);
        CHECK_INT(m.start_line, 5);
        CHECK_INT(m.end_line, 6);
    }
    vfy_result_release(&r);
}

int main(void)
{
    RUN(test_anchor_hash);
    RUN(test_anchor_resolve);
    RUN(test_anchor_languages);
    RUN(test_citation_anchor);
    return test_summary();
}
